package kit

import (
	"net/http"
	"reflect"
)

// replaceRules: PUT of an item, a whole replacement with the description's second body.
func replaceRules() []Rule {
	return []Rule{
		{
			ID: "replace/200-item", Tier: Must, Source: docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "PUT of an item with a valid body answers 200 with the replaced item, its id kept.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				body := c.fill(c.run.desc.Replace)
				x := c.write(http.MethodPut, c.itemPath(it.ID), body.String())
				return firstError(x.statusIs(http.StatusOK), x.isItemWith(it.ID, body))
			},
		},
		{
			ID: "replace/stored", Tier: Must, Source: docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "After a PUT the item is the replacement: it reads, and is listed, with the new values.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				body := c.fill(c.run.desc.Replace)
				x := c.write(http.MethodPut, c.itemPath(it.ID), body.String())
				if x.status/100 != 2 {
					return skipf("the PUT answered %s: see replace/200-item", x.statusLine())
				}
				return c.storedWith(x, it.ID, body)
			},
		},
		{
			ID: "replace/idempotent", Tier: Must, Source: "RFC 9110 §9.2.2", Doc: docRoutes, Needs: OwnItems,
			Requirement: "PUT is idempotent: the same PUT again answers as the first did, and leaves the same item.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				body := c.fill(c.run.desc.Replace)
				first := c.write(http.MethodPut, c.itemPath(it.ID), body.String())
				want, err := first.decodeItem()
				if err != nil {
					return skipf("the first PUT answered %s: see replace/200-item", first.statusLine())
				}
				second := c.write(http.MethodPut, c.itemPath(it.ID), body.String())
				return firstError(second.statusIs(first.status), second.isItem(want), c.storedWith(second, it.ID, body))
			},
		},
		{
			ID: "replace/invalid-refused", Tier: Should, Source: "RFC 9110 §9.3.4", Doc: docBodies, Needs: OwnItems,
			Requirement: "A PUT with an invalid body, each of the description's, is refused with 400 (or 422 at this tier), and changes nothing.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				for _, invalid := range c.run.desc.Invalid {
					x := c.write(http.MethodPut, c.itemPath(it.ID), c.fill(invalid).String())
					if err := firstError(x.statusIs(http.StatusBadRequest, http.StatusUnprocessableEntity), c.unchanged(x, it)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "replace/no-etag", Tier: Should, Source: "RFC 9110 §9.3.4", Doc: docConditional, Needs: OwnItems,
			Requirement: "A PUT answer carries no ETag when the item stored is not the body as sent (it has an id the body has not): a client reads the item for its tag.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				body := c.fill(c.run.desc.Replace)
				x := c.write(http.MethodPut, c.itemPath(it.ID), body.String())
				if x.status/100 != 2 {
					return skipf("the PUT answered %s: see replace/200-item", x.statusLine())
				}
				if stored, found, err := c.find(it.ID); err != nil || !found || reflect.DeepEqual(stored.members, map[string]any(body)) {
					return skipf("the item is stored as sent, so its PUT may carry an ETag")
				}
				return x.headerAbsent("ETag")
			},
		},
	}
}
