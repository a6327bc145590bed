package kit

import "net/http"

// reachableRules: the server answers, and every answer with a body is JSON.
func reachableRules() []Rule {
	return []Rule{
		{
			ID: "reachable/list-200", Tier: Must, Source: docRoutes, Doc: docRoutes,
			Requirement: "GET of the collection answers 200.",
			check:       func(c *Client) error { return c.get(c.collection()).statusIs(http.StatusOK) },
		},
		{
			ID: "reachable/content-type-json", Tier: Should, Source: "RFC 9110 §8.3", Doc: docResponses, Needs: OwnItems,
			Requirement: "Every answer with a body, errors included, says Content-Type: application/json (or a JSON type of its own, such as application/problem+json).",
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				answers := []*reply{
					c.post(c.fill(c.run.desc.Create)),
					c.get(c.collection()),
					c.write(http.MethodPost, c.collection(), `{"`),
					c.get(c.itemPath(gone.ID)),
					c.send(request{method: "FOO", target: c.collection(), as: writer}),
				}
				if c.run.desc.Auth != nil {
					answers = append(answers, c.anonymously(http.MethodGet, c.collection()))
				}
				return every(func(x *reply) error {
					if len(x.responseBody) == 0 {
						return nil
					}
					return x.isJSON()
				}, answers...)
			},
		},
	}
}
