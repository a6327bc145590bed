package kit

import (
	"net/http"
	"strings"
)

// createRules: POST to the collection, with the description's bodies.
func createRules() []Rule {
	return []Rule{
		{
			ID: "create/201", Tier: Must, Source: docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "POST of a valid body to the collection answers 201 Created.",
			check:       func(c *Client) error { return c.post(c.fill(c.run.desc.Create)).statusIs(http.StatusCreated) },
		},
		{
			ID: "create/201-body-is-the-item", Tier: Must, Source: docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "The answer to a create is the new item: an id, a number or a string, and each member with the value sent.",
			check: func(c *Client) error {
				body := c.fill(c.run.desc.Create)
				_, err := c.post(body).itemHolding(body)
				return err
			},
		},
		{
			ID: "create/201-location", Tier: Should, Source: "RFC 9110 §15.3.2", Doc: docRoutes, Needs: OwnItems,
			Requirement: "The answer to a create carries Location, the URI of the new item, relative or absolute: the collection's path, then the id.",
			check: func(c *Client) error {
				x := c.post(c.fill(c.run.desc.Create))
				it, err := x.decodeItem()
				if x.status/100 != 2 || err != nil {
					return skipf("no item created to look at: see create/201")
				}
				return x.namesURI("Location", c.itemPath(it.ID))
			},
		},
		{
			ID: "create/location-reads-back", Tier: Should, Source: "RFC 9110 §15.3.2, §8.8.3", Doc: docRoutes, Needs: OwnItems,
			Requirement: "A GET of a create's Location answers the item the 201 answered, member for member, and the ETag the 201 carried, if it carried one: a client reads its own write.",
			check: func(c *Client) error {
				x := c.post(c.fill(c.run.desc.Create))
				created, err := x.decodeItem()
				location, onTheServer := x.uriOf("Location")
				if x.status/100 != 2 || err != nil || !onTheServer {
					return skipf("no Location of a created item to read: see create/201 and create/201-location")
				}
				read := c.get(location.RequestURI())
				if err := firstError(read.statusIs(http.StatusOK), read.isItem(created)); err != nil {
					return err
				}
				if etag := x.responseHeader.Get("ETag"); etag != "" && read.responseHeader.Get("ETag") != etag {
					return failf(read, "ETag: "+etag+", as the 201 said", describeHeader(read.responseHeader, "ETag"))
				}
				return nil
			},
		},
		{
			ID: "create/201-etag", Tier: Reference, Source: docConditional, Doc: docConditional, Needs: OwnItems,
			Requirement: "The answer to a create carries the new item's strong ETag, the one a GET of the item answers with.",
			check: func(c *Client) error {
				x := c.post(c.fill(c.run.desc.Create))
				it, err := x.decodeItem()
				if x.status/100 != 2 || err != nil {
					return skipf("no item created to look at: see create/201")
				}
				return x.tagIsCurrent(c, c.itemPath(it.ID))
			},
		},
		{
			ID: "create/each-post-a-new-item", Tier: Must, Source: docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "Each POST creates another item, with an id of its own.",
			check: func(c *Client) error {
				first, err := c.newItem()
				if err != nil {
					return err
				}
				x := c.post(c.fill(c.run.desc.Create))
				second, err := x.decodeItem()
				if err != nil {
					return err
				}
				if second.ID == first.ID {
					return failf(x, "an id other than the first item's, "+first.ID, x.summary())
				}
				return nil
			},
		},
		{
			ID: "create/invalid-refused", Tier: Must, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A create with an invalid body, each of the description's, is refused with 400 (or 422 at this tier), and creates nothing.",
			check: func(c *Client) error {
				for _, invalid := range c.run.desc.Invalid {
					body := c.fill(invalid)
					x := c.post(body)
					if err := firstError(x.statusIs(http.StatusBadRequest, http.StatusUnprocessableEntity), c.notCreated(x, body)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "create/syntax-error-400", Tier: Must, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A body that is not valid JSON (the create body with a comma doubled, a colon missing, its end cut off, or single quotes) is answered 400.",
			check: func(c *Client) error {
				valid := c.fill(c.run.desc.Create).String()
				return every(func(x *reply) error { return x.statusIs(http.StatusBadRequest) },
					c.write(http.MethodPost, c.collection(), strings.Replace(valid, ":", ":,,", 1)),
					c.write(http.MethodPost, c.collection(), strings.Replace(valid, ":", " ", 1)),
					c.write(http.MethodPost, c.collection(), strings.TrimSuffix(valid, "}")),
					c.write(http.MethodPost, c.collection(), strings.ReplaceAll(valid, `"`, `'`)))
			},
		},
		{
			ID: "create/charset-utf-8-taken", Tier: Should, Source: "RFC 8259 §11", Doc: docBodies, Needs: OwnItems,
			Requirement: "A POST whose Content-Type is application/json with charset=utf-8, in any case, quoted or not, is taken.",
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.succeeded() },
					c.postWithType("application/json; charset=utf-8"), c.postWithType(`application/json;charset="UTF-8"`))
			},
		},
		{
			ID: "create/media-type-any-case", Tier: Should, Source: "RFC 9110 §8.3.1", Doc: docBodies, Needs: OwnItems,
			Requirement: "Media types compare case-insensitively: Application/JSON is taken.",
			check:       func(c *Client) error { return c.postWithType("Application/JSON").succeeded() },
		},
	}
}

// postWithType POSTs a valid body with this Content-Type.
func (c *Client) postWithType(contentType string) *reply {
	return c.send(request{method: http.MethodPost, target: c.collection(), as: writer, body: c.fill(c.run.desc.Create).String(),
		header: []string{"Content-Type", contentType}})
}
