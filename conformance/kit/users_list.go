package kit

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
)

// usersListRules: the rules of this reference only, written for users, of the topic list.
func usersListRules() []Rule {
	return []Rule{
		{
			ID: "list/by-id", Tier: Reference, Scope: ThisReference, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "Without sort, the list is in ascending id order.",
			check: func(c *Client) error {
				if _, err := c.newUsers("Kit Carol", "Kit Ann", "Kit Bob"); err != nil {
					return err
				}
				for _, x := range []*reply{c.get(usersCollection), c.mine("")} {
					l, err := x.decodeList()
					if err != nil {
						return err
					}
					if ids := l.ids(); !slices.IsSorted(ids) {
						return failf(x, "users by ascending id", fmt.Sprintf("the ids %v", ids))
					}
				}
				return nil
			},
		},
		{
			ID: "list/paging-members-only-when-paged", Tier: Reference, Scope: ThisReference, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "Without page or per_page the envelope has no page, per_page or total_pages.",
			check: func(c *Client) error {
				if _, err := c.newUsers("Kit Ann", "Kit Bob"); err != nil {
					return err
				}
				x := c.mine("")
				l, err := x.decodeList()
				if err != nil {
					return err
				}
				if l.Page != nil || l.PerPage != nil || l.TotalPages != nil {
					return failf(x, "data and total only", x.summary())
				}
				return nil
			},
		},
		{
			ID: "list/no-link-unpaged", Tier: Reference, Scope: ThisReference, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "A list without page or per_page has no Link header.",
			check: func(c *Client) error {
				if _, err := c.newUsers("Kit Ann", "Kit Bob"); err != nil {
					return err
				}
				return c.mine("").headerAbsent("Link")
			},
		},
		{
			ID: "list/page-envelope", Tier: Reference, Scope: ThisReference, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "With page or per_page, the envelope also carries page, per_page and total_pages.",
			check: func(c *Client) error {
				if _, err := c.newUsers("Kit 1", "Kit 2", "Kit 3", "Kit 4", "Kit 5"); err != nil {
					return err
				}
				return c.mine("page=2&per_page=2").pageIs(2, 2, 3)
			},
		},
		{
			ID: "list/total-pages", Tier: Reference, Scope: ThisReference, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "total_pages is total divided by per_page, rounded up: 0 when nothing matches.",
			check: func(c *Client) error {
				if _, err := c.newUsers("Kit 1", "Kit 2", "Kit 3", "Kit 4", "Kit 5"); err != nil {
					return err
				}
				for _, tt := range []struct {
					query              string
					perPage, wantPages int64
				}{{"per_page=2", 2, 3}, {"per_page=5", 5, 1}, {"per_page=1", 1, 5}, {"per_page=100", 100, 1}} {
					if err := c.mine(tt.query).pageIs(1, tt.perPage, tt.wantPages); err != nil {
						return err
					}
				}
				return c.get(usersCollection+"?q="+c.group+"-nobody&per_page=10").pageIs(1, 10, 0)
			},
		},
		{
			ID: "list/paging-defaults", Tier: Reference, Scope: ThisReference, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "page alone takes per_page 10, and per_page alone takes page 1.",
			check: func(c *Client) error {
				var users []user
				for i := 1; i <= 11; i++ {
					u, err := c.newUser(fmt.Sprint("Kit ", i))
					if err != nil {
						return err
					}
					users = append(users, u)
				}
				first := c.mine("page=1")
				if err := firstError(first.pageIs(1, 10, 2), first.listIDs(idsIn(users, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)...)); err != nil {
					return err
				}
				three := c.mine("per_page=3")
				return firstError(three.pageIs(1, 3, 4), three.listIDs(idsIn(users, 0, 1, 2)...))
			},
		},
		{
			ID: "list/page-past-the-end", Tier: Reference, Scope: ThisReference, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "A page past the end, however far (up to 2^63−1), is 200 with an empty data and the page asked for.",
			check: func(c *Client) error {
				if _, err := c.newUsers("Kit 1", "Kit 2", "Kit 3"); err != nil {
					return err
				}
				for _, page := range []string{"3", "9223372036854775807"} {
					x := c.mine("per_page=2&page=" + page)
					if err := x.listIDs(); err != nil {
						return err
					}
					if l, _ := x.decodeList(); l.Page == nil || fmt.Sprint(*l.Page) != page {
						return failf(x, "page "+page, x.summary())
					}
				}
				return nil
			},
		},
		{
			ID: "list/link-past-the-end", Tier: Reference, Scope: ThisReference, Source: "RFC 8288; " + docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "A page past the end carries Link with first, prev (the page before it) and last, and a list that matches nothing has first and last, both page 1.",
			check: func(c *Client) error {
				if _, err := c.newUsers("Kit 1", "Kit 2", "Kit 3", "Kit 4", "Kit 5"); err != nil {
					return err
				}
				return firstError(
					c.linksAre(c.mine("page=9&per_page=2"), "page", map[string]string{"first": "1", "prev": "8", "last": "3"}),
					c.linksAre(c.get(usersCollection+"?q="+c.group+"-nobody&page=1"), "page", map[string]string{"first": "1", "last": "1"}))
			},
		},
		{
			ID: "list/link-relative", Tier: Reference, Scope: ThisReference, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "The Link URIs are relative, /api/users?..., so that they hold on any scheme, host and port.",
			check: func(c *Client) error {
				if _, err := c.newUsers("Kit 1", "Kit 2", "Kit 3"); err != nil {
					return err
				}
				x := c.mine("per_page=1&page=2")
				if len(linkTargets(x)) == 0 {
					return failf(x, "a Link header", describeHeader(x.responseHeader, "Link"))
				}
				for rel, target := range linkTargets(x) {
					if u, err := url.Parse(target); err != nil || u.Scheme != "" || u.Host != "" || u.Path != usersCollection {
						return failf(x, "relative URIs of the list, /api/users?...", fmt.Sprintf("rel=%s: <%s>", rel, target))
					}
				}
				return nil
			},
		},
		listRefusal("list/canonical-numbers-400", "page and per_page are written in canonical decimal (not 01, +1, 1.0, 010, or a page beyond 2^63−1): else 400.",
			"page=01", "page=%2B1", "page=1.0", "page=9223372036854775808", "per_page=010"),
		listRefusal("list/sort-case-and-sign-400", "sort names a key in lower case, with - alone as its sign (not Name or +name): else 400.",
			"sort=Name", "sort=%2Bname"),
		listRefusal("list/empty-email-400", "An empty email is 400: it names no address to look for.", "email="),
		listRefusal("list/repeated-parameter-400", "A parameter given twice is 400.",
			"page=1&page=2", "page=1&page=1", "q=a&q=b", "sort=id&sort=name"),
		listRefusal("list/malformed-query-400", "A query that cannot be parsed (a bad percent escape) is 400.",
			"page=%zz", "q=%"),
		{
			ID: "list/etag-follows-the-list", Tier: Reference, Scope: ThisReference, Source: docConditional, Doc: docConditional, Needs: OwnItems,
			Requirement: "The list's ETag follows the list: equal lists have equal ETags, and a change to a user in it changes it.",
			check: func(c *Client) error {
				users, err := c.newUsers("Kit Ann", "Kit Bob")
				if err != nil {
					return err
				}
				first, err := c.currentStrongTag(usersCollection + "?q=" + c.group + "-")
				if err != nil {
					return err
				}
				if err := c.mine("sort=id").headerIs("ETag", first); err != nil {
					return err
				}
				if other := c.mine("sort=-id"); other.responseHeader.Get("ETag") == first {
					return failf(other, "an ETag other than that of the list in id order, "+first, "ETag: "+first)
				}
				c.write(http.MethodPatch, users[0].path(), `{"name":"Kit Ann Lee"}`)
				if changed := c.mine(""); changed.responseHeader.Get("ETag") == first {
					return failf(changed, "an ETag other than "+first+", since a user changed", "ETag: "+first)
				}
				return nil
			},
		},
	}
}

// listRefusal makes a rule that each query of the list is 400 with the error body.
func listRefusal(id, requirement string, queries ...string) Rule {
	return Rule{ID: id, Tier: Reference, Scope: ThisReference, Source: docListing, Doc: docListing, Requirement: requirement,
		check: func(c *Client) error {
			for _, query := range queries {
				if err := c.get(usersCollection + "?" + query).statusIs(http.StatusBadRequest); err != nil {
					return err
				}
			}
			return nil
		}}
}

// idsIn returns the ids of users at these indexes, in this order.
func idsIn(users []user, indexes ...int) []int64 {
	ids := make([]int64, len(indexes))
	for i, index := range indexes {
		ids[i] = users[index].ID
	}
	return ids
}

// pageIs checks a page's numbers: page, per_page and total_pages.
func (x *reply) pageIs(page, perPage, totalPages int64) error {
	l, err := x.decodeList()
	if err != nil {
		return err
	}
	want := fmt.Sprintf("page %d, per_page %d, total_pages %d", page, perPage, totalPages)
	if l.Page == nil || l.PerPage == nil || l.TotalPages == nil || *l.Page != page || *l.PerPage != perPage || *l.TotalPages != totalPages {
		return failf(x, want, x.summary())
	}
	return nil
}
