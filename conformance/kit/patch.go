package kit

import "net/http"

// patchRules: PATCH of an item, a JSON Merge Patch (RFC 7396). They run against an API whose
// description declares patch.
func patchRules() []Rule {
	return []Rule{
		{
			ID: "patch/merges", Tier: Reference, Keys: keyPatch, Source: "RFC 7396; " + docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "PATCH changes only the members it names, as a JSON Merge Patch: the answer, the item and the list show the others kept.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				patch := c.fill(c.run.desc.Patch)
				want := merged(it, patch)
				x := c.write(http.MethodPatch, c.itemPath(it.ID), patch.String())
				return firstError(x.succeeded(), x.isItem(want), c.storedWith(x, it.ID, Body(want.members)))
			},
		},
		{
			ID: "patch/merge-patch-media-type", Tier: Reference, Keys: keyPatch, Source: "RFC 7396 §4; " + docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "PATCH takes application/merge-patch+json as well as application/json, and applies it.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				patch := c.fill(c.run.desc.Patch)
				x := c.send(request{method: http.MethodPatch, target: c.itemPath(it.ID), as: writer, body: patch.String(),
					header: []string{"Content-Type", mediaTypeMerge}})
				return firstError(x.succeeded(), c.storedWith(x, it.ID, Body(merged(it, patch).members)))
			},
		},
		{
			ID: "patch/415-accept-patch", Tier: Should, Keys: keyPatch, Source: "RFC 5789 §2.2", Doc: docBodies, Needs: OwnItems,
			Requirement: "A 415 to PATCH carries Accept-Patch, naming the patch formats the item takes.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				x := c.send(request{method: http.MethodPatch, target: c.itemPath(it.ID), as: writer, body: c.fill(c.run.desc.Patch).String(),
					header: []string{"Content-Type", "text/plain"}})
				if x.status != http.StatusUnsupportedMediaType {
					return skipf("a PATCH in text/plain answered %s, not 415: no 415 to look at", x.statusLine())
				}
				return x.headerPresent("Accept-Patch")
			},
		},
		{
			ID: "patch/options-accept-patch", Tier: Should, Keys: keyPatch, Source: "RFC 5789 §3.1", Doc: docRoutes, Needs: OwnItems,
			Requirement: "OPTIONS of an item carries Accept-Patch, as the item takes PATCH.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				return c.options(c.itemPath(it.ID)).headerPresent("Accept-Patch")
			},
		},
		{
			ID: "patch/etag", Tier: Reference, Keys: keyPatch, Source: docConditional, Doc: docConditional, Needs: OwnItems,
			Requirement: "A PATCH answer carries the item's new strong ETag, the one a GET of it answers with.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				return c.write(http.MethodPatch, c.itemPath(it.ID), c.fill(c.run.desc.Patch).String()).tagIsCurrent(c, c.itemPath(it.ID))
			},
		},
	}
}
