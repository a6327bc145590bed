package kit

import (
	"net/http"
	"strings"
)

// readRules: GET and HEAD of an item, and what every representation carries.
func readRules() []Rule {
	return []Rule{
		{
			ID: "read/200-item", Tier: Should, Source: docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "GET of an item answers 200 with the item, as its create answered it.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				x := c.get(c.itemPath(it.ID))
				return firstError(x.statusIs(http.StatusOK), x.isItem(it))
			},
		},
		{
			ID: "read/missing-404", Tier: Should, Source: docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "GET of an item that does not exist, a deleted one, is 404.",
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				return c.get(c.itemPath(gone.ID)).statusIs(http.StatusNotFound)
			},
		},
		{
			ID: "read/head-200", Tier: Must, Source: "RFC 9110 §9.1", Doc: docRoutes,
			Requirement: "HEAD of the collection answers as GET does: 200 (every general-purpose server supports GET and HEAD).",
			check:       func(c *Client) error { return c.head(c.collection()).statusIs(http.StatusOK) },
		},
		{
			ID: "read/head-no-body", Tier: Must, Source: "RFC 9110 §9.3.2", Doc: docRoutes, Needs: OwnItems,
			Requirement: "An answer to HEAD has no body, whatever its status.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				gone, err := c.gone()
				if err != nil {
					return err
				}
				return every((*reply).noBody, c.head(c.collection()), c.head(c.itemPath(it.ID)), c.head(c.itemPath(gone.ID)),
					c.send(request{method: http.MethodHead, target: c.collection()}))
			},
		},
		{
			ID: "read/head-same-headers", Tier: Should, Source: "RFC 9110 §9.3.2", Doc: docRoutes, Needs: OwnItems,
			Requirement: "HEAD carries the header fields GET would: the same status, Content-Type, ETag and Cache-Control (Content-Length it may leave out).",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				get, head := c.get(c.itemPath(it.ID)), c.head(c.itemPath(it.ID))
				if err := head.statusIs(get.status); err != nil {
					return err
				}
				for _, name := range []string{"Content-Type", "ETag", "Cache-Control"} {
					if want := get.responseHeader.Values(name); strings.Join(head.responseHeader.Values(name), "\n") != strings.Join(want, "\n") {
						return failf(head, describeHeader(get.responseHeader, name)+", as GET has", describeHeader(head.responseHeader, name))
					}
				}
				return nil
			},
		},
		{
			ID: "read/etag", Tier: Should, Source: "RFC 9110 §8.8.3", Doc: docConditional, Needs: OwnItems,
			Requirement: "GET of an item and of the list carries a strong ETag.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				for _, x := range []*reply{c.get(c.itemPath(it.ID)), c.get(c.collection())} {
					if _, err := x.etag(); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "read/etag-follows-the-item", Tier: Should, Source: "RFC 9110 §8.8.1", Doc: docConditional, Needs: OwnItems,
			Requirement: "An item's ETag stays the same while the item does, and changes when the item changes.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				first, err := c.currentTag(c.itemPath(it.ID))
				if err != nil {
					return err
				}
				if err := c.get(c.itemPath(it.ID)).headerIs("ETag", first); err != nil {
					return err
				}
				if err := c.write(http.MethodPut, c.itemPath(it.ID), c.fill(c.run.desc.Replace).String()).succeeded(); err != nil {
					return skipf("could not change the item with PUT: see replace/200-item")
				}
				if changed := c.get(c.itemPath(it.ID)); changed.responseHeader.Get("ETag") == first {
					return failf(changed, "an ETag other than "+first+", since the item changed", "ETag: "+first)
				}
				return nil
			},
		},
	}
}
