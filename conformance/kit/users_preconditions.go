package kit

import (
	"net/http"
	"strings"
)

// usersPreconditionRules: the rules of this reference only, written for users, of the topic preconditions.
func usersPreconditionRules() []Rule {
	return []Rule{
		{
			ID: "precondition/bad-body-before-412", Tier: Reference, Scope: ThisReference, Source: docConditional, Doc: docConditional, Needs: OwnItems,
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
			ID: "precondition/dates-ignored", Tier: Reference, Scope: ThisReference, Source: "RFC 9110 §13.1.3, §13.1.4", Doc: docConditional, Needs: OwnItems,
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
			ID: "precondition/non-tag-matches-nothing", Tier: Reference, Scope: ThisReference, Source: "RFC 9110 §8.8.3, §13.1.1; " + docConditional, Doc: docConditional, Needs: OwnItems,
			Requirement: "An element of the list that is not an entity tag matches nothing, and the others still count: the current tag without its quotes " +
				"matches nothing (If-Match 412, If-None-Match 200), while kit-nonsense, <current tag> matches (If-None-Match 304, If-Match goes ahead).",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				etag, err := c.currentStrongTag(u.path())
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
	}
}

// matchesNothing checks that each If-Match or If-None-Match value matches no tag of the user: PUT
// with it in If-Match is 412 and changes nothing, and GET with it in If-None-Match is 200.
func (c *Client) matchesNothing(u user, values ...string) error {
	for _, value := range values {
		x := c.write(http.MethodPut, u.path(), userJSON("Kit Ann Lee", u.Email), "If-Match", value)
		if err := firstError(x.statusIs(http.StatusPreconditionFailed), c.userUnchanged(x, u),
			c.get(u.path(), "If-None-Match", value).statusIs(http.StatusOK)); err != nil {
			return err
		}
	}
	return nil
}
