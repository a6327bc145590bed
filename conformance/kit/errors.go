package kit

import (
	"net/http"
	"strings"
)

// errorsRules: the error body, paths and methods not in the table, queries where none is taken, and
// the order in which a request is judged.
func errorsRules() []Rule {
	return []Rule{
		{
			ID: "errors/error-body", Tier: Must, Source: docResponses, Doc: docResponses, Needs: OwnUsers,
			Requirement: `An error answer (400, 401, 404, or 422 for a field) is the error body: a JSON object whose "error" is a non-empty string.`,
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				answers := statusIn([]*reply{
					c.anonymously(http.MethodGet, collection),
					c.write(http.MethodPost, collection, `{"name":`),
					c.write(http.MethodPost, collection, `{"email":`+jsonString(c.email())+`}`),
					c.remove(gone.path()),
					c.get("/api/getUsers"),
				}, http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusUnprocessableEntity)
				if len(answers) == 0 {
					return skipf("no 400, 401, 404 or 422 to look at: see auth/no-token-401, create/syntax-error-400 and delete/again-404")
				}
				return every((*reply).errorBody, answers...)
			},
		},
		{
			ID: "errors/error-body-of-every-status", Tier: Reference, Source: docResponses, Doc: docResponses, Needs: OwnUsers,
			Requirement: "Every error the API sends, 403, 405, 409, 412, 413 and 415 included, has the same error body.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				answers := []*reply{
					c.remove(collection),
					c.write(http.MethodPost, collection, userJSON("Kit Ann Two", u.Email)),
					c.remove(u.path(), "If-Match", staleTag),
					c.write(http.MethodPost, collection, padded(c.validBody(), maxBodyBytes+1)),
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
			ID: "errors/verb-paths-404", Tier: Must, Source: docRoutes, Doc: docRoutes,
			Requirement: "A path that names a verb (/getUsers, /api/getUsers, /api/users/create) is not part of the API: 404.",
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.statusIs(http.StatusNotFound) },
					c.get("/getUsers"), c.get("/api/getUsers"), c.get("/api/users/create"))
			},
		},
		{
			ID: "errors/paths-not-in-the-table-404", Tier: Reference, Source: docRoutes, Doc: docRoutes,
			Requirement: "A path not in the table (/api/users/, /api/v1/users, /api, /api/) is 404.",
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.statusIs(http.StatusNotFound) },
					c.get("/api/users/"), c.get("/api/v1/users"), c.get("/api"), c.get("/api/"))
			},
		},
		{
			ID: "errors/not-provided-404", Tier: Reference, Source: docNotProvided, Doc: docNotProvided, Needs: OwnUsers,
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
			ID: "errors/method-not-allowed-405", Tier: Should, Source: "RFC 9110 §15.5.6", Doc: docRoutes, Needs: OwnUsers,
			Requirement: "A method the path does not take (DELETE, PUT or PATCH of /api/users; POST to /api/users/{id}) is 405.",
			check: func(c *Client) error {
				answers, err := c.wrongMethods()
				if err != nil {
					return err
				}
				return every(func(x *reply) error { return x.statusIs(http.StatusMethodNotAllowed) }, answers...)
			},
		},
		{
			ID: "errors/unknown-method-501", Tier: Should, Source: "RFC 9110 §9.1", Doc: docRoutes,
			Requirement: "A method that no route takes (FOO, TRACE, or get in lower case: methods are case-sensitive) is 501, with no Allow, after authentication.",
			check: func(c *Client) error {
				var answers []*reply
				for _, method := range []string{"FOO", "TRACE", "get"} {
					answers = append(answers, c.send(request{method: method, target: collection, as: writer}))
				}
				return every(func(x *reply) error {
					return firstError(x.statusIs(http.StatusNotImplemented), x.headerAbsent("Allow"))
				}, answers...)
			},
		},
		{
			ID: "errors/405-allow", Tier: Must, Source: "RFC 9110 §15.5.6", Doc: docRoutes, Needs: OwnUsers,
			Requirement: "A 405 carries Allow, naming the methods the path takes: at least GET and POST for /api/users, PUT and DELETE for a user.",
			check: func(c *Client) error {
				answers, err := c.wrongMethods()
				if err != nil {
					return err
				}
				answers = statusIn(answers, http.StatusMethodNotAllowed)
				if len(answers) == 0 {
					return skipf("no 405 to look at: see errors/method-not-allowed-405")
				}
				return every(func(x *reply) error {
					if strings.HasSuffix(x.url, collection) {
						return x.listHolds("Allow", "GET", "POST")
					}
					return x.listHolds("Allow", "PUT", "DELETE")
				}, answers...)
			},
		},
		{
			ID: "errors/allow-is-the-routes-methods", Tier: Reference, Source: docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "Allow, on a 405 and on OPTIONS, is the route's whole set: GET, HEAD, POST, OPTIONS for /api/users; GET, HEAD, PUT, PATCH, DELETE, OPTIONS for a user.",
			check: func(c *Client) error {
				answers, err := c.wrongMethods()
				if err != nil {
					return err
				}
				u, err := c.newUser("Kit Bob")
				if err != nil {
					return err
				}
				return every(func(x *reply) error {
					if strings.HasSuffix(x.url, collection) {
						return x.listIs("Allow", "GET", "HEAD", "POST", "OPTIONS")
					}
					return x.listIs("Allow", "GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS")
				}, append(answers, c.options(collection), c.options(u.path()))...)
			},
		},
		{
			ID: "errors/query-400", Tier: Reference, Source: docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "Only the list takes a query: on any other route (GET, HEAD, PUT, PATCH, DELETE of a user; POST) one is 400, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, x := range []*reply{
					c.get(u.path() + "?fields=name"),
					c.head(u.path() + "?fields=name"),
					c.write(http.MethodPut, u.path()+"?kit=1", userJSON("Kit Ann Lee", c.email())),
					c.write(http.MethodPatch, u.path()+"?kit=1", `{"name":"Kit Ann Lee"}`),
					c.remove(u.path() + "?force=1"),
				} {
					if err := firstError(x.statusIs(http.StatusBadRequest), c.unchanged(x, u)); err != nil {
						return err
					}
				}
				email := c.email()
				x := c.write(http.MethodPost, collection+"?kit=1", userJSON("Kit Bob", email))
				return firstError(x.statusIs(http.StatusBadRequest), c.notCreated(x, email))
			},
		},
		{
			ID: "errors/authentication-first", Tier: Reference, Source: docOrder, Doc: docOrder, Needs: OwnUsers,
			Requirement: "The token is judged first: without one, an unknown path, a method the path does not take, an id not in canonical form and a bad media type are all 401.",
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.statusIs(http.StatusUnauthorized) },
					c.anonymously(http.MethodGet, "/api/products"),
					c.anonymously(http.MethodDelete, collection),
					c.anonymously(http.MethodGet, collection+"/abc"),
					c.send(request{method: http.MethodPost, target: collection, body: "kit", header: []string{"Content-Type", "text/plain"}}))
			},
		},
		{
			ID: "errors/405-before-the-id", Tier: Reference, Source: docOrder, Doc: docOrder,
			Requirement: "The path's shape is judged before its id: POST /api/users/abc is 405, while GET /api/users/abc is 404.",
			check: func(c *Client) error {
				return firstError(
					c.write(http.MethodPost, collection+"/abc", `{}`).statusIs(http.StatusMethodNotAllowed),
					c.get(collection+"/abc").statusIs(http.StatusNotFound))
			},
		},
		{
			ID: "errors/routing-before-permission", Tier: Reference, Source: docOrder, Doc: docOrder, Needs: ReadToken,
			Requirement: "Routing comes before permission: with a read token, DELETE /api/users is 405 and DELETE /api/users/abc is 404.",
			check: func(c *Client) error {
				return firstError(
					c.asReader(http.MethodDelete, collection, "").statusIs(http.StatusMethodNotAllowed),
					c.asReader(http.MethodDelete, collection+"/abc", "").statusIs(http.StatusNotFound))
			},
		},
		{
			ID: "errors/permission-before-the-request", Tier: Reference, Source: docOrder, Doc: docOrder, Needs: ReadToken | OwnUsers,
			Requirement: "Permission comes before the request and the stored state: with a read token, a write is 403 whatever its media type, body or preconditions, and whether or not the user exists.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				gone, err := c.gone()
				if err != nil {
					return err
				}
				return every(func(x *reply) error { return x.statusIs(http.StatusForbidden) },
					c.asReader(http.MethodDelete, gone.path(), ""),
					c.send(request{method: http.MethodPost, target: collection, as: reader, body: "kit", header: []string{"Content-Type", "text/plain"}}),
					c.asReader(http.MethodPut, u.path(), `{"name":5}`),
					c.send(request{method: http.MethodPut, target: u.path(), as: reader, body: userJSON("Kit Ann Lee", u.Email),
						header: []string{"Content-Type", mediaTypeJSON, "If-Match", staleTag}}))
			},
		},
		{
			ID: "errors/415-before-413", Tier: Reference, Source: docOrder, Doc: docOrder, Needs: OwnUsers,
			Requirement: "The media type is judged before the size: an oversized body in text/plain is 415.",
			check: func(c *Client) error {
				return c.send(request{method: http.MethodPost, target: collection, as: writer, framing: chunked,
					header: []string{"Content-Type", "text/plain"}, body: padded(c.validBody(), maxBodyBytes+1)}).statusIs(http.StatusUnsupportedMediaType)
			},
		},
		{
			ID: "errors/query-before-the-body", Tier: Reference, Source: docOrder, Doc: docOrder, Needs: OwnUsers,
			Requirement: "A query on a write is judged after the media type and the size and before the body: POST /api/users?kit=1 is 415 in text/plain, 413 over 1 MiB, and with a wrong-typed body 400 for the query, without fields.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				target := collection + "?kit=1"
				return firstError(
					c.send(request{method: http.MethodPost, target: target, as: writer, body: c.validBody(),
						header: []string{"Content-Type", "text/plain"}}).statusIs(http.StatusUnsupportedMediaType),
					c.send(request{method: http.MethodPost, target: target, as: writer, framing: chunked,
						header: []string{"Content-Type", mediaTypeJSON}, body: padded(c.validBody(), maxBodyBytes+1)}).statusIs(http.StatusRequestEntityTooLarge),
					c.write(http.MethodPost, target, `{"name":5}`).refused(),
					c.write(http.MethodPut, u.path()+"?kit=1", `{"name":5}`).refused())
			},
		},
		{
			ID: "errors/request-before-the-state", Tier: Reference, Source: docOrder, Doc: docOrder, Needs: OwnUsers,
			Requirement: "The request is judged before the stored state: a bad body or a query on a user that does not exist is 400, not 404.",
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				return every(func(x *reply) error { return x.statusIs(http.StatusBadRequest) },
					c.write(http.MethodPut, gone.path(), `{"name":5}`),
					c.get(gone.path()+"?kit=1"),
					c.remove(gone.path()+"?kit=1"))
			},
		},
	}
}

// wrongMethods sends each method a path does not take: DELETE, PUT and PATCH to the collection, POST
// to a user of the rule's own.
func (c *Client) wrongMethods() ([]*reply, error) {
	u, err := c.newUser("Kit Ann")
	if err != nil {
		return nil, err
	}
	return []*reply{
		c.remove(collection),
		c.write(http.MethodPut, collection, userJSON("Kit Ann", c.email())),
		c.write(http.MethodPatch, collection, `{"name":"Kit Ann"}`),
		c.write(http.MethodPost, u.path(), userJSON("Kit Ann", c.email())),
	}, nil
}
