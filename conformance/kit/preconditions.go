package kit

import (
	"net/http"
	"strings"
	"time"
)

// preconditionRules: If-Match and If-None-Match (RFC 9110 §13): lost updates refused, and reads
// not sent again.
func preconditionRules() []Rule {
	return []Rule{
		{
			ID: "precondition/if-match-412", Tier: Must, Source: "RFC 9110 §13.1.1", Doc: docConditional, Needs: OwnItems,
			Requirement: "PUT or DELETE with an If-Match that names no current tag of the item is 412, and changes nothing.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				return every(func(x *reply) error { return firstError(x.statusIs(http.StatusPreconditionFailed), c.unchanged(x, it)) },
					c.write(http.MethodPut, c.itemPath(it.ID), c.fill(c.run.desc.Replace).String(), "If-Match", staleTag),
					c.remove(c.itemPath(it.ID), "If-Match", staleTag))
			},
		},
		{
			ID: "precondition/if-match-current-goes-ahead", Tier: Must, Source: "RFC 9110 §13.1.1", Doc: docConditional, Needs: OwnItems,
			Requirement: "PUT or DELETE with If-Match naming the item's current ETag goes ahead.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				etag, err := c.currentStrongTag(c.itemPath(it.ID))
				if err != nil {
					return err
				}
				if err := c.write(http.MethodPut, c.itemPath(it.ID), c.fill(c.run.desc.Replace).String(), "If-Match", etag).succeeded(); err != nil {
					return err
				}
				if etag, err = c.currentStrongTag(c.itemPath(it.ID)); err != nil {
					return err
				}
				return c.remove(c.itemPath(it.ID), "If-Match", etag).succeeded()
			},
		},
		{
			ID: "precondition/if-match-star", Tier: Must, Source: "RFC 9110 §13.1.1", Doc: docConditional, Needs: OwnItems,
			Requirement: "If-Match: * matches any item that exists: PUT and DELETE go ahead.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				return firstError(
					c.write(http.MethodPut, c.itemPath(it.ID), c.fill(c.run.desc.Replace).String(), "If-Match", "*").succeeded(),
					c.remove(c.itemPath(it.ID), "If-Match", "*").succeeded())
			},
		},
		{
			ID: "precondition/if-match-strong", Tier: Must, Source: "RFC 9110 §13.1.1", Doc: docConditional, Needs: OwnItems,
			Requirement: "If-Match uses the strong comparison: the current tag marked weak, W/, does not match, so PUT is 412.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				etag, err := c.currentStrongTag(c.itemPath(it.ID))
				if err != nil {
					return err
				}
				x := c.write(http.MethodPut, c.itemPath(it.ID), c.fill(c.run.desc.Replace).String(), "If-Match", weak(etag))
				return firstError(x.statusIs(http.StatusPreconditionFailed), c.unchanged(x, it))
			},
		},
		{
			ID: "precondition/if-match-list", Tier: Must, Source: "RFC 9110 §13.1.1", Doc: docConditional, Needs: OwnItems,
			Requirement: "If-Match takes a list: one that holds the current tag, with or without spaces after the commas, goes ahead.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				for _, list := range []string{`"kit-a", %s, "kit-b"`, `"kit-a",%s`} {
					etag, err := c.currentStrongTag(c.itemPath(it.ID))
					if err != nil {
						return err
					}
					x := c.write(http.MethodPut, c.itemPath(it.ID), c.fill(c.run.desc.Replace).String(), "If-Match", strings.Replace(list, "%s", etag, 1))
					if err := x.succeeded(); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "precondition/list-over-several-lines", Tier: Should, Source: "RFC 9110 §5.3", Doc: docConditional, Needs: OwnItems,
			Requirement: "A list spread over several If-Match or If-None-Match lines is one list: the current tag on the second line matches.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				etag, err := c.currentStrongTag(c.itemPath(it.ID))
				if err != nil {
					return err
				}
				return firstError(
					c.get(c.itemPath(it.ID), "If-None-Match", `"kit-a"`, "If-None-Match", etag).statusIs(http.StatusNotModified),
					c.write(http.MethodPut, c.itemPath(it.ID), c.fill(c.run.desc.Replace).String(), "If-Match", `"kit-a"`, "If-Match", etag).succeeded())
			},
		},
		{
			ID: "precondition/if-match-on-reads", Tier: Must, Source: "RFC 9110 §13.1.1, §13.2.2", Doc: docConditional, Needs: OwnItems,
			Requirement: "GET and HEAD judge If-Match too: one that names no current tag is 412, and the current tag is 200.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				if err := every(func(x *reply) error { return x.statusIs(http.StatusPreconditionFailed) },
					c.get(c.itemPath(it.ID), "If-Match", staleTag), c.head(c.itemPath(it.ID), "If-Match", staleTag), c.get(c.collection(), "If-Match", staleTag)); err != nil {
					return err
				}
				etag, err := c.currentStrongTag(c.itemPath(it.ID))
				if err != nil {
					return err
				}
				return c.get(c.itemPath(it.ID), "If-Match", etag).statusIs(http.StatusOK)
			},
		},
		{
			ID: "precondition/if-match-on-post", Tier: Must, Keys: keyConditionalPost, Source: "RFC 9110 §13.1.1; " + docConditional, Doc: docConditional, Needs: OwnItems,
			Requirement: "POST judges If-Match against the collection, whose ETag is that of its list: one that names no current tag is 412, and creates nothing.",
			check: func(c *Client) error {
				body := c.fill(c.run.desc.Create)
				x := c.post(body, "If-Match", staleTag)
				return firstError(x.statusIs(http.StatusPreconditionFailed), c.notCreated(x, body))
			},
		},
		{
			ID: "precondition/if-match-on-post-current", Tier: Reference, Keys: keyConditionalPost, Source: docConditional, Doc: docConditional, Needs: OwnItems,
			Requirement: "POST with If-Match holding the current ETag of the list creates the item: nothing changed since the client read the list " +
				"(another client's write between the GET and the POST makes a 412 right, so after a 412 the list is read and the POST sent again, up to 50 times, 5 ms apart).",
			check: func(c *Client) error {
				var x *reply
				for attempt := 1; attempt <= 50; attempt++ {
					if attempt > 1 {
						time.Sleep(5 * time.Millisecond) // other clients' writes come in bursts
					}
					etag, err := c.currentStrongTag(c.collection())
					if err != nil {
						return err
					}
					if x = c.post(c.fill(c.run.desc.Create), "If-Match", etag); x.status != http.StatusPreconditionFailed {
						break
					}
				}
				return x.succeeded()
			},
		},
		{
			ID: "precondition/if-match-on-patch", Tier: Reference, Keys: keyPatch, Source: "RFC 9110 §13.1.1", Doc: docConditional, Needs: OwnItems,
			Requirement: "PATCH with an If-Match that names no current tag is 412, and changes nothing.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				x := c.write(http.MethodPatch, c.itemPath(it.ID), c.fill(c.run.desc.Patch).String(), "If-Match", staleTag)
				return firstError(x.statusIs(http.StatusPreconditionFailed), c.unchanged(x, it))
			},
		},
		{
			ID: "precondition/if-none-match-304", Tier: Must, Source: "RFC 9110 §13.1.2", Doc: docConditional, Needs: OwnItems,
			Requirement: "GET or HEAD with If-None-Match naming the current ETag, of an item or of the list (of the rule's own items, which no other client changes, where the description declares tag), is 304.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				etag, err := c.currentTag(c.itemPath(it.ID))
				if err != nil {
					return err
				}
				listTag, err := c.currentTag(c.ownList())
				if err != nil {
					return err
				}
				return every(func(x *reply) error { return x.statusIs(http.StatusNotModified) },
					c.get(c.itemPath(it.ID), "If-None-Match", etag), c.head(c.itemPath(it.ID), "If-None-Match", etag),
					c.get(c.ownList(), "If-None-Match", listTag))
			},
		},
		{
			ID: "precondition/if-none-match-weak", Tier: Must, Source: "RFC 9110 §13.1.2", Doc: docConditional, Needs: OwnItems,
			Requirement: "If-None-Match uses the weak comparison: the current tag marked W/ is 304 too.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				etag, err := c.currentTag(c.itemPath(it.ID))
				if err != nil {
					return err
				}
				return c.get(c.itemPath(it.ID), "If-None-Match", weak(etag)).statusIs(http.StatusNotModified)
			},
		},
		{
			ID: "precondition/if-none-match-star-304", Tier: Must, Source: "RFC 9110 §13.1.2", Doc: docConditional, Needs: OwnItems,
			Requirement: "If-None-Match: * on GET of an item or of the list, which exist, is 304.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				return every(func(x *reply) error { return x.statusIs(http.StatusNotModified) },
					c.get(c.itemPath(it.ID), "If-None-Match", "*"), c.get(c.collection(), "If-None-Match", "*"))
			},
		},
		{
			ID: "precondition/if-none-match-other-200", Tier: Must, Source: "RFC 9110 §13.1.2", Doc: docConditional, Needs: OwnItems,
			Requirement: "GET with an If-None-Match that names no current tag is 200 with the item.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				x := c.get(c.itemPath(it.ID), "If-None-Match", staleTag)
				return firstError(x.statusIs(http.StatusOK), x.isItem(it))
			},
		},
		{
			ID: "precondition/304-no-body", Tier: Must, Source: "RFC 9110 §15.4.5", Doc: docConditional, Needs: OwnItems,
			Requirement: "A 304 has no body.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				x := c.send(request{method: http.MethodGet, target: c.itemPath(it.ID), as: reader, header: []string{"If-None-Match", "*"}, over: ownConnection})
				if x.status != http.StatusNotModified {
					return skipf("no 304 to look at: see precondition/if-none-match-star-304")
				}
				return x.noBody()
			},
		},
		{
			ID: "precondition/304-headers", Tier: Must, Source: "RFC 9110 §15.4.5", Doc: docConditional, Needs: OwnItems,
			Requirement: "A 304 carries the ETag, Cache-Control, Vary and Content-Location the 200 would have.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				full, x := c.get(c.itemPath(it.ID)), c.get(c.itemPath(it.ID), "If-None-Match", "*")
				if x.status != http.StatusNotModified {
					return skipf("no 304 to look at: see precondition/if-none-match-star-304")
				}
				for _, name := range []string{"ETag", "Cache-Control", "Vary", "Content-Location"} {
					if want := full.responseHeader.Values(name); strings.Join(x.responseHeader.Values(name), "\n") != strings.Join(want, "\n") {
						return failf(x, describeHeader(full.responseHeader, name)+", as the 200 has", describeHeader(x.responseHeader, name))
					}
				}
				return nil
			},
		},
		{
			ID: "precondition/if-none-match-on-writes-412", Tier: Must, Source: "RFC 9110 §13.1.2", Doc: docConditional, Needs: OwnItems,
			Requirement: "PUT or DELETE with If-None-Match: * or the current tag is 412, and changes nothing: the client asked to go ahead only if the item did not exist.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				refused := func(x *reply) error { return firstError(x.statusIs(http.StatusPreconditionFailed), c.unchanged(x, it)) }
				if err := every(refused, c.write(http.MethodPut, c.itemPath(it.ID), c.fill(c.run.desc.Replace).String(), "If-None-Match", "*"),
					c.remove(c.itemPath(it.ID), "If-None-Match", "*")); err != nil {
					return err
				}
				etag, err := c.currentTag(c.itemPath(it.ID))
				if err != nil {
					return err
				}
				return refused(c.write(http.MethodPut, c.itemPath(it.ID), c.fill(c.run.desc.Replace).String(), "If-None-Match", etag))
			},
		},
		{
			ID: "precondition/if-none-match-on-post-412", Tier: Must, Keys: keyConditionalPost, Source: "RFC 9110 §13.1.2; " + docConditional, Doc: docConditional, Needs: OwnItems,
			Requirement: "POST with If-None-Match: * is 412, and creates nothing: the c.collection() always exists.",
			check: func(c *Client) error {
				body := c.fill(c.run.desc.Create)
				x := c.post(body, "If-None-Match", "*")
				return firstError(x.statusIs(http.StatusPreconditionFailed), c.notCreated(x, body))
			},
		},
		{
			ID: "precondition/if-none-match-on-patch-412", Tier: Reference, Keys: keyPatch, Source: "RFC 9110 §13.1.2", Doc: docConditional, Needs: OwnItems,
			Requirement: "PATCH with If-None-Match: * is 412, and changes nothing.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				x := c.write(http.MethodPatch, c.itemPath(it.ID), c.fill(c.run.desc.Patch).String(), "If-None-Match", "*")
				return firstError(x.statusIs(http.StatusPreconditionFailed), c.unchanged(x, it))
			},
		},
		{
			ID: "precondition/if-none-match-other-goes-ahead", Tier: Must, Source: "RFC 9110 §13.1.2", Doc: docConditional, Needs: OwnItems,
			Requirement: "PUT with an If-None-Match that names no current tag goes ahead.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				return c.write(http.MethodPut, c.itemPath(it.ID), c.fill(c.run.desc.Replace).String(), "If-None-Match", staleTag).succeeded()
			},
		},
		{
			ID: "precondition/if-match-before-if-none-match", Tier: Must, Source: "RFC 9110 §13.2.2", Doc: docConditional, Needs: OwnItems,
			Requirement: "If-Match is judged before If-None-Match: a GET with a stale If-Match and If-None-Match: * is 412, and with If-Match: * it is 304.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				return firstError(
					c.get(c.itemPath(it.ID), "If-Match", staleTag, "If-None-Match", "*").statusIs(http.StatusPreconditionFailed),
					c.get(c.itemPath(it.ID), "If-Match", "*", "If-None-Match", "*").statusIs(http.StatusNotModified))
			},
		},
		{
			ID: "precondition/missing-item-404", Tier: Must, Source: "RFC 9110 §13.2.1", Doc: docConditional, Needs: OwnItems,
			Requirement: "An item that does not exist is 404 whatever the preconditions: If-Match on PUT and DELETE, If-None-Match: * on GET.",
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				body := c.fill(c.run.desc.Replace).String()
				return every(func(x *reply) error { return x.statusIs(http.StatusNotFound) },
					c.write(http.MethodPut, c.itemPath(gone.ID), body, "If-Match", "*"),
					c.write(http.MethodPut, c.itemPath(gone.ID), body, "If-Match", staleTag),
					c.remove(c.itemPath(gone.ID), "If-Match", "*"),
					c.get(c.itemPath(gone.ID), "If-None-Match", "*"))
			},
		},
		{
			ID: "precondition/412-before-409", Tier: Reference, Keys: keyUnique, Source: "RFC 9110 §13.2.1; " + docOrder, Doc: docConditional, Needs: OwnItems,
			Requirement: "A failed If-Match is 412 even when the unique value is taken: preconditions come before the conflict (RFC 9110 §13.2.1).",
			check: func(c *Client) error {
				items, err := c.newItems(2)
				if err != nil {
					return err
				}
				body := c.fill(c.run.desc.Replace).with(c.run.desc.Unique.Field, items[0].members[c.run.desc.Unique.Field])
				return c.write(http.MethodPut, c.itemPath(items[1].ID), body.String(), "If-Match", staleTag).statusIs(http.StatusPreconditionFailed)
			},
		},
		{
			ID: "precondition/star-only-as-the-whole-value", Tier: Should, Source: "RFC 9110 §13.1.2", Doc: docConditional, Needs: OwnItems,
			Requirement: `* means any only as the whole value (If-None-Match = "*" / #entity-tag): If-None-Match *, "kit-a" or "kit-a", * matches nothing, so GET is 200 and PUT goes ahead.`,
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				for _, value := range []string{`*, "kit-a"`, `"kit-a", *`} {
					if err := firstError(c.get(c.itemPath(it.ID), "If-None-Match", value).statusIs(http.StatusOK),
						c.write(http.MethodPut, c.itemPath(it.ID), c.fill(c.run.desc.Replace).String(), "If-None-Match", value).succeeded()); err != nil {
						return err
					}
				}
				return nil
			},
		},
	}
}

// ownList is the list the rule reads the ETag of: its own items, through the tag filter, which no
// other client changes; or, where the description declares no tag, the whole list.
func (c *Client) ownList() string {
	if c.run.desc.Tag == nil {
		return c.collection()
	}
	return strings.TrimPrefix(c.mine("").url, c.run.base)
}
