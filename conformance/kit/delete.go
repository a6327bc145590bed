package kit

import "net/http"

// deleteRules: DELETE of an item.
func deleteRules() []Rule {
	return []Rule{
		{
			ID: "delete/204", Tier: Must, Source: "RFC 9110 §15.3.5; " + docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "DELETE of an item answers 204 No Content, with no body.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				x := c.send(request{method: http.MethodDelete, target: c.itemPath(it.ID), as: writer, over: ownConnection})
				return firstError(x.statusIs(http.StatusNoContent), x.noBody())
			},
		},
		{
			ID: "delete/gone", Tier: Must, Source: docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "After a DELETE the item is gone: the list no longer holds it.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				x := c.remove(c.itemPath(it.ID))
				if x.status/100 != 2 {
					return skipf("the DELETE answered %s: see delete/204", x.statusLine())
				}
				if listed, found, err := c.findInList(func(other item) bool { return other.ID == it.ID }); err != nil || found {
					return firstError(err, failf(x, "the item gone from the list", "the list holds "+listed.String()))
				}
				return nil
			},
		},
		{
			ID: "delete/again-404", Tier: Must, Source: docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "DELETE of an item already deleted is 404; the state is the same, so DELETE stays idempotent.",
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				return c.remove(c.itemPath(gone.ID)).statusIs(http.StatusNotFound)
			},
		},
	}
}
