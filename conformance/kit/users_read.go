package kit

import (
	"net/http"
	"strconv"
	"strings"
)

// usersReadRules: the rules of this reference only, written for users, of the topic read.
func usersReadRules() []Rule {
	return []Rule{
		{
			ID: "read/representation", Tier: Reference, Scope: ThisReference, Source: docResponses, Doc: docResponses, Needs: OwnItems,
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
			ID: "read/non-canonical-id-404", Tier: Reference, Scope: ThisReference, Source: docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "An id not in canonical decimal (07, +7, 7.0, -7, 7e0, 0x7, 0, abc, or beyond 2^63−1) names no resource: GET, PUT and DELETE are 404, and change nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				id := strconv.FormatInt(u.ID, 10)
				for _, other := range []string{"0" + id, "+" + id, id + ".0", "-" + id, id + "e0", "0x" + strconv.FormatInt(u.ID, 16), "0", "abc", "9223372036854775808"} {
					path := usersCollection + "/" + other
					for _, x := range []*reply{c.get(path), c.write(http.MethodPut, path, userJSON("Kit Ann Lee", c.email())), c.remove(path)} {
						if err := firstError(x.statusIs(http.StatusNotFound), c.userUnchanged(x, u)); err != nil {
							return err
						}
					}
				}
				return nil
			},
		},
		{
			ID: "read/equal-representations-equal-etags", Tier: Reference, Scope: ThisReference, Source: docConditional, Doc: docConditional, Needs: OwnItems,
			Requirement: "Equal representations have equal ETags: a user changed and changed back has its first ETag again.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				first, err := c.currentStrongTag(u.path())
				if err != nil {
					return err
				}
				c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email))
				c.write(http.MethodPut, u.path(), userJSON(u.Name, u.Email))
				return c.get(u.path()).headerIs("ETag", first)
			},
		},
		{
			ID: "read/cache-control", Tier: Reference, Scope: ThisReference, Source: docResponses, Doc: docResponses, Needs: OwnItems,
			Requirement: "A 200 to GET or HEAD under /api/ carries Cache-Control: private, no-cache.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				answers := statusIn([]*reply{c.get(u.path()), c.head(u.path()), c.get(usersCollection), c.head(usersCollection)}, http.StatusOK)
				if len(answers) == 0 {
					return skipf("no 200 to GET or HEAD to look at: see reachable/list-200")
				}
				return every(func(x *reply) error { return x.headerIs("Cache-Control", "private, no-cache") }, answers...)
			},
		},
		{
			ID: "read/body-ignored", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
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
