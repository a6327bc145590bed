package kit

import "net/http"

// usersDeleteRules: the rules of this reference only, written for users, of the topic delete.
func usersDeleteRules() []Rule {
	return []Rule{
		{
			ID: "delete/no-content-type", Tier: Reference, Scope: ThisReference, Source: docResponses, Doc: docResponses, Needs: OwnItems,
			Requirement: "A 204, to DELETE or OPTIONS, has no Content-Type.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				answers := statusIn([]*reply{c.options(usersCollection), c.remove(u.path())}, http.StatusNoContent)
				if len(answers) == 0 {
					return skipf("no 204 to look at: see delete/204")
				}
				return every(func(x *reply) error { return x.headerAbsent("Content-Type") }, answers...)
			},
		},
		{
			ID: "delete/body-ignored", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
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
