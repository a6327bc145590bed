package kit

import "net/http"

// uniqueRules: the field no two items may share, which the description names. They run against
// an API whose description declares unique.
func uniqueRules() []Rule {
	return []Rule{
		{
			ID: "unique/taken-409", Tier: Reference, Keys: keyUnique, Source: "RFC 9110 §15.5.10; " + docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A create whose unique field has another item's value (in another case too, where the description compares it without case) is 409, and creates nothing.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				for _, value := range c.takenValues(it) {
					body := c.fill(c.run.desc.Create).with(c.run.desc.Unique.Field, value)
					x := c.post(body)
					if err := firstError(x.statusIs(http.StatusConflict), c.notCreated(x, body)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "unique/taken-on-replace-409", Tier: Reference, Keys: keyUnique, Source: "RFC 9110 §15.5.10; " + docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A PUT that gives the unique field another item's value is 409, and changes nothing.",
			check: func(c *Client) error {
				items, err := c.newItems(2)
				if err != nil {
					return err
				}
				for _, value := range c.takenValues(items[0]) {
					x := c.write(http.MethodPut, c.itemPath(items[1].ID), c.fill(c.run.desc.Replace).with(c.run.desc.Unique.Field, value).String())
					if err := firstError(x.statusIs(http.StatusConflict), c.unchanged(x, items[1])); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "unique/taken-on-patch-409", Tier: Reference, Keys: keyUnique | keyPatch, Source: "RFC 9110 §15.5.10; " + docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A PATCH that gives the unique field another item's value is 409, and changes nothing.",
			check: func(c *Client) error {
				items, err := c.newItems(2)
				if err != nil {
					return err
				}
				for _, value := range c.takenValues(items[0]) {
					x := c.write(http.MethodPatch, c.itemPath(items[1].ID), Body{c.run.desc.Unique.Field: value}.String())
					if err := firstError(x.statusIs(http.StatusConflict), c.unchanged(x, items[1])); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "unique/own-value-kept", Tier: Reference, Keys: keyUnique, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A PUT may keep the item's own value of the unique field (in another case too, where it is compared without case): it goes ahead, not 409.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				for _, value := range c.takenValues(it) {
					x := c.write(http.MethodPut, c.itemPath(it.ID), c.fill(c.run.desc.Replace).with(c.run.desc.Unique.Field, value).String())
					if err := x.succeeded(); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "unique/delete-frees-the-value", Tier: Reference, Keys: keyUnique, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "The unique value of a deleted item is free again: a new item may have it.",
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				field := c.run.desc.Unique.Field
				return c.post(c.fill(c.run.desc.Create).with(field, gone.members[field])).succeeded()
			},
		},
	}
}

// takenValues are the values of an item's unique field that another item may not have: its own,
// and, where the description compares it without case, the same in other case.
func (c *Client) takenValues(it item) []any {
	value := it.members[c.run.desc.Unique.Field]
	values := []any{value}
	if s, ok := value.(string); ok && c.run.desc.Unique.IgnoreCase && otherCase(s) != s {
		values = append(values, otherCase(s))
	}
	return values
}
