package kit

import (
	"net/http"
	"strconv"
	"strings"
)

// readRules: GET and HEAD of a user, what every representation carries, and ids.
func readRules() []Rule {
	return []Rule{
		{
			ID: "read/200-user", Tier: Should, Source: docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "GET /api/users/{id} answers 200 with the user: its id, name and e-mail.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.get(u.path())
				return firstError(x.statusIs(http.StatusOK), x.isUser(u))
			},
		},
		{
			ID: "read/missing-404", Tier: Should, Source: docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "GET of a user that does not exist, a deleted one, is 404.",
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				return c.get(gone.path()).statusIs(http.StatusNotFound)
			},
		},
		{
			ID: "read/representation", Tier: Reference, Source: docResponses, Doc: docResponses, Needs: OwnUsers,
			Requirement: `A user is exactly {"id": ..., "name": ..., "email": ...}, its members in that order.`,
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.get(u.path())
				if names, err := memberNames(x.responseBody); err != nil || strings.Join(names, ",") != "id,name,email" {
					return failf(x, `{"id": ..., "name": ..., "email": ...}, in that order and nothing more`, x.summary())
				}
				return nil
			},
		},
		{
			ID: "read/non-canonical-id-404", Tier: Reference, Source: docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "An id not in canonical decimal (07, +7, 7.0, -7, 7e0, 0x7, 0, abc, or beyond 2^63−1) names no resource: GET, PUT and DELETE are 404, and change nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				id := strconv.FormatInt(u.ID, 10)
				for _, other := range []string{"0" + id, "+" + id, id + ".0", "-" + id, id + "e0", "0x" + strconv.FormatInt(u.ID, 16), "0", "abc", "9223372036854775808"} {
					path := collection + "/" + other
					for _, x := range []*reply{c.get(path), c.write(http.MethodPut, path, userJSON("Kit Ann Lee", c.email())), c.remove(path)} {
						if err := firstError(x.statusIs(http.StatusNotFound), c.unchanged(x, u)); err != nil {
							return err
						}
					}
				}
				return nil
			},
		},
		{
			ID: "read/head-200", Tier: Must, Source: "RFC 9110 §9.1", Doc: docRoutes,
			Requirement: "HEAD /api/users answers as GET does: 200 (every general-purpose server supports GET and HEAD).",
			check:       func(c *Client) error { return c.head(collection).statusIs(http.StatusOK) },
		},
		{
			ID: "read/head-no-body", Tier: Must, Source: "RFC 9110 §9.3.2", Doc: docRoutes, Needs: OwnUsers,
			Requirement: "An answer to HEAD has no body, whatever its status.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				gone, err := c.gone()
				if err != nil {
					return err
				}
				return every((*reply).noBody, c.head(collection), c.head(u.path()), c.head(gone.path()),
					c.send(request{method: http.MethodHead, target: collection}))
			},
		},
		{
			ID: "read/head-same-headers", Tier: Should, Source: "RFC 9110 §9.3.2", Doc: docRoutes, Needs: OwnUsers,
			Requirement: "HEAD carries the header fields GET would: the same status, Content-Type, ETag and Cache-Control (Content-Length it may leave out).",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				get, head := c.get(u.path()), c.head(u.path())
				if err := head.statusIs(get.status); err != nil {
					return err
				}
				for _, name := range []string{"Content-Type", "ETag", "Cache-Control"} {
					if want := get.responseHeader.Values(name); strings.Join(head.responseHeader.Values(name), "\n") != strings.Join(want, "\n") {
						return failf(head, describeHeader(get.responseHeader, name)+", as GET has", describeHeader(head.responseHeader, name))
					}
				}
				return nil
			},
		},
		{
			ID: "read/etag", Tier: Should, Source: "RFC 9110 §8.8.3", Doc: docConditional, Needs: OwnUsers,
			Requirement: "GET of a user and of the list carries a strong ETag.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, x := range []*reply{c.get(u.path()), c.get(collection)} {
					if _, err := x.etag(); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "read/etag-follows-the-user", Tier: Should, Source: "RFC 9110 §8.8.1", Doc: docConditional, Needs: OwnUsers,
			Requirement: "A user's ETag stays the same while the user does, and changes when the user changes.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				first, err := c.currentTag(u.path())
				if err != nil {
					return err
				}
				again := c.get(u.path())
				if err := again.headerIs("ETag", first); err != nil {
					return err
				}
				if err := c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email)).succeeded(); err != nil {
					return skipf("could not change the user with PUT: see replace/200-user")
				}
				if changed := c.get(u.path()); changed.responseHeader.Get("ETag") == first {
					return failf(changed, "an ETag other than "+first+", since the name changed", "ETag: "+first)
				}
				return nil
			},
		},
		{
			ID: "read/equal-representations-equal-etags", Tier: Reference, Source: docConditional, Doc: docConditional, Needs: OwnUsers,
			Requirement: "Equal representations have equal ETags: a user changed and changed back has its first ETag again.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				first, err := c.currentTag(u.path())
				if err != nil {
					return err
				}
				c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email))
				c.write(http.MethodPut, u.path(), userJSON(u.Name, u.Email))
				return c.get(u.path()).headerIs("ETag", first)
			},
		},
		{
			ID: "read/cache-control", Tier: Reference, Source: docResponses, Doc: docResponses, Needs: OwnUsers,
			Requirement: "A 200 to GET or HEAD under /api/ carries Cache-Control: private, no-cache.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				answers := statusIn([]*reply{c.get(u.path()), c.head(u.path()), c.get(collection), c.head(collection)}, http.StatusOK)
				if len(answers) == 0 {
					return skipf("no 200 to GET or HEAD to look at: see reachable/list-200")
				}
				return every(func(x *reply) error { return x.headerIs("Cache-Control", "private, no-cache") }, answers...)
			},
		},
		{
			ID: "read/body-ignored", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A body on GET is ignored, whatever it holds: 200 with the user.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.send(request{method: http.MethodGet, target: u.path(), as: reader, body: "{not json", header: []string{"Content-Type", "text/plain"}})
				return firstError(x.statusIs(http.StatusOK), x.isUser(u))
			},
		},
	}
}
