package kit

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// listRules: GET of the collection, its shape, filters, sorts and pages, as the description
// declares them. The rules that need tag read only the rule's own items, through its filter.
func listRules() []Rule {
	return []Rule{
		{
			ID: "list/envelope", Tier: Must, Source: docListing, Doc: docListing,
			Requirement: `GET of the collection answers 200 with the list: a JSON array of items, or the object the description's list key shapes, {"data": [items], "total": <integer>} for users.`,
			check: func(c *Client) error {
				_, err := c.decodeListing(c.get(c.collection()))
				return err
			},
		},
		{
			ID: "list/total-is-length", Tier: Must, Keys: keyTotal, Source: docListing, Doc: docListing,
			Requirement: "Without paging parameters, the list's total equals the number of its items.",
			check: func(c *Client) error {
				x := c.get(c.collection())
				l, err := c.decodeListing(x)
				if err != nil {
					return err
				}
				if *l.total != int64(len(l.items)) {
					return failf(x, fmt.Sprintf("a total of %d, the number of items", len(l.items)), fmt.Sprintf("a total of %d", *l.total))
				}
				return nil
			},
		},
		{
			ID: "list/holds-created-item", Tier: Must, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "An item once created is in the list, as its create answered it.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				x := c.get(c.collection())
				l, err := c.decodeListing(x)
				if err != nil {
					return err
				}
				if !slices.ContainsFunc(l.items, func(listed item) bool { return reflect.DeepEqual(listed.members, it.members) }) {
					return failf(x, "the list holding "+it.String(), fmt.Sprintf("%d items without it", len(l.items)))
				}
				return nil
			},
		},
		{
			ID: "list/empty-is-an-array", Tier: Reference, Keys: keyTag, Source: docListing, Doc: docListing,
			Requirement: "A query that matches nothing answers an empty list: an empty array, never null, and a total of 0 where the list carries one.",
			check: func(c *Client) error {
				x := c.mine("")
				l, err := c.decodeListing(x)
				if err != nil {
					return err
				}
				if len(l.items) != 0 || l.total != nil && *l.total != 0 {
					return failf(x, "no items, and a total of 0", x.summary())
				}
				return nil
			},
		},
		{
			ID: "list/filter-matches", Tier: Reference, Keys: keyFilters, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "Each filter keeps exactly the items it matches as the description says, exact or contains, with or without case: " +
				"given a value of an item, the same in other case and a part of it, and, for contains, nothing at all.",
			check: func(c *Client) error {
				items, err := c.newItems(2)
				if err != nil {
					return err
				}
				for _, name := range sortedKeys(c.run.desc.Filters) {
					f := c.run.desc.Filters[name]
					for _, value := range filterValues(f, items[0]) {
						if err := c.filtersKeep(items, url.Values{name: {value}}); err != nil {
							return err
						}
					}
				}
				return nil
			},
		},
		{
			ID: "list/filters-combine", Tier: Reference, Keys: keyFilters, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "Two filters together keep only the items both keep.",
			check: func(c *Client) error {
				names := sortedKeys(c.run.desc.Filters)
				if len(names) < 2 {
					return skipf("the description declares one filter: two are needed to combine")
				}
				items, err := c.newItems(2)
				if err != nil {
					return err
				}
				first, second := c.run.desc.Filters[names[0]], c.run.desc.Filters[names[1]]
				a := textOf(items[0].members[first.Fields[0]])
				for _, other := range items {
					if err := c.filtersKeep(items, url.Values{names[0]: {a}, names[1]: {textOf(other.members[second.Fields[0]])}}); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "list/sort-by-id", Tier: Reference, Keys: keySort | keyTag, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "Sorting by id orders the items by ascending id, and in descending order by descending id.",
			check: func(c *Client) error {
				items, err := c.newItems(3)
				if err != nil {
					return err
				}
				ascending := byID(items)
				return firstError(c.listIs(c.mine(c.ascending("id")), ascending...), c.listIs(c.mine(c.descending("id")), reversed(ascending)...))
			},
		},
		{
			ID: "list/sort-by-each-key", Tier: Reference, Keys: keySort | keyTag, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "Sorting by each key the description declares orders the items by its values, as numbers or as text, in any case if it says so, " +
				"and in descending order in reverse, items that compare equal keeping ascending id order both ways.",
			check: func(c *Client) error {
				sorting := c.run.desc.Sort
				var items []item // every item of the rule's, the values of each key in turn
				for _, key := range sortedKeys(sorting.Keys) {
					for _, value := range sorting.Keys[key] {
						it, err := c.newItemFrom(c.fill(c.run.desc.Create.with(key, value)))
						if err != nil {
							return err
						}
						items = append(items, it)
					}
					ascending, descending := byID(items), byID(items)
					slices.SortStableFunc(ascending, func(a, b item) int { return compareValues(a.members[key], b.members[key], sorting.IgnoreCase) })
					slices.SortStableFunc(descending, func(a, b item) int { return compareValues(b.members[key], a.members[key], sorting.IgnoreCase) })
					if err := firstError(c.listIs(c.mine(c.ascending(key)), ascending...), c.listIs(c.mine(c.descending(key)), descending...)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "list/sort-ties-by-id", Tier: Reference, Keys: keySort | keyTag, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "Items that sort equal keep ascending id order, in both directions.",
			check: func(c *Client) error {
				key := c.tieKey()
				if key == "" {
					return skipf("every sort key of the description is its unique field: no two items may have the same value")
				}
				value := c.run.desc.Sort.Keys[key][0]
				var items []item
				for range 3 {
					it, err := c.newItemFrom(c.fill(c.run.desc.Create.with(key, value)))
					if err != nil {
						return err
					}
					items = append(items, it)
				}
				ascending := byID(items)
				return firstError(c.listIs(c.mine(c.ascending(key)), ascending...), c.listIs(c.mine(c.descending(key)), ascending...))
			},
		},
		{
			ID: "list/bad-sort-400", Tier: Reference, Keys: keySort, Source: docListing, Doc: docListing,
			Requirement: "A sort the list cannot do, by a key it does not declare, by nothing, or with the descending mark twice or of another value, is 400.",
			check: func(c *Client) error {
				sorting := c.run.desc.Sort
				queries := []string{sorting.Param + "=kit-no-such-key", sorting.Param + "="}
				if sorting.Prefix != "" {
					queries = append(queries, sorting.Param+"="+url.QueryEscape(sorting.Prefix+sorting.Prefix+"id"))
				} else {
					queries = append(queries, sorting.Param+"=id&"+sorting.Order+"=sideways")
				}
				return c.listRefuses(queries...)
			},
		},
		{
			ID: "list/page-slice", Tier: Reference, Keys: keyPaging | keyTag, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "The page number and size select that slice of the list: page 2 of 2 items a page holds its third and fourth items.",
			check: func(c *Client) error {
				if _, err := c.newItems(5); err != nil {
					return err
				}
				whole, err := c.decodeListing(c.mine(""))
				if err != nil {
					return err
				}
				return c.listIs(c.mine(c.page(2, 2)), whole.items[2:min(4, len(whole.items))]...)
			},
		},
		{
			ID: "list/pages-of-the-whole-list", Tier: Reference, Keys: keyPaging | keyTag, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "The pages of a list, in its own order and (with sort) by descending id, are slices of the whole list of that query, and their total, where the list carries one, is its length.",
			check: func(c *Client) error {
				if _, err := c.newItems(3); err != nil {
					return err
				}
				orders := []string{""}
				if c.run.desc.Sort != nil {
					orders = append(orders, c.descending("id"))
				}
				for _, order := range orders {
					whole, err := c.decodeListing(c.mine(order))
					if err != nil {
						return err
					}
					n := len(whole.items)
					for page, want := range [][]item{whole.items[:min(2, n)], whole.items[min(2, n):min(4, n)]} {
						x := c.mine(strings.TrimPrefix(order+"&"+c.page(page+1, 2), "&"))
						if err := c.listIs(x, want...); err != nil {
							return err
						}
						if l, _ := c.decodeListing(x); l.total != nil && *l.total != int64(n) {
							return failf(x, fmt.Sprintf("a total of %d, the length of the whole list", n), fmt.Sprintf("a total of %d", *l.total))
						}
					}
				}
				return nil
			},
		},
		{
			ID: "list/page-total-counts-matches", Tier: Reference, Keys: keyPaging | keyTag, Source: docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "A page's total (list.total, or paging.total_header) counts every item that matches, before paging.",
			check: func(c *Client) error {
				header := c.run.desc.Paging.TotalHeader
				if c.run.desc.missing(keyTotal) != 0 && header == "" {
					return skipf("not declared (list.total or paging.total_header)")
				}
				if _, err := c.newItems(5); err != nil {
					return err
				}
				x := c.mine(c.page(2, 2))
				l, err := c.decodeListing(x)
				switch {
				case err != nil:
					return err
				case l.total == nil:
					return failf(x, header+": 5", describeHeader(x.responseHeader, header))
				case *l.total != 5:
					return failf(x, "a total of 5, the items that match", fmt.Sprintf("a total of %d", *l.total))
				}
				return nil
			},
		},
		{
			ID: "list/link-relations", Tier: Reference, Keys: keyPaging | keyTag, Source: "RFC 8288; " + docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "A page carries a Link header with first and last, prev when it is not the first and next when it is not the last: pages 1, 2 and 3 of 5 items, 2 a page.",
			check: func(c *Client) error {
				if _, err := c.newItems(5); err != nil {
					return err
				}
				for _, tt := range []struct {
					page int
					want map[string]string // the page of each relation
				}{
					{1, map[string]string{"first": "1", "next": "2", "last": "3"}},
					{2, map[string]string{"first": "1", "prev": "1", "next": "3", "last": "3"}},
					{3, map[string]string{"first": "1", "prev": "2", "last": "3"}},
				} {
					if err := c.linksAre(c.mine(c.page(tt.page, 2)), c.run.desc.Paging.Page, tt.want); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "list/link-next-visits-each-once", Tier: Should, Keys: keyPaging | keyTag, Source: "RFC 8288 §3.3", Doc: docListing, Needs: OwnItems,
			Requirement: "Following next from the first page visits every item of the list once, and ends: 5 items, 2 a page, in 3 pages.",
			check: func(c *Client) error {
				if _, err := c.newItems(5); err != nil {
					return err
				}
				whole, err := c.decodeListing(c.mine(""))
				if err != nil {
					return err
				}
				x := c.mine(c.page(1, 2))
				var visited []string
				for pages := 1; ; pages++ {
					l, err := c.decodeListing(x)
					if err != nil {
						return err
					}
					visited = append(visited, l.ids()...)
					if _, hasNext := linkTargets(x)["next"]; !hasNext {
						break
					}
					next, onTheServer := x.linkURI("next")
					if !onTheServer || pages == 3 {
						return failf(x, "a next link to a page of this list, and none from page 3", describeHeader(x.responseHeader, "Link"))
					}
					x = c.get(next.RequestURI())
				}
				if !slices.Equal(visited, whole.ids()) {
					return failf(x, "the items "+strings.Join(whole.ids(), ", ")+", each once", "the items "+strings.Join(visited, ", "))
				}
				return nil
			},
		},
		{
			ID: "list/link-keeps-the-query", Tier: Reference, Keys: keyPaging | keyTag, Source: "RFC 8288; " + docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "The Link URIs, relative or absolute, name the collection and keep every parameter of the query but the page: filters, sort and size.",
			check: func(c *Client) error {
				items, err := c.newItems(3)
				if err != nil {
					return err
				}
				paging := c.run.desc.Paging
				// The rule's own items, 1 a page, in pages that a Link must join; and, where the
				// description has another filter, a page of one item, whose links, if any, keep it.
				pages := url.Values{c.run.desc.Tag.Filter: {c.group}, paging.Size: {"1"}, paging.Page: {"2"}}
				if c.run.desc.Sort != nil {
					descending, _ := url.ParseQuery(c.descending("id"))
					for name, values := range descending {
						pages[name] = values
					}
				}
				x := c.get(c.collection() + "?" + pages.Encode())
				if len(linkTargets(x)) == 0 {
					return failf(x, "a Link header", describeHeader(x.responseHeader, "Link"))
				}
				queries := []url.Values{pages}
				for _, name := range sortedKeys(c.run.desc.Filters) {
					if name != c.run.desc.Tag.Filter {
						value := textOf(items[0].members[c.run.desc.Filters[name].Fields[0]])
						queries = append(queries, url.Values{name: {value}, paging.Page: {"1"}, paging.Size: {"5"}})
						break
					}
				}
				for _, query := range queries {
					x := c.get(c.collection() + "?" + query.Encode())
					for rel := range linkTargets(x) {
						u, onTheServer := x.linkURI(rel)
						if !onTheServer || u.Path != c.collection() {
							return failf(x, "links to the collection, "+c.collection()+"?...", describeHeader(x.responseHeader, "Link"))
						}
						for name := range query {
							if name != paging.Page && u.Query().Get(name) != query.Get(name) {
								return failf(x, fmt.Sprintf("rel=%s keeping %s=%s", rel, name, query.Get(name)), describeHeader(x.responseHeader, "Link"))
							}
						}
					}
				}
				return nil
			},
		},
		{
			ID: "list/304-carries-link", Tier: Reference, Keys: keyPaging | keyTag, Source: "RFC 9110 §15.4.5; " + docListing, Doc: docListing, Needs: OwnItems,
			Requirement: "The 304 of a page carries the Link header its 200 carries: RFC 9110 §15.4.5 has a 304 send the fields a 200 would, that a cache updates.",
			check: func(c *Client) error {
				if _, err := c.newItems(2); err != nil {
					return err
				}
				target := c.ownList() + "&" + c.page(1, 1)
				page := c.get(target)
				if err := page.headerPresent("ETag"); err != nil {
					return err
				}
				x := c.get(target, "If-None-Match", page.responseHeader.Get("ETag"))
				return firstError(x.statusIs(http.StatusNotModified), x.headerIs("Link", page.responseHeader.Get("Link")))
			},
		},
		{
			ID: "list/bad-page-400", Tier: Reference, Keys: keyPaging, Source: docListing, Doc: docListing,
			Requirement: "A page number that is not a whole number from 1 (0, -1, abc, or empty) is 400.",
			check: func(c *Client) error {
				page := c.run.desc.Paging.Page
				return c.listRefuses(page+"=0", page+"=-1", page+"=abc", page+"=")
			},
		},
		{
			ID: "list/bad-size-400", Tier: Reference, Keys: keyPaging, Source: docListing, Doc: docListing,
			Requirement: "A page size that is not a whole number from 1 to the largest the description declares (0, abc, empty, or one more than the largest) is 400.",
			check: func(c *Client) error {
				paging := c.run.desc.Paging
				queries := []string{paging.Size + "=0", paging.Size + "=abc", paging.Size + "="}
				if paging.MaxSize > 0 {
					queries = append(queries, paging.Size+"="+strconv.Itoa(paging.MaxSize+1))
				}
				return c.listRefuses(queries...)
			},
		},
		{
			ID: "list/unknown-parameter-400", Tier: Reference, Source: docListing, Doc: docListing,
			Requirement: "A parameter the list does not take (kit-unknown, or the page parameter misspelt or in another case) is 400, so a typo never returns everything.",
			check: func(c *Client) error {
				queries := []string{"kit-unknown=1"}
				if paging := c.run.desc.Paging; paging != nil {
					queries = append(queries, misspelt(paging.Page)+"=2", otherCase(paging.Page)+"=2")
				}
				return c.listRefuses(queries...)
			},
		},
	}
}

// filterValues are the values a filter is tried with, from an item: for each field, its value, the
// same in other case, and a part of it; and for a filter that contains, nothing at all.
func filterValues(f FilterKey, it item) []string {
	var values []string
	for _, field := range f.Fields {
		value := textOf(it.members[field])
		values = append(values, value)
		if other := otherCase(value); other != value {
			values = append(values, other)
		}
		if runes := []rune(value); len(runes) > 2 {
			values = append(values, string(runes[1:len(runes)-1]))
		}
	}
	if f.Match == "contains" {
		values = append(values, "")
	}
	return values
}

// filtersKeep checks that the list filtered by query keeps only items every filter of the query
// keeps, and all of the rule's own items that they keep.
func (c *Client) filtersKeep(own []item, query url.Values) error {
	keeps := func(it item) bool {
		for _, name := range sortedKeys(query) {
			if !c.run.desc.Filters[name].keeps(it, query.Get(name)) {
				return false
			}
		}
		return true
	}
	x := c.get(c.collection() + "?" + query.Encode())
	l, err := c.decodeListing(x)
	if err != nil {
		return err
	}
	var want []string
	for _, it := range own {
		if keeps(it) {
			want = append(want, it.ID)
		}
	}
	expected := fmt.Sprintf("only items the filters keep, the items %v of the rule's among them", want)
	if i := slices.IndexFunc(l.items, func(it item) bool { return !keeps(it) }); i >= 0 {
		return failf(x, expected, "the item "+l.items[i].String())
	}
	for _, id := range want {
		if !slices.Contains(l.ids(), id) {
			return failf(x, expected, "the items "+describeItems(l.items))
		}
	}
	return nil
}

// listRefuses checks that each query of the list is 400.
func (c *Client) listRefuses(queries ...string) error {
	for _, query := range queries {
		if err := c.get(c.collection() + "?" + query).statusIs(http.StatusBadRequest); err != nil {
			return err
		}
	}
	return nil
}

// ascending and descending are the query that sorts by key in that order, as the description
// writes it: sort=name and sort=-name, or _sort=name&_order=asc and _sort=name&_order=desc.
func (c *Client) ascending(key string) string {
	sorting := c.run.desc.Sort
	if sorting.Prefix != "" {
		return url.QueryEscape(sorting.Param) + "=" + url.QueryEscape(key)
	}
	return url.QueryEscape(sorting.Param) + "=" + url.QueryEscape(key) + "&" + url.QueryEscape(sorting.Order) + "=asc"
}

func (c *Client) descending(key string) string {
	sorting := c.run.desc.Sort
	if sorting.Prefix != "" {
		return url.QueryEscape(sorting.Param) + "=" + url.QueryEscape(sorting.Prefix+key)
	}
	return url.QueryEscape(sorting.Param) + "=" + url.QueryEscape(key) + "&" + url.QueryEscape(sorting.Order) + "=desc"
}

// page is the query of a page, its number from 1 and its size.
func (c *Client) page(number, size int) string {
	paging := c.run.desc.Paging
	return fmt.Sprintf("%s=%d&%s=%d", url.QueryEscape(paging.Page), number, url.QueryEscape(paging.Size), size)
}

// tieKey is a sort key two items may share a value of: the first, by name, that is not the
// unique field; "" when there is none.
func (c *Client) tieKey() string {
	for _, key := range sortedKeys(c.run.desc.Sort.Keys) {
		if c.run.desc.Unique == nil || key != c.run.desc.Unique.Field {
			return key
		}
	}
	return ""
}

// linkURI returns the URI of a relation of the Link header, resolved against the request's (RFC
// 8288 §3.2), when it is on the same server.
func (x *reply) linkURI(rel string) (*url.URL, bool) {
	base, _ := url.Parse(x.url)
	target, err := base.Parse(linkTargets(x)[rel])
	return target, err == nil && target.Scheme == base.Scheme && target.Host == base.Host
}

// linksAre checks the relations of a Link header and the page each names, by the page parameter.
func (c *Client) linksAre(x *reply, pageParam string, want map[string]string) error {
	got := map[string]string{}
	for rel := range linkTargets(x) {
		u, _ := x.linkURI(rel)
		got[rel] = u.Query().Get(pageParam)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return failf(x, fmt.Sprintf("Link relations to the pages %v", want), describeHeader(x.responseHeader, "Link"))
	}
	return nil
}

// misspelt is a parameter's name with two letters swapped, as a typo would: page is pgae.
func misspelt(name string) string {
	letters := strings.TrimLeftFunc(name, func(r rune) bool { return !unicode.IsLetter(r) })
	if len(letters) < 3 {
		return name + "x"
	}
	at := len(name) - len(letters)
	return name[:at+1] + name[at+2:at+3] + name[at+1:at+2] + name[at+3:]
}

// otherCase is s in upper case, or in lower case when it is in upper case already.
func otherCase(s string) string {
	if upper := strings.ToUpper(s); upper != s {
		return upper
	}
	return strings.ToLower(s)
}

// reversed returns the items in the other order.
func reversed(items []item) []item {
	r := slices.Clone(items)
	slices.Reverse(r)
	return r
}
