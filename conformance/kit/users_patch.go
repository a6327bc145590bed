package kit

import (
	"fmt"
	"net/http"
	"strconv"
)

// usersPatchRules: the rules of this reference only, written for users, of the topic patch.
func usersPatchRules() []Rule {
	return []Rule{
		{
			ID: "patch/empty-400", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: `An empty PATCH, {}, or one of the path's id alone, {"id": 7} on /api/users/7, is 400 without fields: it changes nothing.`,
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, body := range []string{`{}`, fmt.Sprintf(`{"id": %d}`, u.ID)} {
					x := c.write(http.MethodPatch, u.path(), body)
					if err := firstError(x.refused(), c.userUnchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "patch/null-400", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "null for name or email in a PATCH is 400 with fields naming it: both fields are required, so neither can be removed.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, tt := range []struct{ body, field string }{{`{"name":null}`, "name"}, {`{"email":null,"name":"Kit Ann"}`, "email"}} {
					x := c.write(http.MethodPatch, u.path(), tt.body)
					if err := firstError(x.refused(tt.field), c.userUnchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "patch/field-rules", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "PATCH applies the field rules to the fields it names: an empty name or a bad e-mail is 400 with fields naming it, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, tt := range []struct{ body, field string }{
					{`{"name":""}`, "name"}, {`{"email":` + jsonString("Kit <"+c.email()+">") + `}`, "email"},
				} {
					x := c.write(http.MethodPatch, u.path(), tt.body)
					if err := firstError(x.refused(tt.field), c.userUnchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "patch/missing-404", Tier: Reference, Scope: ThisReference, Source: docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "PATCH of a user that does not exist is 404.",
			check: func(c *Client) error {
				gone, err := c.goneUser()
				if err != nil {
					return err
				}
				return c.write(http.MethodPatch, gone.path(), `{"name":"Kit Ann"}`).statusIs(http.StatusNotFound)
			},
		},
		{
			ID: "patch/media-type-415", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A PATCH whose Content-Type is missing or not one it takes (text/plain, JSON Patch), or whose body has a Content-Encoding, is 415, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, contentType := range [][]string{nil, {"Content-Type", "text/plain"}, {"Content-Type", "application/json-patch+json"},
					{"Content-Type", mediaTypeMerge, "Content-Encoding", "gzip"}} {
					x := c.send(request{method: http.MethodPatch, target: u.path(), as: writer, body: `{"name":"Kit Ann Lee"}`, header: contentType})
					if err := firstError(x.statusIs(http.StatusUnsupportedMediaType), c.userUnchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "patch/accept-patch-formats", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "Accept-Patch, on OPTIONS and on a 415 for the media type or for a Content-Encoding, names exactly application/json and application/merge-patch+json.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				if err := c.options(u.path()).listIs("Accept-Patch", mediaTypeJSON, mediaTypeMerge); err != nil {
					return err
				}
				x, err := c.refusedUserPatch()
				if err != nil {
					return err
				}
				encoded := c.write(http.MethodPatch, u.path(), `{"name":"Kit Ann Lee"}`, "Content-Encoding", "gzip")
				return every(func(x *reply) error { return x.listIs("Accept-Patch", mediaTypeJSON, mediaTypeMerge) },
					append([]*reply{x}, statusIn([]*reply{encoded}, http.StatusUnsupportedMediaType)...)...)
			},
		},
		{
			ID: "patch/content-location", Tier: Reference, Scope: ThisReference, Source: "RFC 9110 §8.7; " + docConditional, Doc: docConditional, Needs: OwnItems,
			Requirement: "A PATCH answer carries Content-Location: /api/users/{id}, as its body is the stored user.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return c.write(http.MethodPatch, u.path(), `{"name":"Kit Ann Lee"}`).namesURI("Content-Location", u.path())
			},
		},
		{
			ID: "patch/over-1-mib-413", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A PATCH body of 1 MiB and one byte is 413, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.send(request{method: http.MethodPatch, target: u.path(), as: writer, framing: chunked,
					header: []string{"Content-Type", mediaTypeJSON}, body: padded(`{"name":"Kit Ann Lee"}`, maxBodyBytes+1)})
				return firstError(x.statusIs(http.StatusRequestEntityTooLarge), c.userUnchanged(x, u))
			},
		},
		{
			ID: "patch/id-of-the-path-taken", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "id in a PATCH body is taken when it is the id of the path.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.write(http.MethodPatch, u.path(), `{"id":`+strconv.FormatInt(u.ID, 10)+`,"name":"Kit Ann Lee"}`)
				return firstError(x.succeeded(), x.isUser(user{ID: u.ID, Name: "Kit Ann Lee", Email: u.Email}))
			},
		},
		{
			ID: "patch/other-id-400", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "id in a PATCH body that is not the id of the path, null included, is 400, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, id := range []string{strconv.FormatInt(u.ID+1, 10), "null"} {
					x := c.write(http.MethodPatch, u.path(), `{"id":`+id+`,"name":"Kit Ann Lee"}`)
					if err := firstError(x.statusIs(http.StatusBadRequest), c.userUnchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
			},
		},
	}
}

// refusedPatch sends a PATCH in text/plain: the 415 whose headers a rule looks at.
func (c *Client) refusedUserPatch() (*reply, error) {
	u, err := c.newUser("Kit Ann")
	if err != nil {
		return nil, err
	}
	x := c.send(request{method: http.MethodPatch, target: u.path(), as: writer, body: `{"name":"Kit Ann Lee"}`,
		header: []string{"Content-Type", "text/plain"}})
	if x.status != http.StatusUnsupportedMediaType {
		return nil, skipf("no 415 to look at: see patch/media-type-415")
	}
	return x, nil
}
