package kit

import (
	"net/http"
	"slices"
)

// corsRules: what a page on another origin needs (the Fetch standard's CORS protocol). They run
// against an API whose description declares cors, and only when the server allows the kit's origin.
func corsRules() []Rule {
	const fetch = "Fetch standard §3.2 (CORS protocol)"
	return []Rule{
		{
			ID: "cors/allow-origin", Tier: Should, Keys: keyCORS, Source: fetch, Doc: docCORS, Needs: AllowedOrigin | OwnItems,
			Requirement: "Every answer to the allowed origin, errors included, carries Access-Control-Allow-Origin with that origin or *.",
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				origin := c.run.cfg.Origin
				answers := []*reply{
					c.get(c.collection(), "Origin", origin),
					c.post(c.fill(c.run.desc.Create), "Origin", origin),
					c.write(http.MethodPost, c.collection(), `{"`, "Origin", origin),
					c.get(c.itemPath(gone.ID), "Origin", origin),
					c.remove(c.collection(), "Origin", origin),
				}
				if c.run.desc.Auth != nil {
					answers = append(answers, c.anonymously(http.MethodGet, c.collection(), "Origin", origin))
				}
				return every(func(x *reply) error {
					if allowed := x.responseHeader.Get("Access-Control-Allow-Origin"); allowed != origin && allowed != "*" {
						return failf(x, "Access-Control-Allow-Origin: "+origin, describeHeader(x.responseHeader, "Access-Control-Allow-Origin")+" on "+x.summary())
					}
					return nil
				}, answers...)
			},
		},
		{
			ID: "cors/preflight", Tier: Should, Keys: keyCORS, Source: fetch, Doc: docCORS, Needs: AllowedOrigin,
			Requirement: "A preflight, OPTIONS with Origin and Access-Control-Request-Method and no token, answers 2xx with Access-Control-Allow-Origin.",
			check: func(c *Client) error {
				x := c.preflight(c.collection(), http.MethodPost)
				if x.status/100 != 2 {
					return failf(x, "a 2xx, as a browser sends no token with a preflight", x.summary())
				}
				return x.headerPresent("Access-Control-Allow-Origin")
			},
		},
		{
			ID: "cors/preflight-allows-the-method", Tier: Should, Keys: keyCORS, Source: fetch, Doc: docCORS, Needs: AllowedOrigin | OwnItems,
			Requirement: "A preflight's Access-Control-Allow-Methods names the method asked for: POST to the collection, PUT, DELETE and (with patch) PATCH to an item.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				methods := []string{http.MethodPut, http.MethodDelete}
				if c.run.desc.Patch != nil {
					methods = append(methods, http.MethodPatch)
				}
				answers := []*reply{c.preflight(c.collection(), http.MethodPost)}
				for _, method := range methods {
					answers = append(answers, c.preflight(c.itemPath(it.ID), method))
				}
				return every(func(x *reply) error {
					if slices.Contains(listItems(x.responseHeader, "Access-Control-Allow-Methods"), "*") {
						return nil
					}
					return x.listHolds("Access-Control-Allow-Methods", x.header.Get("Access-Control-Request-Method"))
				}, answers...)
			},
		},
		{
			ID: "cors/preflight-allows-authorization", Tier: Should, Keys: keyCORS, Source: fetch, Doc: docCORS, Needs: AllowedOrigin,
			Requirement: "A preflight's Access-Control-Allow-Headers names Content-Type and, on an API with authentication, Authorization, which * does not cover.",
			check: func(c *Client) error {
				x := c.preflight(c.collection(), http.MethodPost)
				if c.run.desc.Auth != nil {
					if err := x.listHolds("Access-Control-Allow-Headers", "Authorization"); err != nil {
						return err
					}
				}
				if slices.Contains(listItems(x.responseHeader, "Access-Control-Allow-Headers"), "*") {
					return nil
				}
				return x.listHolds("Access-Control-Allow-Headers", "Content-Type")
			},
		},
		{
			ID: "cors/vary-origin", Tier: Should, Keys: keyCORS, Source: "Fetch standard, CORS protocol and HTTP caches", Doc: docCORS, Needs: AllowedOrigin,
			Requirement: "An answer whose Access-Control-Allow-Origin names the origin, rather than *, carries Vary: Origin.",
			check: func(c *Client) error {
				x := c.get(c.collection(), "Origin", c.run.cfg.Origin)
				if x.responseHeader.Get("Access-Control-Allow-Origin") == "*" {
					return skipf("the server allows every origin with *: its answers do not vary by origin")
				}
				return x.listHolds("Vary", "Origin")
			},
		},
	}
}

// preflight sends the OPTIONS request a browser sends before a method it may not send at once.
func (c *Client) preflight(path, method string) *reply {
	return c.options(path, "Origin", c.run.cfg.Origin, "Access-Control-Request-Method", method,
		"Access-Control-Request-Headers", "authorization,content-type,if-match")
}
