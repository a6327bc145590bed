package kit

import (
	"net/http"
	"strconv"
	"strings"
)

// replaceRules: PUT /api/users/{id}, a whole replacement.
func replaceRules() []Rule {
	return []Rule{
		{
			ID: "replace/200-user", Tier: Must, Source: docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "PUT /api/users/{id} with a name and an e-mail answers 200 with the replaced user, its id kept.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				want := user{ID: u.ID, Name: "Kit Ann Lee", Email: c.email()}
				x := c.write(http.MethodPut, u.path(), userJSON(want.Name, want.Email))
				return firstError(x.statusIs(http.StatusOK), x.isUser(want))
			},
		},
		{
			ID: "replace/stored", Tier: Must, Source: docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "After a PUT the user is the replacement: it reads, and is listed, with the new name and e-mail.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				want := user{ID: u.ID, Name: "Kit Ann Lee", Email: c.email()}
				x := c.write(http.MethodPut, u.path(), userJSON(want.Name, want.Email))
				if x.status/100 != 2 {
					return skipf("the PUT answered %s: see replace/200-user", x.statusLine())
				}
				return firstError(c.stored(x, want), c.listed(x, want))
			},
		},
		{
			ID: "replace/idempotent", Tier: Must, Source: "RFC 9110 §9.2.2", Doc: docRoutes, Needs: OwnUsers,
			Requirement: "PUT is idempotent: the same PUT again answers as the first did, and leaves the same user.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				body := userJSON("Kit Ann Lee", c.email())
				first := c.write(http.MethodPut, u.path(), body)
				want, err := first.decodeUser()
				if err != nil {
					return skipf("the first PUT answered %s: see replace/200-user", first.statusLine())
				}
				second := c.write(http.MethodPut, u.path(), body)
				return firstError(second.statusIs(first.status), second.isUser(want), c.stored(second, want))
			},
		},
		{
			ID: "replace/partial-refused", Tier: Should, Source: "RFC 9110 §9.3.4", Doc: docBodies, Needs: OwnUsers,
			Requirement: "A PUT without the name or without the e-mail is refused with 400 (or 422 at this tier), and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, body := range []string{`{"name":"Kit Ann Lee"}`, `{"email":` + jsonString(c.email()) + `}`} {
					x := c.write(http.MethodPut, u.path(), body)
					if err := firstError(x.statusIs(http.StatusBadRequest, http.StatusUnprocessableEntity), c.unchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "replace/needs-both-fields", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
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
			ID: "replace/missing-404", Tier: Reference, Source: docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "PUT of a user that does not exist is 404: ids are the server's to give, so PUT never creates.",
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				email := c.email()
				x := c.write(http.MethodPut, gone.path(), userJSON("Kit Ann", email))
				return firstError(x.statusIs(http.StatusNotFound), c.notCreated(x, email))
			},
		},
		{
			ID: "replace/field-rules", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "PUT applies the field rules of a create: a name of white space or a bad e-mail is 400 with fields naming it, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.write(http.MethodPut, u.path(), userJSON("Kit Ann", "Kit <"+c.email()+">"))
				if err := firstError(x.refused("email"), c.unchanged(x, u)); err != nil {
					return err
				}
				x = c.write(http.MethodPut, u.path(), userJSON(" \t", c.email()))
				return firstError(x.refused("name"), c.unchanged(x, u))
			},
		},
		{
			ID: "replace/values-trimmed", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
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
			ID: "replace/content-location", Tier: Reference, Source: "RFC 9110 §8.7; " + docConditional, Doc: docConditional, Needs: OwnUsers,
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
			ID: "replace/no-etag", Tier: Should, Source: "RFC 9110 §9.3.4", Doc: docConditional, Needs: OwnUsers,
			Requirement: "A PUT answer carries no ETag: the user stored is not the body as sent (it is trimmed and given its id), so a client reads the user for its tag.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.write(http.MethodPut, u.path(), userJSON(" Kit Ann Lee ", u.Email))
				if x.status/100 != 2 {
					return skipf("the PUT answered %s: see replace/200-user", x.statusLine())
				}
				return x.headerAbsent("ETag")
			},
		},
		{
			ID: "replace/email-taken-409", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A PUT to an e-mail another user has, in any case, is 409, and changes nothing.",
			check: func(c *Client) error {
				users, err := c.newUsers("Kit Ann", "Kit Bob")
				if err != nil {
					return err
				}
				x := c.write(http.MethodPut, users[1].path(), userJSON("Kit Bob", strings.ToUpper(users[0].Email)))
				return firstError(x.statusIs(http.StatusConflict), c.unchanged(x, users[1]))
			},
		},
		{
			ID: "replace/own-email-any-case", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A PUT may keep the user's own e-mail, in another case too: 200, not 409.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", strings.ToUpper(u.Email))).succeeded()
			},
		},
		{
			ID: "replace/media-type-415", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
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
					if err := firstError(x.statusIs(http.StatusUnsupportedMediaType), c.unchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "replace/over-1-mib-413", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A PUT body of 1 MiB and one byte is 413, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.send(request{method: http.MethodPut, target: u.path(), as: writer, framing: chunked,
					header: []string{"Content-Type", mediaTypeJSON}, body: padded(userJSON("Kit Ann Lee", c.email()), maxBodyBytes+1)})
				return firstError(x.statusIs(http.StatusRequestEntityTooLarge), c.unchanged(x, u))
			},
		},
		{
			ID: "replace/id-of-the-path-taken", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
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
			ID: "replace/other-id-400", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "id in a PUT body that is not the id of the path as a JSON integer (another number, 7.0, 7e0, null, a string) is 400, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, id := range []string{strconv.FormatInt(u.ID+1, 10), "null", jsonString(strconv.FormatInt(u.ID, 10)), strconv.FormatInt(u.ID, 10) + ".5", strconv.FormatInt(u.ID, 10) + ".0", strconv.FormatInt(u.ID, 10) + "e0"} {
					x := c.write(http.MethodPut, u.path(), `{"id":`+id+`,"name":"Kit Ann Lee","email":`+jsonString(u.Email)+`}`)
					if err := firstError(x.statusIs(http.StatusBadRequest), c.unchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
			},
		},
	}
}
