package kit

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// patchRules: PATCH /api/users/{id}, a JSON Merge Patch (RFC 7396).
func patchRules() []Rule {
	return []Rule{
		{
			ID: "patch/merges", Tier: Reference, Source: "RFC 7396; " + docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "PATCH changes only the fields it names, as a JSON Merge Patch: the answer, the user and the list show the other kept.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				renamed := user{ID: u.ID, Name: "Kit Ann Lee", Email: u.Email}
				x := c.write(http.MethodPatch, u.path(), `{"name":"Kit Ann Lee"}`)
				if err := firstError(x.succeeded(), x.isUser(renamed), c.stored(x, renamed)); err != nil {
					return err
				}
				moved := user{ID: u.ID, Name: renamed.Name, Email: c.email()}
				x = c.write(http.MethodPatch, u.path(), `{"email":`+jsonString(moved.Email)+`}`)
				return firstError(x.succeeded(), x.isUser(moved), c.stored(x, moved), c.listed(x, moved))
			},
		},
		{
			ID: "patch/merge-patch-media-type", Tier: Reference, Source: "RFC 7396 §4; " + docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "PATCH takes application/merge-patch+json as well as application/json.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return c.send(request{method: http.MethodPatch, target: u.path(), as: writer, body: `{"name":"Kit Ann Lee"}`,
					header: []string{"Content-Type", mediaTypeMerge}}).succeeded()
			},
		},
		{
			ID: "patch/empty-400", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: `An empty PATCH, {}, or one of the path's id alone, {"id": 7} on /api/users/7, is 400 without fields: it changes nothing.`,
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, body := range []string{`{}`, fmt.Sprintf(`{"id": %d}`, u.ID)} {
					x := c.write(http.MethodPatch, u.path(), body)
					if err := firstError(x.refused(), c.unchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "patch/null-400", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "null for name or email in a PATCH is 400 with fields naming it: both fields are required, so neither can be removed.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, tt := range []struct{ body, field string }{{`{"name":null}`, "name"}, {`{"email":null,"name":"Kit Ann"}`, "email"}} {
					x := c.write(http.MethodPatch, u.path(), tt.body)
					if err := firstError(x.refused(tt.field), c.unchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "patch/field-rules", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
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
					if err := firstError(x.refused(tt.field), c.unchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "patch/missing-404", Tier: Reference, Source: docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "PATCH of a user that does not exist is 404.",
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				return c.write(http.MethodPatch, gone.path(), `{"name":"Kit Ann"}`).statusIs(http.StatusNotFound)
			},
		},
		{
			ID: "patch/media-type-415", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A PATCH whose Content-Type is missing or not one it takes (text/plain, JSON Patch), or whose body has a Content-Encoding, is 415, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, contentType := range [][]string{nil, {"Content-Type", "text/plain"}, {"Content-Type", "application/json-patch+json"},
					{"Content-Type", mediaTypeMerge, "Content-Encoding", "gzip"}} {
					x := c.send(request{method: http.MethodPatch, target: u.path(), as: writer, body: `{"name":"Kit Ann Lee"}`, header: contentType})
					if err := firstError(x.statusIs(http.StatusUnsupportedMediaType), c.unchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "patch/415-accept-patch", Tier: Should, Source: "RFC 5789 §2.2", Doc: docBodies, Needs: OwnUsers,
			Requirement: "A 415 to PATCH carries Accept-Patch, naming the patch formats the user takes.",
			check: func(c *Client) error {
				x, err := c.refusedPatch()
				if err != nil {
					return err
				}
				return x.headerPresent("Accept-Patch")
			},
		},
		{
			ID: "patch/options-accept-patch", Tier: Should, Source: "RFC 5789 §3.1", Doc: docRoutes, Needs: OwnUsers,
			Requirement: "OPTIONS of a user carries Accept-Patch, as the user takes PATCH.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return c.options(u.path()).headerPresent("Accept-Patch")
			},
		},
		{
			ID: "patch/accept-patch-formats", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "Accept-Patch, on OPTIONS and on a 415 for the media type or for a Content-Encoding, names exactly application/json and application/merge-patch+json.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				if err := c.options(u.path()).listIs("Accept-Patch", mediaTypeJSON, mediaTypeMerge); err != nil {
					return err
				}
				x, err := c.refusedPatch()
				if err != nil {
					return err
				}
				encoded := c.write(http.MethodPatch, u.path(), `{"name":"Kit Ann Lee"}`, "Content-Encoding", "gzip")
				return every(func(x *reply) error { return x.listIs("Accept-Patch", mediaTypeJSON, mediaTypeMerge) },
					append([]*reply{x}, statusIn([]*reply{encoded}, http.StatusUnsupportedMediaType)...)...)
			},
		},
		{
			ID: "patch/content-location", Tier: Reference, Source: "RFC 9110 §8.7; " + docConditional, Doc: docConditional, Needs: OwnUsers,
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
			ID: "patch/etag", Tier: Reference, Source: docConditional, Doc: docConditional, Needs: OwnUsers,
			Requirement: "A PATCH answer carries the user's new ETag, the one a GET of it answers with.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return c.write(http.MethodPatch, u.path(), `{"name":"Kit Ann Lee"}`).tagIsCurrent(c, u.path())
			},
		},
		{
			ID: "patch/email-taken-409", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A PATCH to an e-mail another user has, in any case, is 409, and changes nothing.",
			check: func(c *Client) error {
				users, err := c.newUsers("Kit Ann", "Kit Bob")
				if err != nil {
					return err
				}
				x := c.write(http.MethodPatch, users[1].path(), `{"email":`+jsonString(strings.ToUpper(users[0].Email))+`}`)
				return firstError(x.statusIs(http.StatusConflict), c.unchanged(x, users[1]))
			},
		},
		{
			ID: "patch/over-1-mib-413", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A PATCH body of 1 MiB and one byte is 413, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.send(request{method: http.MethodPatch, target: u.path(), as: writer, framing: chunked,
					header: []string{"Content-Type", mediaTypeJSON}, body: padded(`{"name":"Kit Ann Lee"}`, maxBodyBytes+1)})
				return firstError(x.statusIs(http.StatusRequestEntityTooLarge), c.unchanged(x, u))
			},
		},
		{
			ID: "patch/id-of-the-path-taken", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
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
			ID: "patch/other-id-400", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "id in a PATCH body that is not the id of the path, null included, is 400, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, id := range []string{strconv.FormatInt(u.ID+1, 10), "null"} {
					x := c.write(http.MethodPatch, u.path(), `{"id":`+id+`,"name":"Kit Ann Lee"}`)
					if err := firstError(x.statusIs(http.StatusBadRequest), c.unchanged(x, u)); err != nil {
						return err
					}
				}
				return nil
			},
		},
	}
}

// refusedPatch sends a PATCH in text/plain: the 415 whose headers a rule looks at.
func (c *Client) refusedPatch() (*reply, error) {
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
