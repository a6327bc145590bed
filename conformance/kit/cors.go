package kit

import (
	"net/http"
	"slices"
	"strings"
)

// corsRules: what a page on another origin needs (the Fetch standard's CORS protocol). They run
// only against a server that allows the kit's origin.
func corsRules() []Rule {
	const fetch = "Fetch standard §3.2 (CORS protocol)"
	return []Rule{
		{
			ID: "cors/allow-origin", Tier: Should, Source: fetch, Doc: docCORS, Needs: AllowedOrigin | OwnUsers,
			Requirement: "Every answer to the allowed origin, errors included, carries Access-Control-Allow-Origin with that origin or *.",
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				origin := c.run.cfg.Origin
				return every(func(x *reply) error {
					if allowed := x.responseHeader.Get("Access-Control-Allow-Origin"); allowed != origin && allowed != "*" {
						return failf(x, "Access-Control-Allow-Origin: "+origin, describeHeader(x.responseHeader, "Access-Control-Allow-Origin")+" on "+x.summary())
					}
					return nil
				},
					c.get(collection, "Origin", origin),
					c.write(http.MethodPost, collection, c.validBody(), "Origin", origin),
					c.write(http.MethodPost, collection, `{"name":`, "Origin", origin),
					c.anonymously(http.MethodGet, collection, "Origin", origin),
					c.get(gone.path(), "Origin", origin),
					c.remove(collection, "Origin", origin))
			},
		},
		{
			ID: "cors/preflight", Tier: Should, Source: fetch, Doc: docCORS, Needs: AllowedOrigin,
			Requirement: "A preflight, OPTIONS with Origin and Access-Control-Request-Method and no token, answers 2xx with Access-Control-Allow-Origin.",
			check: func(c *Client) error {
				x := c.preflight(collection, http.MethodPost)
				if x.status/100 != 2 {
					return failf(x, "a 2xx, as a browser sends no token with a preflight", x.summary())
				}
				return x.headerPresent("Access-Control-Allow-Origin")
			},
		},
		{
			ID: "cors/preflight-allows-the-method", Tier: Should, Source: fetch, Doc: docCORS, Needs: AllowedOrigin | OwnUsers,
			Requirement: "A preflight's Access-Control-Allow-Methods names the method asked for: POST to /api/users, PUT, PATCH and DELETE to a user.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, p := range []struct{ path, method string }{
					{collection, http.MethodPost}, {u.path(), http.MethodPut}, {u.path(), http.MethodPatch}, {u.path(), http.MethodDelete},
				} {
					if x := c.preflight(p.path, p.method); !slices.Contains(listItems(x.responseHeader, "Access-Control-Allow-Methods"), "*") {
						if err := x.listHolds("Access-Control-Allow-Methods", p.method); err != nil {
							return err
						}
					}
				}
				return nil
			},
		},
		{
			ID: "cors/preflight-allows-authorization", Tier: Should, Source: fetch, Doc: docCORS, Needs: AllowedOrigin,
			Requirement: "A preflight's Access-Control-Allow-Headers names Authorization (which * does not cover) and Content-Type.",
			check: func(c *Client) error {
				x := c.preflight(collection, http.MethodPost)
				if err := x.listHolds("Access-Control-Allow-Headers", "Authorization"); err != nil {
					return err
				}
				if slices.Contains(listItems(x.responseHeader, "Access-Control-Allow-Headers"), "*") {
					return nil
				}
				return x.listHolds("Access-Control-Allow-Headers", "Content-Type")
			},
		},
		{
			ID: "cors/preflight-allows-conditional-headers", Tier: Reference, Source: docCORS, Doc: docCORS, Needs: AllowedOrigin,
			Requirement: "A preflight allows exactly the headers Authorization, Content-Type, If-Match, If-None-Match and X-Request-Id.",
			check: func(c *Client) error {
				return c.preflight(collection, http.MethodPost).listIs("Access-Control-Allow-Headers", "Authorization", "Content-Type", "If-Match", "If-None-Match", "X-Request-Id")
			},
		},
		{
			ID: "cors/preflight-allows-the-api-methods", Tier: Reference, Source: docCORS, Doc: docCORS, Needs: AllowedOrigin | OwnUsers,
			Requirement: "A preflight allows exactly the methods the API uses, GET, HEAD, POST, PUT, PATCH and DELETE, whatever the path under /api/.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return every(func(x *reply) error {
					return x.listIs("Access-Control-Allow-Methods", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
				}, c.preflight(collection, http.MethodPost), c.preflight(u.path(), http.MethodPatch), c.preflight(collection+"/undefined", http.MethodGet))
			},
		},
		{
			ID: "cors/exposes-headers", Tier: Reference, Source: docCORS, Doc: docCORS, Needs: AllowedOrigin | OwnUsers,
			Requirement: "Answers expose, by name, every header a client acts on: Location, Content-Location, ETag, Link, WWW-Authenticate, X-Request-Id, Allow, Accept-Post, Accept-Patch and Retry-After.",
			check: func(c *Client) error {
				origin := c.run.cfg.Origin
				return every(func(x *reply) error {
					return x.listIs("Access-Control-Expose-Headers", "Location", "Content-Location", "ETag", "Link", "WWW-Authenticate", "X-Request-Id",
						"Allow", "Accept-Post", "Accept-Patch", "Retry-After")
				}, c.get(collection, "Origin", origin), c.write(http.MethodPost, collection, c.validBody(), "Origin", origin),
					c.remove(collection, "Origin", origin))
			},
		},
		{
			ID: "cors/vary-origin", Tier: Should, Source: "Fetch standard, CORS protocol and HTTP caches", Doc: docCORS, Needs: AllowedOrigin,
			Requirement: "An answer whose Access-Control-Allow-Origin names the origin, rather than *, carries Vary: Origin.",
			check: func(c *Client) error {
				x := c.get(collection, "Origin", c.run.cfg.Origin)
				if x.responseHeader.Get("Access-Control-Allow-Origin") == "*" {
					return skipf("the server allows every origin with *: its answers do not vary by origin")
				}
				return x.listHolds("Vary", "Origin")
			},
		},
		{
			ID: "cors/other-origin-not-named", Tier: Reference, Source: docCORS, Doc: docCORS, Needs: AllowedOrigin,
			Requirement: "An origin the server does not allow is never named in Access-Control-Allow-Origin.",
			check: func(c *Client) error {
				other := "http://" + c.group + ".invalid"
				x := c.get(collection, "Origin", other)
				if strings.Contains(x.responseHeader.Get("Access-Control-Allow-Origin"), other) {
					return failf(x, "no Access-Control-Allow-Origin naming "+other, describeHeader(x.responseHeader, "Access-Control-Allow-Origin"))
				}
				return nil
			},
		},
		{
			ID: "cors/preflight-on-every-api-path", Tier: Reference, Source: docCORS, Doc: docCORS, Needs: AllowedOrigin,
			Requirement: "A preflight to any path under /api/, known or not (/api/products, /api/users/undefined, DELETE of /api/users), is 204 with the CORS headers, " +
				"so that the page sees the real request's JSON 404 or 405; outside /api/, one to a path not in the table (/nothing) is 404 with them.",
			check: func(c *Client) error {
				if err := every(func(x *reply) error {
					return firstError(x.statusIs(http.StatusNoContent), x.headerPresent("Access-Control-Allow-Origin"), x.headerPresent("Access-Control-Allow-Methods"))
				}, c.preflight("/api/products", http.MethodGet), c.preflight(collection+"/undefined", http.MethodGet),
					c.preflight(collection, http.MethodDelete)); err != nil {
					return err
				}
				x := c.preflight("/nothing", http.MethodGet)
				return firstError(x.statusIs(http.StatusNotFound), x.headerPresent("Access-Control-Allow-Origin"))
			},
		},
	}
}

// preflight sends the OPTIONS request a browser sends before a method it may not send at once.
func (c *Client) preflight(path, method string) *reply {
	return c.options(path, "Origin", c.run.cfg.Origin, "Access-Control-Request-Method", method,
		"Access-Control-Request-Headers", "authorization,content-type,if-match")
}
