package kit

import (
	"net/http"
	"strings"
)

// errorsRules: the error body, paths and methods not in the table, queries where none is read, and
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
			Requirement: "Every error the API sends, 403, 405 (for an unknown method too), 409, 412, 413 and 415 included, has the same error body.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				answers := []*reply{
					c.remove(collection),
					c.send(request{method: "FOO", target: collection, as: writer}),
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
			ID: "errors/unknown-method-405", Tier: Reference, Source: "RFC 9110 §15.5.6; " + docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "A method that no route takes (FOO, TRACE, or get in lower case: methods are case-sensitive) is 405, as ServeMux answers it, " +
				"with Allow naming the route's methods (RFC 9110 §9.1 would rather have 501; this API takes ServeMux's 405 on purpose).",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, method := range []string{"FOO", "TRACE", "get"} {
					x := c.send(request{method: method, target: collection, as: writer})
					if err := firstError(x.statusIs(http.StatusMethodNotAllowed), x.listIs("Allow", "GET", "HEAD", "POST", "OPTIONS")); err != nil {
						return err
					}
					x = c.send(request{method: method, target: u.path(), as: writer})
					if err := firstError(x.statusIs(http.StatusMethodNotAllowed), x.listIs("Allow", "GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"),
						c.unchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
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
			ID: "errors/query-ignored", Tier: Reference, Source: docRoutes, Doc: docRoutes, Needs: OwnUsers,
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
					c.write(http.MethodPost, collection+"?kit=1", userJSON("Kit Bob", c.email())),
					c.write(http.MethodPut, u.path()+"?kit=1", userJSON("Kit Ann Lee", c.email())),
					c.write(http.MethodPatch, u.path()+"?kit=1", `{"name":"Kit Ann"}`),
					c.remove(u.path()+"?force=1"))
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
			ID: "errors/permission-before-routing", Tier: Reference, Source: docOrder, Doc: docOrder, Needs: ReadToken | OwnUsers,
			Requirement: "Permission, by method, comes before routing: with a read token, DELETE of a user that does not exist, DELETE /api/users, " +
				"DELETE /api/users/abc, POST /api/nothing, FOO /api/users and DELETE /api//users are all 403, while GET /api/nothing is 404.",
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				if err := every(func(x *reply) error { return x.statusIs(http.StatusForbidden) },
					c.asReader(http.MethodDelete, gone.path(), ""),
					c.asReader(http.MethodDelete, collection, ""),
					c.asReader(http.MethodDelete, collection+"/abc", ""),
					c.asReader(http.MethodPost, "/api/nothing", `{}`),
					c.asReader("FOO", collection, ""),
					c.asReader(http.MethodDelete, "/api//users", "")); err != nil {
					return err
				}
				return c.get("/api/nothing").statusIs(http.StatusNotFound)
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
			ID: "errors/request-before-the-state", Tier: Reference, Source: docOrder, Doc: docOrder, Needs: OwnUsers,
			Requirement: "The request is judged before the stored state: on a user that does not exist, a PUT in text/plain is 415, and a PUT or PATCH whose body breaks the rules is 400, not 404.",
			check: func(c *Client) error {
				gone, err := c.gone()
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
			ID: "errors/content-encoding-accept-encoding", Tier: Should, Source: "RFC 9110 §15.5.16", Doc: docBodies, Needs: OwnUsers,
			Requirement: "The 415 of a body with a Content-Encoding, on POST, PUT or PATCH, carries Accept-Encoding: identity, saying that the API takes no coding.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				answers := []*reply{
					c.write(http.MethodPost, collection, c.validBody(), "Content-Encoding", "gzip"),
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
