package kit

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// listRules: GET /api/users, its envelope, filters, orders and pages. All but the first three read
// only the rule's own users, through q.
func listRules() []Rule {
	return []Rule{
		{
			ID: "list/envelope", Tier: Must, Source: docListing, Doc: docListing,
			Requirement: `GET /api/users answers the list envelope: {"data": [users], "total": <integer>}.`,
			check: func(c *Client) error {
				_, err := c.get(collection).decodeList()
				return err
			},
		},
		{
			ID: "list/total-is-length", Tier: Must, Source: docListing, Doc: docListing,
			Requirement: "Without paging parameters, total equals the length of data.",
			check: func(c *Client) error {
				x := c.get(collection)
				l, err := x.decodeList()
				if err != nil {
					return err
				}
				if l.Total != int64(len(l.Data)) {
					return failf(x, fmt.Sprintf("total %d, the length of data", len(l.Data)), fmt.Sprintf("total %d", l.Total))
				}
				return nil
			},
		},
		{
			ID: "list/holds-created-user", Tier: Must, Source: docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "A user once created is in the list, as the user representation.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.get(collection)
				l, err := x.decodeList()
				if err != nil {
					return err
				}
				if !slices.Contains(l.Data, u) {
					return failf(x, "data holding "+u.String(), fmt.Sprintf("%d users without it", len(l.Data)))
				}
				return nil
			},
		},
		{
			ID: "list/by-id", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "Without sort, the list is in ascending id order.",
			check: func(c *Client) error {
				if _, err := c.newUsers("Kit Carol", "Kit Ann", "Kit Bob"); err != nil {
					return err
				}
				for _, x := range []*reply{c.get(collection), c.mine("")} {
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
			ID: "list/paging-members-only-when-paged", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
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
			ID: "list/pages-of-the-whole-list", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "The pages of a list, in id order either way, are slices of the whole list of that query, and their total is its length (checked on ?q= the rule's own tag, so other clients' writes cannot change it).",
			check: func(c *Client) error {
				if _, err := c.newUsers("Kit 1", "Kit 2", "Kit 3"); err != nil {
					return err
				}
				whole, err := c.mine("").decodeList()
				if err != nil {
					return err
				}
				ids, n := whole.ids(), len(whole.Data)
				for _, tt := range []struct {
					query string
					want  []int64
				}{
					{"page=1&per_page=2", ids[:2]},
					{"page=2&per_page=2", ids[2:min(4, n)]},
					{"sort=-id&page=1&per_page=2", reversed(ids[n-2:])},
					{"sort=-id&per_page=2&page=2", reversed(ids[max(0, n-4) : n-2])},
				} {
					x := c.mine(tt.query)
					if err := x.listIDs(tt.want...); err != nil {
						return err
					}
					if l, _ := x.decodeList(); l.Total != int64(n) {
						return failf(x, fmt.Sprintf("total %d, the length of the whole list", n), fmt.Sprintf("total %d", l.Total))
					}
				}
				return nil
			},
		},
		{
			ID: "list/no-link-unpaged", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "A list without page or per_page has no Link header.",
			check: func(c *Client) error {
				if _, err := c.newUsers("Kit Ann", "Kit Bob"); err != nil {
					return err
				}
				return c.mine("").headerAbsent("Link")
			},
		},
		{
			ID: "list/empty-is-an-array", Tier: Reference, Source: docListing, Doc: docListing,
			Requirement: `A query that matches nothing answers {"data": [], "total": 0}: data is never null.`,
			check: func(c *Client) error {
				x := c.mine("")
				if err := x.statusIs(http.StatusOK); err != nil {
					return err
				}
				if compact := strings.Join(strings.Fields(string(x.responseBody)), ""); compact != `{"data":[],"total":0}` {
					return failf(x, `{"data": [], "total": 0}`, x.summary())
				}
				return nil
			},
		},
		{
			ID: "list/q-contains", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "q keeps the users whose name or e-mail contains the text, in any case.",
			check: func(c *Client) error {
				byName, byEmail := c.group+"n", c.group+"-2-mail"
				first, err := c.newUser("Kit Ann " + byName)
				if err != nil {
					return err
				}
				second, err := c.newUserWith("Kit Bob", byEmail+"@example.com")
				if err != nil {
					return err
				}
				return firstError(
					c.get(collection+"?q="+url.QueryEscape(strings.ToUpper(byName))).listIDs(first.ID),
					c.get(collection+"?q="+url.QueryEscape(strings.ToUpper(byEmail))).listIDs(second.ID),
					c.get(collection+"?q="+url.QueryEscape(strings.ToUpper(c.group)+"-")).listIDs(first.ID, second.ID))
			},
		},
		{
			ID: "list/q-empty-filters-nothing", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "An empty q, as a search form sends it, filters nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return c.get(collection + "?q=&email=" + url.QueryEscape(u.Email)).listIDs(u.ID)
			},
		},
		{
			ID: "list/email-exact", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "email keeps the user with exactly that address, in any case; a part of an address matches nothing.",
			check: func(c *Client) error {
				users, err := c.newUsers("Kit Ann", "Kit Bob")
				if err != nil {
					return err
				}
				return firstError(
					c.get(collection+"?email="+url.QueryEscape(strings.ToUpper(users[0].Email))).listIDs(users[0].ID),
					c.get(collection+"?email="+url.QueryEscape(strings.TrimSuffix(users[0].Email, ".com"))).listIDs())
			},
		},
		{
			ID: "list/filters-combine", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "email and q together keep only the users that match both.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				email := "&email=" + url.QueryEscape(u.Email)
				return firstError(c.mine(email[1:]).listIDs(u.ID), c.get(collection+"?q=kit-bob"+email).listIDs())
			},
		},
		{
			ID: "list/sort-by-id", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "sort=id orders by ascending id, and sort=-id by descending id.",
			check: func(c *Client) error {
				users, err := c.newUsers("Kit Carol", "Kit Ann", "Kit Bob")
				if err != nil {
					return err
				}
				a, b, d := users[0].ID, users[1].ID, users[2].ID
				return firstError(c.mine("sort=id").listIDs(a, b, d), c.mine("sort=-id").listIDs(d, b, a))
			},
		},
		{
			ID: "list/sort-by-name", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "sort=name orders by the name in lower case, and sort=-name in reverse; names equal in lower case keep ascending id order both ways: " +
				"bob, ann, Ann, Carl created in that order sort as ann, Ann, bob, Carl and as Carl, bob, ann, Ann.",
			check: func(c *Client) error {
				users, err := c.newUsers("bob", "ann", "Ann", "Carl")
				if err != nil {
					return err
				}
				return firstError(c.mine("sort=name").listIDs(idsIn(users, 1, 2, 0, 3)...), c.mine("sort=-name").listIDs(idsIn(users, 3, 0, 1, 2)...))
			},
		},
		{
			ID: "list/sort-by-email", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "sort=email orders by the e-mail in lower case, and sort=-email in reverse.",
			check: func(c *Client) error {
				var users []user
				for _, local := range []string{"zed", "Amy", "amy", "bea"} {
					domain := map[string]string{"amy": "example.org"}[local]
					if domain == "" {
						domain = "example.com"
					}
					u, err := c.newUserWith("Kit "+local, c.group+"-"+local+"@"+domain)
					if err != nil {
						return err
					}
					users = append(users, u)
				}
				ids := idsIn(users, 1, 2, 3, 0)
				return firstError(c.mine("sort=email").listIDs(ids...), c.mine("sort=-email").listIDs(reversed(ids)...))
			},
		},
		{
			ID: "list/sort-ties-by-id", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "Users that sort equal keep ascending id order, in both directions.",
			check: func(c *Client) error {
				users, err := c.newUsers("Kit Kim", "Kit Kim", "Kit Kim")
				if err != nil {
					return err
				}
				ids := idsIn(users, 0, 1, 2)
				return firstError(c.mine("sort=name").listIDs(ids...), c.mine("sort=-name").listIDs(ids...))
			},
		},
		{
			ID: "list/page-envelope", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "With page or per_page, the envelope also carries page, per_page and total_pages.",
			check: func(c *Client) error {
				if _, err := c.newUsers("Kit 1", "Kit 2", "Kit 3", "Kit 4", "Kit 5"); err != nil {
					return err
				}
				return c.mine("page=2&per_page=2").pageIs(2, 2, 3)
			},
		},
		{
			ID: "list/page-slice", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "page and per_page select that slice of the list: page 2 of 2 a page holds the third and fourth users.",
			check: func(c *Client) error {
				users, err := c.newUsers("Kit 1", "Kit 2", "Kit 3", "Kit 4", "Kit 5")
				if err != nil {
					return err
				}
				return c.mine("page=2&per_page=2").listIDs(idsIn(users, 2, 3)...)
			},
		},
		{
			ID: "list/page-total-counts-matches", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "When paged, total counts every user that matches, before paging.",
			check: func(c *Client) error {
				if _, err := c.newUsers("Kit 1", "Kit 2", "Kit 3", "Kit 4", "Kit 5"); err != nil {
					return err
				}
				x := c.mine("page=2&per_page=2")
				l, err := x.decodeList()
				if err != nil {
					return err
				}
				if l.Total != 5 {
					return failf(x, "total 5, the users that match", fmt.Sprintf("total %d", l.Total))
				}
				return nil
			},
		},
		{
			ID: "list/total-pages", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
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
				return c.get(collection+"?q="+c.group+"-nobody&per_page=10").pageIs(1, 10, 0)
			},
		},
		{
			ID: "list/paging-defaults", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
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
			ID: "list/page-past-the-end", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
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
			ID: "list/link-relations", Tier: Reference, Source: "RFC 8288; " + docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "A page carries a Link header with first and last (page 1 when nothing matches), prev when page > 1 and next when page < total_pages.",
			check: func(c *Client) error {
				if _, err := c.newUsers("Kit 1", "Kit 2", "Kit 3", "Kit 4", "Kit 5"); err != nil {
					return err
				}
				for _, tt := range []struct {
					query string
					want  map[string]string // the page of each relation
				}{
					{"page=2&per_page=2", map[string]string{"first": "1", "prev": "1", "next": "3", "last": "3"}},
					{"page=1&per_page=2", map[string]string{"first": "1", "next": "2", "last": "3"}},
					{"page=3&per_page=2", map[string]string{"first": "1", "prev": "2", "last": "3"}},
					{"page=9&per_page=2", map[string]string{"first": "1", "prev": "8", "last": "3"}},
				} {
					if err := c.mine(tt.query).linksAre(tt.want); err != nil {
						return err
					}
				}
				return c.get(collection + "?q=" + c.group + "-nobody&page=1").linksAre(map[string]string{"first": "1", "last": "1"})
			},
		},
		{
			ID: "list/link-keeps-the-query", Tier: Reference, Source: docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "The Link URIs are relative, /api/users?..., and keep q, email, sort and per_page.",
			check: func(c *Client) error {
				users, err := c.newUsers("Kit 1", "Kit 2", "Kit 3")
				if err != nil {
					return err
				}
				for _, query := range []url.Values{
					{"q": {c.group + "-"}, "sort": {"-name"}, "per_page": {"1"}, "page": {"2"}},
					{"email": {users[0].Email}, "page": {"1"}, "per_page": {"5"}},
				} {
					x := c.get(collection + "?" + query.Encode())
					targets := linkTargets(x)
					if len(targets) == 0 {
						return failf(x, "a Link header", describeHeader(x.responseHeader, "Link"))
					}
					for rel, target := range targets {
						u, err := url.Parse(target)
						if err != nil || u.Scheme != "" || u.Host != "" || u.Path != collection {
							return failf(x, "relative URIs of the list, /api/users?...", fmt.Sprintf("rel=%s: <%s>", rel, target))
						}
						for name := range query {
							if name != "page" && u.Query().Get(name) != query.Get(name) {
								return failf(x, fmt.Sprintf("rel=%s keeping %s=%s", rel, name, query.Get(name)), fmt.Sprintf("<%s>", target))
							}
						}
					}
				}
				return nil
			},
		},
		{
			ID: "list/304-carries-link", Tier: Reference, Source: "RFC 9110 §15.4.5; " + docListing, Doc: docListing, Needs: OwnUsers,
			Requirement: "The 304 of a page carries the Link header its 200 carries: RFC 9110 §15.4.5 has a 304 send the fields a 200 would, that a cache updates.",
			check: func(c *Client) error {
				if _, err := c.newUsers("Kit 1", "Kit 2"); err != nil {
					return err
				}
				target := collection + "?q=" + c.group + "-&page=1&per_page=1"
				page := c.get(target)
				etag, err := page.etag()
				if err != nil {
					return err
				}
				x := c.get(target, "If-None-Match", etag)
				return firstError(x.statusIs(http.StatusNotModified), x.headerIs("Link", page.responseHeader.Get("Link")))
			},
		},
		listRefusal("list/bad-page-400", "page must be a whole number from 1 up, in canonical form (not 0, -1, 01, +1, 1.0, abc, empty, or beyond 2^63−1): else 400.",
			"page=0", "page=-1", "page=01", "page=%2B1", "page=1.0", "page=abc", "page=", "page=9223372036854775808"),
		listRefusal("list/bad-per-page-400", "per_page must be a whole number from 1 to 100, in canonical form (not 0, 101, 010, abc or empty): else 400.",
			"per_page=0", "per_page=101", "per_page=010", "per_page=abc", "per_page="),
		listRefusal("list/bad-sort-400", "sort must be id, name or email, with - for descending (not age, Name, +name, --id or empty): else 400.",
			"sort=age", "sort=Name", "sort=%2Bname", "sort=--id", "sort="),
		listRefusal("list/empty-email-400", "An empty email is 400: it names no address to look for.", "email="),
		listRefusal("list/unknown-parameter-400", "A parameter the list does not take (pgae, limit, Page) is 400, so a typo never returns everything.",
			"pgae=2", "limit=10", "Page=2"),
		listRefusal("list/repeated-parameter-400", "A parameter given twice is 400.",
			"page=1&page=2", "page=1&page=1", "q=a&q=b", "sort=id&sort=name"),
		listRefusal("list/malformed-query-400", "A query that cannot be parsed (a bad percent escape) is 400.",
			"page=%zz", "q=%"),
		{
			ID: "list/etag-follows-the-list", Tier: Reference, Source: docConditional, Doc: docConditional, Needs: OwnUsers,
			Requirement: "The list's ETag follows the list: equal lists have equal ETags, and a change to a user in it changes it.",
			check: func(c *Client) error {
				users, err := c.newUsers("Kit Ann", "Kit Bob")
				if err != nil {
					return err
				}
				first, err := c.currentTag(collection + "?q=" + c.group + "-")
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
	return Rule{ID: id, Tier: Reference, Source: docListing, Doc: docListing, Requirement: requirement,
		check: func(c *Client) error {
			for _, query := range queries {
				if err := c.get(collection + "?" + query).statusIs(http.StatusBadRequest); err != nil {
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

func reversed(ids []int64) []int64 {
	r := slices.Clone(ids)
	slices.Reverse(r)
	return r
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

var linkValue = regexp.MustCompile(`<([^>]*)>\s*;\s*rel="?([a-z]+)"?`)

// linkTargets reads the Link header (RFC 8288): the target of each relation.
func linkTargets(x *reply) map[string]string {
	targets := map[string]string{}
	for _, m := range linkValue.FindAllStringSubmatch(strings.Join(x.responseHeader.Values("Link"), ", "), -1) {
		targets[m[2]] = m[1]
	}
	return targets
}

// linksAre checks the relations of a Link header and the page each names.
func (x *reply) linksAre(want map[string]string) error {
	got := map[string]string{}
	for rel, target := range linkTargets(x) {
		u, _ := url.Parse(target)
		got[rel] = u.Query().Get("page")
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return failf(x, fmt.Sprintf("Link relations to the pages %v", want), describeHeader(x.responseHeader, "Link"))
	}
	return nil
}
