package kit

import (
	"net/http"
	"strconv"
)

// usersReplaceRules: the rules of this reference only, written for users, of the topic replace.
func usersReplaceRules() []Rule {
	return []Rule{
		{
			ID: "replace/needs-both-fields", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A PUT needs both fields: each one missing is 400, with fields naming it.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return firstError(
					c.write(http.MethodPut, u.path(), `{"name":"Kit Ann Lee"}`).refused("email"),
					c.write(http.MethodPut, u.path(), `{"email":`+jsonString(c.email())+`}`).refused("name"),
					c.write(http.MethodPut, u.path(), `{}`).refused("name", "email"))
			},
		},
		{
			ID: "replace/missing-404", Tier: Reference, Scope: ThisReference, Source: docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "PUT of a user that does not exist is 404: ids are the server's to give, so PUT never creates.",
			check: func(c *Client) error {
				gone, err := c.goneUser()
				if err != nil {
					return err
				}
				email := c.email()
				x := c.write(http.MethodPut, gone.path(), userJSON("Kit Ann", email))
				return firstError(x.statusIs(http.StatusNotFound), c.userNotCreated(x, email))
			},
		},
		{
			ID: "replace/field-rules", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "PUT applies the field rules of a create: a name of white space or a bad e-mail is 400 with fields naming it, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.write(http.MethodPut, u.path(), userJSON("Kit Ann", "Kit <"+c.email()+">"))
				if err := firstError(x.refused("email"), c.userUnchanged(x, u)); err != nil {
					return err
				}
				x = c.write(http.MethodPut, u.path(), userJSON(" \t", c.email()))
				return firstError(x.refused("name"), c.userUnchanged(x, u))
			},
		},
		{
			ID: "replace/values-trimmed", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "PUT stores the name and the e-mail trimmed of the white space around them.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				email := c.email()
				x := c.write(http.MethodPut, u.path(), userJSON(" Kit Ann Lee\t", "\t"+email+" "))
				return x.isUser(user{ID: u.ID, Name: "Kit Ann Lee", Email: email})
			},
		},
		{
			ID: "replace/content-location", Tier: Reference, Scope: ThisReference, Source: "RFC 9110 §8.7; " + docConditional, Doc: docConditional, Needs: OwnItems,
			Requirement: "A PUT answer carries Content-Location: /api/users/{id}, as its body is the stored user.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email)).namesURI("Content-Location", u.path())
			},
		},
		{
			ID: "replace/media-type-415", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A PUT whose Content-Type is not application/json (text/plain, application/merge-patch+json), or whose body has a Content-Encoding, is 415, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				body := userJSON("Kit Ann Lee", c.email())
				for _, header := range [][]string{{"Content-Type", "text/plain"}, {"Content-Type", mediaTypeMerge},
					{"Content-Type", mediaTypeJSON, "Content-Encoding", "gzip"}} {
					x := c.send(request{method: http.MethodPut, target: u.path(), as: writer, body: body, header: header})
					if err := firstError(x.statusIs(http.StatusUnsupportedMediaType), c.userUnchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "replace/over-1-mib-413", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A PUT body of 1 MiB and one byte is 413, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.send(request{method: http.MethodPut, target: u.path(), as: writer, framing: chunked,
					header: []string{"Content-Type", mediaTypeJSON}, body: padded(userJSON("Kit Ann Lee", c.email()), maxBodyBytes+1)})
				return firstError(x.statusIs(http.StatusRequestEntityTooLarge), c.userUnchanged(x, u))
			},
		},
		{
			ID: "replace/id-of-the-path-taken", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "id in a PUT body is taken when it is the id of the path written as a JSON integer, 7: clients send back what they read.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				id := strconv.FormatInt(u.ID, 10)
				x := c.write(http.MethodPut, u.path(), `{"id":`+id+`,"name":"Kit Ann Lee","email":`+jsonString(u.Email)+`}`)
				return firstError(x.succeeded(), x.isUser(user{ID: u.ID, Name: "Kit Ann Lee", Email: u.Email}))
			},
		},
		{
			ID: "replace/other-id-400", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "id in a PUT body that is not the id of the path as a JSON integer (another number, 7.0, 7e0, null, a string) is 400, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, id := range []string{strconv.FormatInt(u.ID+1, 10), "null", jsonString(strconv.FormatInt(u.ID, 10)), strconv.FormatInt(u.ID, 10) + ".5", strconv.FormatInt(u.ID, 10) + ".0", strconv.FormatInt(u.ID, 10) + "e0"} {
					x := c.write(http.MethodPut, u.path(), `{"id":`+id+`,"name":"Kit Ann Lee","email":`+jsonString(u.Email)+`}`)
					if err := firstError(x.statusIs(http.StatusBadRequest), c.userUnchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
			},
		},
	}
}
