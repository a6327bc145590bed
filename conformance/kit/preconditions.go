package kit

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// staleTag is an entity tag no representation has.
const staleTag = `"kit-stale"`

// preconditionRules: If-Match and If-None-Match (RFC 9110 §13), on every method but OPTIONS.
func preconditionRules() []Rule {
	return []Rule{
		{
			ID: "precondition/if-match-412", Tier: Must, Source: "RFC 9110 §13.1.1", Doc: docConditional, Needs: OwnUsers,
			Requirement: "PUT or DELETE with an If-Match that names no current tag of the user is 412, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return every(func(x *reply) error { return firstError(x.statusIs(http.StatusPreconditionFailed), c.unchanged(x, u)) },
					c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email), "If-Match", staleTag),
					c.remove(u.path(), "If-Match", staleTag))
			},
		},
		{
			ID: "precondition/if-match-current-goes-ahead", Tier: Must, Source: "RFC 9110 §13.1.1", Doc: docConditional, Needs: OwnUsers,
			Requirement: "PUT or DELETE with If-Match naming the user's current ETag goes ahead.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				etag, err := c.currentTag(u.path())
				if err != nil {
					return err
				}
				if err := c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email), "If-Match", etag).succeeded(); err != nil {
					return err
				}
				if etag, err = c.currentTag(u.path()); err != nil {
					return err
				}
				return c.remove(u.path(), "If-Match", etag).succeeded()
			},
		},
		{
			ID: "precondition/if-match-star", Tier: Must, Source: "RFC 9110 §13.1.1", Doc: docConditional, Needs: OwnUsers,
			Requirement: "If-Match: * matches any user that exists: PUT and DELETE go ahead.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return firstError(
					c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email), "If-Match", "*").succeeded(),
					c.remove(u.path(), "If-Match", "*").succeeded())
			},
		},
		{
			ID: "precondition/if-match-strong", Tier: Must, Source: "RFC 9110 §13.1.1", Doc: docConditional, Needs: OwnUsers,
			Requirement: "If-Match uses the strong comparison: the current tag marked weak, W/, does not match, so PUT is 412.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				etag, err := c.currentTag(u.path())
				if err != nil {
					return err
				}
				x := c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email), "If-Match", "W/"+etag)
				return firstError(x.statusIs(http.StatusPreconditionFailed), c.unchanged(x, u))
			},
		},
		{
			ID: "precondition/if-match-list", Tier: Must, Source: "RFC 9110 §13.1.1", Doc: docConditional, Needs: OwnUsers,
			Requirement: "If-Match takes a list: one that holds the current tag, with or without spaces after the commas, goes ahead.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for i, list := range []string{`"kit-a", %s, "kit-b"`, `"kit-a",%s`} {
					etag, err := c.currentTag(u.path())
					if err != nil {
						return err
					}
					x := c.write(http.MethodPut, u.path(), userJSON(fmt.Sprint("Kit Ann ", i), u.Email), "If-Match", strings.Replace(list, "%s", etag, 1))
					if err := x.succeeded(); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "precondition/list-over-several-lines", Tier: Should, Source: "RFC 9110 §5.3", Doc: docConditional, Needs: OwnUsers,
			Requirement: "A list spread over several If-Match or If-None-Match lines is one list: the current tag on the second line matches.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				etag, err := c.currentTag(u.path())
				if err != nil {
					return err
				}
				return firstError(
					c.get(u.path(), "If-None-Match", `"kit-a"`, "If-None-Match", etag).statusIs(http.StatusNotModified),
					c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email), "If-Match", `"kit-a"`, "If-Match", etag).succeeded())
			},
		},
		{
			ID: "precondition/if-match-on-reads", Tier: Must, Source: "RFC 9110 §13.1.1, §13.2.2", Doc: docConditional, Needs: OwnUsers,
			Requirement: "GET and HEAD judge If-Match too: one that names no current tag is 412, and the current tag is 200.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				if err := every(func(x *reply) error { return x.statusIs(http.StatusPreconditionFailed) },
					c.get(u.path(), "If-Match", staleTag), c.head(u.path(), "If-Match", staleTag), c.get(collection, "If-Match", staleTag)); err != nil {
					return err
				}
				etag, err := c.currentTag(u.path())
				if err != nil {
					return err
				}
				return c.get(u.path(), "If-Match", etag).statusIs(http.StatusOK)
			},
		},
		{
			ID: "precondition/if-match-on-post", Tier: Must, Source: "RFC 9110 §13.1.1; " + docConditional, Doc: docConditional, Needs: OwnUsers,
			Requirement: "POST judges If-Match against the collection, whose ETag is that of GET /api/users: one that names no current tag is 412, and creates nothing.",
			check: func(c *Client) error {
				email := c.email()
				x := c.write(http.MethodPost, collection, userJSON("Kit Ann", email), "If-Match", staleTag)
				return firstError(x.statusIs(http.StatusPreconditionFailed), c.notCreated(x, email))
			},
		},
		{
			ID: "precondition/if-match-on-post-current", Tier: Reference, Source: docConditional, Doc: docConditional, Needs: OwnUsers,
			Requirement: "POST with If-Match holding the current ETag of GET /api/users creates the user: nothing changed since the client read the list " +
				"(another client's write between the GET and the POST makes a 412 right, so after a 412 the list is read and the POST sent again, up to 50 times, 5 ms apart).",
			check: func(c *Client) error {
				var x *reply
				for attempt := 1; attempt <= 50; attempt++ {
					if attempt > 1 {
						time.Sleep(5 * time.Millisecond) // other clients' writes come in bursts
					}
					etag, err := c.currentTag(collection)
					if err != nil {
						return err
					}
					if x = c.write(http.MethodPost, collection, c.validBody(), "If-Match", etag); x.status != http.StatusPreconditionFailed {
						break
					}
				}
				return x.succeeded()
			},
		},
		{
			ID: "precondition/if-match-on-patch", Tier: Reference, Source: "RFC 9110 §13.1.1", Doc: docConditional, Needs: OwnUsers,
			Requirement: "PATCH with an If-Match that names no current tag is 412, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.write(http.MethodPatch, u.path(), `{"name":"Kit Ann Lee"}`, "If-Match", staleTag)
				return firstError(x.statusIs(http.StatusPreconditionFailed), c.unchanged(x, u))
			},
		},
		{
			ID: "precondition/if-none-match-304", Tier: Must, Source: "RFC 9110 §13.1.2", Doc: docConditional, Needs: OwnUsers,
			Requirement: "GET or HEAD with If-None-Match naming the current ETag, of a user or of the list (the list of ?q= the rule's own tag, which no other client changes), is 304.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				etag, err := c.currentTag(u.path())
				if err != nil {
					return err
				}
				mine := collection + "?q=" + c.group + "-"
				listTag, err := c.currentTag(mine)
				if err != nil {
					return err
				}
				return every(func(x *reply) error { return x.statusIs(http.StatusNotModified) },
					c.get(u.path(), "If-None-Match", etag), c.head(u.path(), "If-None-Match", etag),
					c.get(mine, "If-None-Match", listTag))
			},
		},
		{
			ID: "precondition/if-none-match-weak", Tier: Must, Source: "RFC 9110 §13.1.2", Doc: docConditional, Needs: OwnUsers,
			Requirement: "If-None-Match uses the weak comparison: the current tag marked W/ is 304 too.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				etag, err := c.currentTag(u.path())
				if err != nil {
					return err
				}
				return c.get(u.path(), "If-None-Match", "W/"+etag).statusIs(http.StatusNotModified)
			},
		},
		{
			ID: "precondition/if-none-match-star-304", Tier: Must, Source: "RFC 9110 §13.1.2", Doc: docConditional, Needs: OwnUsers,
			Requirement: "If-None-Match: * on GET of a user or of the list, which exist, is 304.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return every(func(x *reply) error { return x.statusIs(http.StatusNotModified) },
					c.get(u.path(), "If-None-Match", "*"), c.get(collection, "If-None-Match", "*"))
			},
		},
		{
			ID: "precondition/if-none-match-other-200", Tier: Must, Source: "RFC 9110 §13.1.2", Doc: docConditional, Needs: OwnUsers,
			Requirement: "GET with an If-None-Match that names no current tag is 200 with the user.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.get(u.path(), "If-None-Match", staleTag)
				return firstError(x.statusIs(http.StatusOK), x.isUser(u))
			},
		},
		{
			ID: "precondition/304-no-body", Tier: Must, Source: "RFC 9110 §15.4.5", Doc: docConditional, Needs: OwnUsers,
			Requirement: "A 304 has no body.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.send(request{method: http.MethodGet, target: u.path(), as: reader, header: []string{"If-None-Match", "*"}, over: ownConnection})
				if x.status != http.StatusNotModified {
					return skipf("no 304 to look at: see precondition/if-none-match-star-304")
				}
				return x.noBody()
			},
		},
		{
			ID: "precondition/304-headers", Tier: Must, Source: "RFC 9110 §15.4.5", Doc: docConditional, Needs: OwnUsers,
			Requirement: "A 304 carries the ETag, Cache-Control, Vary and Content-Location the 200 would have.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				full, x := c.get(u.path()), c.get(u.path(), "If-None-Match", "*")
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
			ID: "precondition/if-none-match-on-writes-412", Tier: Must, Source: "RFC 9110 §13.1.2", Doc: docConditional, Needs: OwnUsers,
			Requirement: "PUT or DELETE with If-None-Match: * or the current tag is 412, and changes nothing: the client asked to go ahead only if the user did not exist.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				refused := func(x *reply) error { return firstError(x.statusIs(http.StatusPreconditionFailed), c.unchanged(x, u)) }
				if err := every(refused, c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email), "If-None-Match", "*"),
					c.remove(u.path(), "If-None-Match", "*")); err != nil {
					return err
				}
				etag, err := c.currentTag(u.path())
				if err != nil {
					return err
				}
				return refused(c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email), "If-None-Match", etag))
			},
		},
		{
			ID: "precondition/if-none-match-on-post-412", Tier: Must, Source: "RFC 9110 §13.1.2; " + docConditional, Doc: docConditional, Needs: OwnUsers,
			Requirement: "POST with If-None-Match: * is 412, and creates nothing: the collection always exists.",
			check: func(c *Client) error {
				email := c.email()
				x := c.write(http.MethodPost, collection, userJSON("Kit Ann", email), "If-None-Match", "*")
				return firstError(x.statusIs(http.StatusPreconditionFailed), c.notCreated(x, email))
			},
		},
		{
			ID: "precondition/if-none-match-on-patch-412", Tier: Reference, Source: "RFC 9110 §13.1.2", Doc: docConditional, Needs: OwnUsers,
			Requirement: "PATCH with If-None-Match: * is 412, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.write(http.MethodPatch, u.path(), `{"name":"Kit Ann Lee"}`, "If-None-Match", "*")
				return firstError(x.statusIs(http.StatusPreconditionFailed), c.unchanged(x, u))
			},
		},
		{
			ID: "precondition/if-none-match-other-goes-ahead", Tier: Must, Source: "RFC 9110 §13.1.2", Doc: docConditional, Needs: OwnUsers,
			Requirement: "PUT with an If-None-Match that names no current tag goes ahead.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email), "If-None-Match", staleTag).succeeded()
			},
		},
		{
			ID: "precondition/if-match-before-if-none-match", Tier: Must, Source: "RFC 9110 §13.2.2", Doc: docConditional, Needs: OwnUsers,
			Requirement: "If-Match is judged before If-None-Match: a GET with a stale If-Match and If-None-Match: * is 412, and with If-Match: * it is 304.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return firstError(
					c.get(u.path(), "If-Match", staleTag, "If-None-Match", "*").statusIs(http.StatusPreconditionFailed),
					c.get(u.path(), "If-Match", "*", "If-None-Match", "*").statusIs(http.StatusNotModified))
			},
		},
		{
			ID: "precondition/missing-user-404", Tier: Must, Source: "RFC 9110 §13.2.1", Doc: docConditional, Needs: OwnUsers,
			Requirement: "A user that does not exist is 404 whatever the preconditions: If-Match on PUT and DELETE, If-None-Match: * on GET.",
			check: func(c *Client) error {
				gone, err := c.gone()
				if err != nil {
					return err
				}
				body := userJSON("Kit Ann", c.email())
				return every(func(x *reply) error { return x.statusIs(http.StatusNotFound) },
					c.write(http.MethodPut, gone.path(), body, "If-Match", "*"),
					c.write(http.MethodPut, gone.path(), body, "If-Match", staleTag),
					c.remove(gone.path(), "If-Match", "*"),
					c.get(gone.path(), "If-None-Match", "*"))
			},
		},
		{
			ID: "precondition/bad-body-before-412", Tier: Reference, Source: docConditional, Doc: docConditional, Needs: OwnUsers,
			Requirement: "A body that breaks the rules is 400 even when If-Match would fail too: the request's own checks come first.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return c.write(http.MethodPut, u.path(), `{"name":"Kit Ann Lee"}`, "If-Match", staleTag).statusIs(http.StatusBadRequest)
			},
		},
		{
			ID: "precondition/412-before-409", Tier: Reference, Source: docOrder, Doc: docConditional, Needs: OwnUsers,
			Requirement: "A failed If-Match is 412 even when the e-mail is taken: preconditions come before the conflict.",
			check: func(c *Client) error {
				users, err := c.newUsers("Kit Ann", "Kit Bob")
				if err != nil {
					return err
				}
				return c.write(http.MethodPut, users[1].path(), userJSON("Kit Bob", users[0].Email), "If-Match", staleTag).statusIs(http.StatusPreconditionFailed)
			},
		},
		{
			ID: "precondition/dates-ignored", Tier: Reference, Source: "RFC 9110 §13.1.3, §13.1.4", Doc: docConditional, Needs: OwnUsers,
			Requirement: "If-Modified-Since and If-Unmodified-Since are ignored, as no answer has a Last-Modified to compare them with.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.get(u.path(), "If-Modified-Since", "Sat, 01 Jan 2050 00:00:00 GMT")
				return firstError(x.statusIs(http.StatusOK), x.headerAbsent("Last-Modified"),
					c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email), "If-Unmodified-Since", "Sat, 01 Jan 2000 00:00:00 GMT").succeeded())
			},
		},
		{
			ID: "precondition/non-tag-matches-nothing", Tier: Reference, Source: "RFC 9110 §8.8.3, §13.1.1; " + docConditional, Doc: docConditional, Needs: OwnUsers,
			Requirement: "An element of the list that is not an entity tag matches nothing, and the others still count: the current tag without its quotes " +
				"matches nothing (If-Match 412, If-None-Match 200), while kit-nonsense, <current tag> matches (If-None-Match 304, If-Match goes ahead).",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				etag, err := c.currentTag(u.path())
				if err != nil {
					return err
				}
				if err := c.matchesNothing(u, strings.Trim(etag, `"`)); err != nil {
					return err
				}
				return firstError(c.get(u.path(), "If-None-Match", "kit-nonsense, "+etag).statusIs(http.StatusNotModified),
					c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email), "If-Match", "kit-nonsense, "+etag).succeeded())
			},
		},
		{
			ID: "precondition/star-only-as-the-whole-value", Tier: Should, Source: "RFC 9110 §13.1.2", Doc: docConditional, Needs: OwnUsers,
			Requirement: `* means any only as the whole value (If-None-Match = "*" / #entity-tag): If-None-Match *, "kit-a" or "kit-a", * matches nothing, so GET is 200 and PUT goes ahead.`,
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, value := range []string{`*, "kit-a"`, `"kit-a", *`} {
					if err := firstError(c.get(u.path(), "If-None-Match", value).statusIs(http.StatusOK),
						c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email), "If-None-Match", value).succeeded()); err != nil {
						return err
					}
				}
				return nil
			},
		},
	}
}

// matchesNothing checks that each If-Match or If-None-Match value matches no tag of the user: PUT
// with it in If-Match is 412 and changes nothing, and GET with it in If-None-Match is 200.
func (c *Client) matchesNothing(u user, values ...string) error {
	for _, value := range values {
		x := c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email), "If-Match", value)
		if err := firstError(x.statusIs(http.StatusPreconditionFailed), c.unchanged(x, u),
			c.get(u.path(), "If-None-Match", value).statusIs(http.StatusOK)); err != nil {
			return err
		}
	}
	return nil
}
