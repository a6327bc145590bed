package kit

import (
	"net/http"
	"strings"
)

// usersCORSRules: the rules of this reference only, written for users, of the topic cors.
func usersCORSRules() []Rule {
	const fetch = "Fetch standard §3.2 (CORS protocol)"
	return []Rule{
		{
			ID: "cors/preflight-allows-conditional-headers", Tier: Reference, Scope: ThisReference, Source: docCORS, Doc: docCORS, Needs: AllowedOrigin,
			Requirement: "A preflight allows exactly the headers Authorization, Content-Type, If-Match, If-None-Match and X-Request-Id.",
			check: func(c *Client) error {
				return c.preflight(usersCollection, http.MethodPost).listIs("Access-Control-Allow-Headers", "Authorization", "Content-Type", "If-Match", "If-None-Match", "X-Request-Id")
			},
		},
		{
			ID: "cors/preflight-allows-the-api-methods", Tier: Reference, Scope: ThisReference, Source: docCORS, Doc: docCORS, Needs: AllowedOrigin | OwnItems,
			Requirement: "A preflight allows exactly the methods the API uses, GET, HEAD, POST, PUT, PATCH and DELETE, whatever the path under /api/.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return every(func(x *reply) error {
					return x.listIs("Access-Control-Allow-Methods", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
				}, c.preflight(usersCollection, http.MethodPost), c.preflight(u.path(), http.MethodPatch), c.preflight(usersCollection+"/undefined", http.MethodGet))
			},
		},
		{
			ID: "cors/exposes-headers", Tier: Reference, Scope: ThisReference, Source: docCORS, Doc: docCORS, Needs: AllowedOrigin | OwnItems,
			Requirement: "Answers expose, by name, every header a client acts on: Location, Content-Location, ETag, Link, WWW-Authenticate, X-Request-Id, Allow, Accept-Post, Accept-Patch and Retry-After.",
			check: func(c *Client) error {
				origin := c.run.cfg.Origin
				return every(func(x *reply) error {
					return x.listIs("Access-Control-Expose-Headers", "Location", "Content-Location", "ETag", "Link", "WWW-Authenticate", "X-Request-Id",
						"Allow", "Accept-Post", "Accept-Patch", "Retry-After")
				}, c.get(usersCollection, "Origin", origin), c.write(http.MethodPost, usersCollection, c.validBody(), "Origin", origin),
					c.remove(usersCollection, "Origin", origin))
			},
		},
		{
			ID: "cors/other-origin-not-named", Tier: Reference, Scope: ThisReference, Source: docCORS, Doc: docCORS, Needs: AllowedOrigin,
			Requirement: "An origin the server does not allow is never named in Access-Control-Allow-Origin.",
			check: func(c *Client) error {
				other := "http://" + c.group + ".invalid"
				x := c.get(usersCollection, "Origin", other)
				if strings.Contains(x.responseHeader.Get("Access-Control-Allow-Origin"), other) {
					return failf(x, "no Access-Control-Allow-Origin naming "+other, describeHeader(x.responseHeader, "Access-Control-Allow-Origin"))
				}
				return nil
			},
		},
		{
			ID: "cors/preflight-on-every-api-path", Tier: Reference, Scope: ThisReference, Source: docCORS, Doc: docCORS, Needs: AllowedOrigin,
			Requirement: "A preflight to any path under /api/, known or not (/api/products, /api/users/undefined, DELETE of /api/users), is 204 with the CORS headers, " +
				"so that the page sees the real request's JSON 404 or 405; outside /api/, one to a path not in the table (/nothing) is 404 with them.",
			check: func(c *Client) error {
				if err := every(func(x *reply) error {
					return firstError(x.statusIs(http.StatusNoContent), x.headerPresent("Access-Control-Allow-Origin"), x.headerPresent("Access-Control-Allow-Methods"))
				}, c.preflight("/api/products", http.MethodGet), c.preflight(usersCollection+"/undefined", http.MethodGet),
					c.preflight(usersCollection, http.MethodDelete)); err != nil {
					return err
				}
				x := c.preflight("/nothing", http.MethodGet)
				return firstError(x.statusIs(http.StatusNotFound), x.headerPresent("Access-Control-Allow-Origin"))
			},
		},
	}
}
