package kit

import "net/http"

// deleteRules: DELETE /api/users/{id}.
func deleteRules() []Rule {
	return []Rule{
		{
			ID: "delete/204", Tier: Must, Source: "RFC 9110 §15.3.5; " + docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "DELETE /api/users/{id} answers 204 No Content, with no body.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.send(request{method: http.MethodDelete, target: u.path(), as: writer, over: ownConnection})
				return firstError(x.statusIs(http.StatusNoContent), x.noBody())
			},
		},
		{
			ID: "delete/gone", Tier: Must, Source: docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "After a DELETE the user is gone: the list no longer holds it.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.remove(u.path())
				if x.status/100 != 2 {
					return skipf("the DELETE answered %s: see delete/204", x.statusLine())
				}
				return c.noneLike(x, func(other user) bool { return other.ID == u.ID })
			},
		},
		{
			ID: "delete/again-404", Tier: Must, Source: docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "DELETE of a user already deleted is 404; the state is the same, so DELETE stays idempotent.",
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				return c.remove(gone.path()).statusIs(http.StatusNotFound)
			},
		},
		{
			ID: "delete/no-content-type", Tier: Reference, Source: docResponses, Doc: docResponses, Needs: OwnUsers,
			Requirement: "A 204, to DELETE or OPTIONS, has no Content-Type.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				answers := statusIn([]*reply{c.options(collection), c.remove(u.path())}, http.StatusNoContent)
				if len(answers) == 0 {
					return skipf("no 204 to look at: see delete/204")
				}
				return every(func(x *reply) error { return x.headerAbsent("Content-Type") }, answers...)
			},
		},
		{
			ID: "delete/frees-the-email", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "The e-mail of a deleted user is free again: a new user may have it.",
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				return c.write(http.MethodPost, collection, userJSON("Kit Ann Again", gone.Email)).succeeded()
			},
		},
		{
			ID: "delete/body-ignored", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A body on DELETE is ignored, whatever it holds: the user is deleted.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return c.send(request{method: http.MethodDelete, target: u.path(), as: writer, body: "\xff\xfe not json",
					header: []string{"Content-Type", "text/plain"}}).succeeded()
			},
		},
	}
}
