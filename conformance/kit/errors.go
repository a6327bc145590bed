package kit

import (
	"net/http"
	"path"
	"slices"
	"strings"
	"unicode"
)

// errorsRules: the error body, paths and methods the API does not have, and the order in which a
// request is judged.
func errorsRules() []Rule {
	return []Rule{
		{
			ID: "errors/error-body", Tier: Must, Source: "RFC 9110 §15.5; " + docResponses, Doc: docResponses, Needs: OwnItems,
			Requirement: "An error answer (400, 401, 404, or 422) has a body that says what went wrong: a JSON object holding a message, a string that is not empty.",
			check: func(c *Client) error {
				answers, err := c.errorAnswers()
				if err != nil {
					return err
				}
				return every(func(x *reply) error {
					value, err := decodeValue(x.responseBody)
					if _, isObject := value.(map[string]any); err != nil || !isObject || !holdsMessage(value) {
						return failf(x, "a JSON object holding a message", x.summary())
					}
					return nil
				}, answers...)
			},
		},
		{
			ID: "errors/error-message", Tier: Must, Keys: keyError, Source: "RFC 9457 §3.1.4; " + docResponses, Doc: docResponses, Needs: OwnItems,
			Requirement: "An error answer's message is a string that is not empty, where the description's error pointer says (/error for users, /detail for RFC 9457).",
			check: func(c *Client) error {
				answers, err := c.errorAnswers()
				if err != nil {
					return err
				}
				pointer := c.run.desc.Error
				return every(func(x *reply) error {
					value, _ := decodeValue(x.responseBody)
					message, found := pointAt(value, pointer)
					if text, isString := message.(string); !found || !isString || strings.TrimSpace(text) == "" {
						return failf(x, "a message, a string that is not empty, at "+pointer, x.summary())
					}
					return nil
				}, answers...)
			},
		},
		{
			ID: "errors/verb-paths-404", Tier: Must, Source: docRoutes, Doc: docRoutes,
			Requirement: "A path that names a verb (/getUsers beside /api/users, /api/getUsers, /api/users/create) is not part of the API: 404.",
			check: func(c *Client) error {
				dir, name := path.Split(c.collection())
				getter := "get" + upperFirst(name)
				return every(func(x *reply) error { return x.statusIs(http.StatusNotFound) },
					c.get("/"+getter), c.get(dir+getter), c.get(c.collection()+"/create"))
			},
		},
		{
			ID: "errors/method-not-allowed-405", Tier: Should, Source: "RFC 9110 §15.5.6", Doc: docRoutes, Needs: OwnItems,
			Requirement: "A method the path does not take (DELETE, PUT or PATCH of the collection; POST to an item) is 405.",
			check: func(c *Client) error {
				answers, err := c.wrongMethods()
				if err != nil {
					return err
				}
				return every(func(x *reply) error { return x.statusIs(http.StatusMethodNotAllowed) }, answers...)
			},
		},
		{
			ID: "errors/405-allow", Tier: Must, Source: "RFC 9110 §15.5.6", Doc: docRoutes, Needs: OwnItems,
			Requirement: "A 405 carries Allow, naming the methods the path takes: at least GET and POST for the collection, GET, PUT and DELETE for an item.",
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
					if strings.HasSuffix(x.url, c.collection()) {
						return x.listHolds("Allow", "GET", "POST")
					}
					return x.listHolds("Allow", "GET", "PUT", "DELETE")
				}, answers...)
			},
		},
		{
			ID: "errors/authentication-first", Tier: Reference, Keys: keyAuth, Source: docOrder, Doc: docOrder, Needs: OwnItems,
			Requirement: "The token is judged first: without one, a path the API does not have, a method the path does not take, an id that names nothing and a bad media type are all 401.",
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.statusIs(http.StatusUnauthorized) },
					c.anonymously(http.MethodGet, c.nowhere()),
					c.anonymously(http.MethodDelete, c.collection()),
					c.anonymously(http.MethodGet, c.itemPath("kit-no-such-id")),
					c.send(request{method: http.MethodPost, target: c.collection(), body: "kit", header: []string{"Content-Type", "text/plain"}}))
			},
		},
		{
			ID: "errors/permission-before-routing", Tier: Reference, Keys: keyAuth, Source: docOrder, Doc: docOrder, Needs: ReadToken | OwnItems,
			Requirement: "Permission, by method, comes before routing, so a read token learns nothing of what exists: DELETE of an item that does not exist, " +
				"DELETE of the collection, POST to a path the API does not have, FOO of the collection and DELETE of the collection's path with a slash doubled " +
				"are all 403, while GET of a path the API does not have is 404.",
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				dir, name := path.Split(c.collection())
				if err := every(func(x *reply) error { return x.statusIs(http.StatusForbidden) },
					c.asReader(http.MethodDelete, c.itemPath(gone.ID), ""),
					c.asReader(http.MethodDelete, c.collection(), ""),
					c.asReader(http.MethodDelete, c.itemPath("kit-no-such-id"), ""),
					c.asReader(http.MethodPost, c.nowhere(), `{}`),
					c.asReader("FOO", c.collection(), ""),
					c.asReader(http.MethodDelete, dir+"/"+name, "")); err != nil {
					return err
				}
				return c.get(c.nowhere()).statusIs(http.StatusNotFound)
			},
		},
		{
			ID: "errors/permission-before-the-request", Tier: Reference, Keys: keyAuth, Source: docOrder, Doc: docOrder, Needs: ReadToken | OwnItems,
			Requirement: "Permission comes before the request and the stored state: with a read token, a write is 403 whatever its media type, body or preconditions, and whether or not the item exists.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				gone, err := c.gone()
				if err != nil {
					return err
				}
				return every(func(x *reply) error { return x.statusIs(http.StatusForbidden) },
					c.asReader(http.MethodDelete, c.itemPath(gone.ID), ""),
					c.send(request{method: http.MethodPost, target: c.collection(), as: reader, body: "kit", header: []string{"Content-Type", "text/plain"}}),
					c.asReader(http.MethodPut, c.itemPath(it.ID), c.fill(c.run.desc.Invalid[0]).String()),
					c.send(request{method: http.MethodPut, target: c.itemPath(it.ID), as: reader, body: c.fill(c.run.desc.Replace).String(),
						header: []string{"Content-Type", mediaTypeJSON, "If-Match", staleTag}}))
			},
		},
		{
			ID: "errors/content-encoding-accept-encoding", Tier: Should, Source: "RFC 9110 §15.5.16", Doc: docBodies, Needs: OwnItems,
			Requirement: "A 415 to a body with a Content-Encoding the API does not take (gzip), on POST, PUT or PATCH, carries Accept-Encoding, naming the codings it takes, which gzip is not.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				answers := []*reply{
					c.post(c.fill(c.run.desc.Create), "Content-Encoding", "gzip"),
					c.write(http.MethodPut, c.itemPath(it.ID), c.fill(c.run.desc.Replace).String(), "Content-Encoding", "gzip"),
				}
				if c.run.desc.Patch != nil {
					answers = append(answers, c.write(http.MethodPatch, c.itemPath(it.ID), c.fill(c.run.desc.Patch).String(), "Content-Encoding", "gzip"))
				}
				answers = statusIn(answers, http.StatusUnsupportedMediaType)
				if len(answers) == 0 {
					return skipf("no 415 to a body labelled gzip but sent as it is: the API takes it, or refused it otherwise")
				}
				return every(func(x *reply) error {
					if err := x.headerPresent("Accept-Encoding"); err != nil {
						return err
					}
					if slices.ContainsFunc(listItems(x.responseHeader, "Accept-Encoding"), func(coding string) bool { return strings.HasPrefix(strings.ToLower(coding), "gzip") }) {
						return failf(x, "Accept-Encoding without gzip, which the API refused", describeHeader(x.responseHeader, "Accept-Encoding"))
					}
					return nil
				}, answers...)
			},
		},
	}
}

// errorAnswers makes the errors the API must have a body for: 401 without a token (on an API with
// authentication), 400 for a body that is not JSON and for an invalid body, 404 for an item that
// does not exist and for a path the API does not have. It returns those that came back with an
// error status.
func (c *Client) errorAnswers() ([]*reply, error) {
	gone, err := c.gone()
	if err != nil {
		return nil, err
	}
	answers := []*reply{
		c.write(http.MethodPost, c.collection(), `{"`),
		c.post(c.fill(c.run.desc.Invalid[0])),
		c.remove(c.itemPath(gone.ID)),
		c.get(c.nowhere()),
	}
	if c.run.desc.Auth != nil {
		answers = append(answers, c.anonymously(http.MethodGet, c.collection()))
	}
	answers = statusIn(answers, http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusUnprocessableEntity)
	if len(answers) == 0 {
		return nil, skipf("no 400, 401, 404 or 422 to look at: see create/syntax-error-400 and delete/again-404")
	}
	return answers, nil
}

// holdsMessage reports whether a JSON value holds a string that is not empty, however deep.
func holdsMessage(value any) bool {
	switch v := value.(type) {
	case string:
		return strings.TrimSpace(v) != ""
	case map[string]any:
		for _, member := range v {
			if holdsMessage(member) {
				return true
			}
		}
	case []any:
		for _, element := range v {
			if holdsMessage(element) {
				return true
			}
		}
	}
	return false
}

// wrongMethods sends each method a path does not take: DELETE, PUT and PATCH to the collection,
// POST to an item of the rule's own.
func (c *Client) wrongMethods() ([]*reply, error) {
	it, err := c.newItem()
	if err != nil {
		return nil, err
	}
	body := c.fill(c.run.desc.Create).String()
	return []*reply{
		c.remove(c.collection()),
		c.write(http.MethodPut, c.collection(), body),
		c.write(http.MethodPatch, c.collection(), body),
		c.write(http.MethodPost, c.itemPath(it.ID), body),
	}, nil
}

// nowhere is a path the API does not have, beside the collection.
func (c *Client) nowhere() string {
	dir, _ := path.Split(c.collection())
	return dir + "kit-nothing"
}

// upperFirst is s with its first letter in upper case: users is Users.
func upperFirst(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}
