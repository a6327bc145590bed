package kit

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// usersReachableRules: the rules of this reference only, written for users, of the topic reachable.
func usersReachableRules() []Rule {
	return []Rule{
		{
			ID: "reachable/nosniff", Tier: Reference, Scope: ThisReference, Source: docResponses, Doc: docResponses,
			Requirement: "Every answer carries X-Content-Type-Options: nosniff.",
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.headerIs("X-Content-Type-Options", "nosniff") },
					c.get(usersCollection), c.anonymously(http.MethodGet, usersCollection), c.get("/api/getUsers"), c.anonymously(http.MethodGet, "/getUsers"))
			},
		},
		{
			ID: "reachable/request-id-fresh", Tier: Reference, Scope: ThisReference, Source: docResponses, Doc: docResponses,
			Requirement: "An answer to a request without X-Request-Id carries one of its own, 1 to 64 characters of A-Z a-z 0-9 . _ -, new on each answer.",
			check: func(c *Client) error {
				first, second := c.get(usersCollection), c.anonymously(http.MethodGet, usersCollection)
				if err := every(hasRequestID, first, second); err != nil {
					return err
				}
				if id := first.responseHeader.Get("X-Request-Id"); second.responseHeader.Get("X-Request-Id") == id {
					return failf(second, "an X-Request-Id other than the previous answer's "+id, describeHeader(second.responseHeader, "X-Request-Id"))
				}
				return nil
			},
		},
		{
			ID: "reachable/request-id-echoed", Tier: Reference, Scope: ThisReference, Source: docResponses, Doc: docResponses,
			Requirement: "An answer echoes the client's X-Request-Id when it is 1 to 64 characters of A-Z a-z 0-9 . _ -.",
			check: func(c *Client) error {
				for _, id := range []string{"Kit-123_x.Z", "7", strings.Repeat("k", 64)} {
					for _, x := range []*reply{c.get(usersCollection, "X-Request-Id", id), c.get("/api/getUsers", "X-Request-Id", id)} {
						if err := x.headerIs("X-Request-Id", id); err != nil {
							return err
						}
					}
				}
				return nil
			},
		},
		{
			ID: "reachable/request-id-unsafe-replaced", Tier: Reference, Scope: ThisReference, Source: docResponses, Doc: docResponses,
			Requirement: "A client's X-Request-Id that is empty, longer than 64 characters or holds other characters is not echoed: the answer carries one of its own.",
			check: func(c *Client) error {
				for _, id := range []string{"", strings.Repeat("k", 65), "kit id", "kit/1", "trace:1", `kit"1`, "caf\u00e9"} {
					x := c.get(usersCollection, "X-Request-Id", id)
					if err := hasRequestID(x); err != nil {
						return err
					}
					if x.responseHeader.Get("X-Request-Id") == id {
						return failf(x, "an X-Request-Id of the server's own", "the client's "+strconv.Quote(id)+" echoed")
					}
				}
				return nil
			},
		},
		{
			ID: "reachable/accept-not-negotiated", Tier: Reference, Scope: ThisReference, Source: docResponses, Doc: docResponses,
			Requirement: "Accept is not negotiated: a GET that accepts only HTML or XML still gets 200 and JSON, never 406.",
			check: func(c *Client) error {
				for _, accept := range []string{"text/html", "application/xml", "image/png;q=1, */*;q=0"} {
					x := c.get(usersCollection, "Accept", accept)
					if err := firstError(x.statusIs(http.StatusOK), x.isJSON()); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "reachable/cache-control-no-store", Tier: Reference, Scope: ThisReference, Source: docResponses, Doc: docResponses, Needs: OwnItems,
			Requirement: "Every /api/ answer but a 200 or 304 to GET or HEAD carries Cache-Control: no-store.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				answers := []*reply{
					c.write(http.MethodPost, usersCollection, userJSON("Kit Bob", c.email())),
					c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", c.email())),
					c.write(http.MethodPatch, u.path(), `{"name":"Kit Ann"}`),
					c.write(http.MethodPost, usersCollection, `{"name":`),
					c.anonymously(http.MethodGet, usersCollection),
					c.remove(usersCollection),
					c.options(usersCollection),
					c.remove(u.path()),
					c.get(u.path()),
				}
				return every(func(x *reply) error { return x.headerIs("Cache-Control", "no-store") }, answers...)
			},
		},
		{
			ID: "reachable/options-204", Tier: Reference, Scope: ThisReference, Source: docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "OPTIONS of /api/users and of /api/users/{id} answers 204 with Allow, without a token.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return every(func(x *reply) error {
					return firstError(x.statusIs(http.StatusNoContent), x.headerPresent("Allow"))
				}, c.options(usersCollection), c.options(u.path()))
			},
		},
		{
			ID: "reachable/options-accept-post", Tier: Reference, Scope: ThisReference, Source: "W3C LDP §7.1 (Accept-Post)", Doc: docRoutes,
			Requirement: "OPTIONS /api/users carries Accept-Post: application/json, the body POST takes.",
			check:       func(c *Client) error { return c.options(usersCollection).listIs("Accept-Post", mediaTypeJSON) },
		},
		{
			ID: "reachable/options-unknown-404", Tier: Reference, Scope: ThisReference, Source: docRoutes, Doc: docRoutes,
			Requirement: "OPTIONS of a path not in the table, or of an id not in canonical form, is 404.",
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.statusIs(http.StatusNotFound) },
					c.options("/api/products"), c.options("/api/users/abc"), c.options("/api/users/07"))
			},
		},
		{
			ID: "reachable/unclean-path-under-api-needs-a-token", Tier: Reference, Scope: ThisReference, Source: docAuth, Doc: docAuth,
			Requirement: "A path that begins with /api/ needs a token even when it is not in clean form: without one, /api//users, /api/./users and /api/kit/../users are 401, " +
				"whatever a valid token would get (ServeMux's own redirect, whose status and body are Go's).",
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.statusIs(http.StatusUnauthorized) },
					c.anonymously(http.MethodGet, "/api//users"), c.anonymously(http.MethodGet, "/api/./users"),
					c.anonymously(http.MethodGet, "/api/kit/../users"))
			},
		},
		{
			ID: "reachable/healthz", Tier: Reference, Scope: ThisReference, Source: docRoutes, Doc: docRoutes,
			Requirement: `GET /healthz answers 200 {"status": "ok"}, without a token.`,
			check: func(c *Client) error {
				x := c.anonymously(http.MethodGet, "/healthz")
				var body struct{ Status string }
				if err := x.statusIs(http.StatusOK); err != nil {
					return err
				}
				if json.Unmarshal(x.responseBody, &body) != nil || body.Status != "ok" {
					return failf(x, `{"status": "ok"}`, x.summary())
				}
				return nil
			},
		},
		{
			ID: "reachable/openapi", Tier: Reference, Scope: ThisReference, Source: docRoutes, Doc: docRoutes,
			Requirement: "GET /openapi.json answers 200 with an OpenAPI 3.1 document, without a token, whose server URLs are relative (such as /), so that it holds on any scheme, host and port.",
			check: func(c *Client) error {
				x := c.anonymously(http.MethodGet, "/openapi.json")
				var document struct {
					OpenAPI string
					Servers []struct{ URL string }
				}
				if err := x.statusIs(http.StatusOK); err != nil {
					return err
				}
				if json.Unmarshal(x.responseBody, &document) != nil || !strings.HasPrefix(document.OpenAPI, "3.1") {
					return failf(x, `a JSON document with "openapi": "3.1.x"`, x.summary())
				}
				for _, server := range document.Servers {
					if u, err := url.Parse(server.URL); err != nil || u.Scheme != "" || u.Host != "" {
						return failf(x, `relative server URLs, such as "/"`, fmt.Sprintf("a server URL %q", server.URL))
					}
				}
				return nil
			},
		},
		{
			ID: "reachable/explorer-page", Tier: Reference, Scope: ThisReference, Source: docRoutes, Doc: docRoutes,
			Requirement: "GET / answers 200 with the explorer page, in HTML, without a token.",
			check: func(c *Client) error {
				x := c.anonymously(http.MethodGet, "/")
				if err := x.statusIs(http.StatusOK); err != nil {
					return err
				}
				if mediaType, _, _ := mime.ParseMediaType(x.responseHeader.Get("Content-Type")); mediaType != "text/html" {
					return failf(x, "Content-Type: text/html", describeHeader(x.responseHeader, "Content-Type"))
				}
				return nil
			},
		},
	}
}

// requestID is the form of an X-Request-Id the server echoes or makes.
var requestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// hasRequestID checks that the answer carries one X-Request-Id of that form.
func hasRequestID(x *reply) error {
	if values := x.responseHeader.Values("X-Request-Id"); len(values) != 1 || !requestID.MatchString(values[0]) {
		return failf(x, "one X-Request-Id of 1 to 64 characters of A-Z a-z 0-9 . _ -", describeHeader(x.responseHeader, "X-Request-Id"))
	}
	return nil
}
