package kit

import (
	"net/http"
	"strings"
)

// usersErrorsRules: the rules of this reference only, written for users, of the topic errors.
func usersErrorsRules() []Rule {
	return []Rule{
		{
			ID: "errors/error-body-of-every-status", Tier: Reference, Scope: ThisReference, Source: docResponses, Doc: docResponses, Needs: OwnItems,
			Requirement: "Every error the API sends, 403, 405 (for an unknown method too), 409, 412, 413 and 415 included, has the same error body.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				answers := []*reply{
					c.remove(usersCollection),
					c.send(request{method: "FOO", target: usersCollection, as: writer}),
					c.write(http.MethodPost, usersCollection, userJSON("Kit Ann Two", u.Email)),
					c.remove(u.path(), "If-Match", staleTag),
					c.write(http.MethodPost, usersCollection, padded(c.validBody(), maxBodyBytes+1)),
					c.postAs("text/plain"),
				}
				if c.run.cfg.ReadToken != "" {
					answers = append(answers, c.asReader(http.MethodDelete, u.path(), ""))
				}
				answers = statusIn(answers, http.StatusForbidden, http.StatusMethodNotAllowed, http.StatusConflict,
					http.StatusPreconditionFailed, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)
				if len(answers) == 0 {
					return skipf("none of these statuses came back to look at")
				}
				return every((*reply).errorBody, answers...)
			},
		},
		{
			ID: "errors/paths-not-in-the-table-404", Tier: Reference, Scope: ThisReference, Source: docRoutes, Doc: docRoutes,
			Requirement: "A path not in the table (/api/users/, /api/v1/users, /api, /api/) is 404.",
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.statusIs(http.StatusNotFound) },
					c.get("/api/users/"), c.get("/api/v1/users"), c.get("/api"), c.get("/api/"))
			},
		},
		{
			ID: "errors/not-provided-404", Tier: Reference, Scope: ThisReference, Source: docNotProvided, Doc: docNotProvided, Needs: OwnItems,
			Requirement: "Products, orders and the orders of a user are not provided: /api/products, /api/orders and /api/users/{id}/orders are 404.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return every(func(x *reply) error { return x.statusIs(http.StatusNotFound) },
					c.get("/api/products"), c.get("/api/orders"), c.get(u.path()+"/orders"))
			},
		},
		{
			ID: "errors/unknown-method-405", Tier: Reference, Scope: ThisReference, Source: "RFC 9110 §15.5.6; " + docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "A method that no route takes (FOO, TRACE, or get in lower case: methods are case-sensitive) is 405, as ServeMux answers it, " +
				"with Allow naming the route's methods (RFC 9110 §9.1 would rather have 501; this API takes ServeMux's 405 on purpose).",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, method := range []string{"FOO", "TRACE", "get"} {
					x := c.send(request{method: method, target: usersCollection, as: writer})
					if err := firstError(x.statusIs(http.StatusMethodNotAllowed), x.listIs("Allow", "GET", "HEAD", "POST", "OPTIONS")); err != nil {
						return err
					}
					x = c.send(request{method: method, target: u.path(), as: writer})
					if err := firstError(x.statusIs(http.StatusMethodNotAllowed), x.listIs("Allow", "GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"),
						c.userUnchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "errors/allow-is-the-routes-methods", Tier: Reference, Scope: ThisReference, Source: docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "Allow, on a 405 and on OPTIONS, is the route's whole set: GET, HEAD, POST, OPTIONS for /api/users; GET, HEAD, PUT, PATCH, DELETE, OPTIONS for a user.",
			check: func(c *Client) error {
				answers, err := c.wrongUserMethods()
				if err != nil {
					return err
				}
				u, err := c.newUser("Kit Bob")
				if err != nil {
					return err
				}
				return every(func(x *reply) error {
					if strings.HasSuffix(x.url, usersCollection) {
						return x.listIs("Allow", "GET", "HEAD", "POST", "OPTIONS")
					}
					return x.listIs("Allow", "GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS")
				}, append(answers, c.options(usersCollection), c.options(u.path()))...)
			},
		},
		{
			ID: "errors/query-ignored", Tier: Reference, Scope: ThisReference, Source: docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "Only the list reads a query; every other route ignores one: GET and HEAD of a user with ?fields=name are 200 with the user, " +
				"and POST, PUT, PATCH and DELETE with a query go ahead.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.get(u.path() + "?fields=name")
				if err := firstError(x.statusIs(http.StatusOK), x.isUser(u), c.head(u.path()+"?fields=name").statusIs(http.StatusOK)); err != nil {
					return err
				}
				return every((*reply).succeeded,
					c.write(http.MethodPost, usersCollection+"?kit=1", userJSON("Kit Bob", c.email())),
					c.write(http.MethodPut, u.path()+"?kit=1", userJSON("Kit Ann Lee", c.email())),
					c.write(http.MethodPatch, u.path()+"?kit=1", `{"name":"Kit Ann"}`),
					c.remove(u.path()+"?force=1"))
			},
		},
		{
			ID: "errors/405-before-the-id", Tier: Reference, Scope: ThisReference, Source: docOrder, Doc: docOrder,
			Requirement: "The path's shape is judged before its id: POST /api/users/abc is 405, while GET /api/users/abc is 404.",
			check: func(c *Client) error {
				return firstError(
					c.write(http.MethodPost, usersCollection+"/abc", `{}`).statusIs(http.StatusMethodNotAllowed),
					c.get(usersCollection+"/abc").statusIs(http.StatusNotFound))
			},
		},
		{
			ID: "errors/415-before-413", Tier: Reference, Scope: ThisReference, Source: docOrder, Doc: docOrder, Needs: OwnItems,
			Requirement: "The media type is judged before the size: an oversized body in text/plain is 415.",
			check: func(c *Client) error {
				return c.send(request{method: http.MethodPost, target: usersCollection, as: writer, framing: chunked,
					header: []string{"Content-Type", "text/plain"}, body: padded(c.validBody(), maxBodyBytes+1)}).statusIs(http.StatusUnsupportedMediaType)
			},
		},
		{
			ID: "errors/request-before-the-state", Tier: Reference, Scope: ThisReference, Source: docOrder, Doc: docOrder, Needs: OwnItems,
			Requirement: "The request is judged before the stored state: on a user that does not exist, a PUT in text/plain is 415, and a PUT or PATCH whose body breaks the rules is 400, not 404.",
			check: func(c *Client) error {
				gone, err := c.goneUser()
				if err != nil {
					return err
				}
				if err := c.send(request{method: http.MethodPut, target: gone.path(), as: writer, body: userJSON("Kit Ann", c.email()),
					header: []string{"Content-Type", "text/plain"}}).statusIs(http.StatusUnsupportedMediaType); err != nil {
					return err
				}
				return every(func(x *reply) error { return x.statusIs(http.StatusBadRequest) },
					c.write(http.MethodPut, gone.path(), `{"name":5}`),
					c.write(http.MethodPatch, gone.path(), `{"name":""}`))
			},
		},
		{
			ID: "errors/accept-encoding-identity", Tier: Reference, Scope: ThisReference, Source: "RFC 9110 §15.5.16; " + docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "The 415 of a body with a Content-Encoding, on POST, PUT or PATCH, carries exactly Accept-Encoding: identity, saying that the API takes no coding.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				answers := []*reply{
					c.write(http.MethodPost, usersCollection, c.validBody(), "Content-Encoding", "gzip"),
					c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email), "Content-Encoding", "gzip"),
					c.write(http.MethodPatch, u.path(), `{"name":"Kit Ann Lee"}`, "Content-Encoding", "gzip"),
				}
				return every(func(x *reply) error {
					return firstError(x.statusIs(http.StatusUnsupportedMediaType), x.listIs("Accept-Encoding", "identity"))
				}, answers...)
			},
		},
	}
}

// wrongMethods sends each method a path does not take: DELETE, PUT and PATCH to the usersCollection, POST
// to a user of the rule's own.
func (c *Client) wrongUserMethods() ([]*reply, error) {
	u, err := c.newUser("Kit Ann")
	if err != nil {
		return nil, err
	}
	return []*reply{
		c.remove(usersCollection),
		c.write(http.MethodPut, usersCollection, userJSON("Kit Ann", c.email())),
		c.write(http.MethodPatch, usersCollection, `{"name":"Kit Ann"}`),
		c.write(http.MethodPost, u.path(), userJSON("Kit Ann", c.email())),
	}, nil
}
