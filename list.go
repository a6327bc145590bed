package main

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// listQuery is the query of GET /api/users (docs/api.md, "Listing").
type listQuery struct {
	paged   bool // page or per_page was given
	page    int64
	perPage int64
	search  string     // q: name or e-mail contains it, case-insensitively
	email   string     // e-mail equals it, case-insensitively
	sort    string     // id, name or email, with "-" before it for descending order
	others  url.Values // q, email and sort as given, which the Link header keeps
}

// sortOrders are the values sort takes.
var sortOrders = []string{"id", "-id", "name", "-name", "email", "-email"}

// parseListQuery reads the list's query: anything unknown is 400, so ?pgae=2 never returns all.
func parseListQuery(rawQuery string) (listQuery, error) {
	query := listQuery{page: 1, perPage: 10, sort: "id", others: url.Values{}}
	values, err := url.ParseQuery(rawQuery)
	if err != nil {
		return query, badRequest("the query string is malformed: " + err.Error())
	}
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	slices.Sort(names) // so that the same query always gets the same message
	for _, name := range names {
		if len(values[name]) > 1 {
			return query, badRequest(fmt.Sprintf("the query parameter %s is given more than once", quoteForMessage(name)))
		}
		value := values[name][0]
		var ok bool // whether page or per_page is a number in canonical decimal, as ids are
		switch name {
		case "page":
			if query.page, ok = parseCanonical(value); !ok {
				return query, badRequest("page must be a whole number from 1 up, such as page=2")
			}
			query.paged = true
		case "per_page":
			if query.perPage, ok = parseCanonical(value); !ok || query.perPage > 100 {
				return query, badRequest("per_page must be a whole number from 1 to 100, such as per_page=20")
			}
			query.paged = true
		case "q":
			query.search = value // an empty q, as a search form sends it, filters nothing
			query.others.Set(name, value)
		case "email":
			if value == "" {
				return query, badRequest("email must not be empty: give the address to look for, such as email=ann@example.com")
			}
			query.email = value
			query.others.Set(name, value)
		case "sort":
			if !slices.Contains(sortOrders, value) {
				return query, badRequest("sort must be id, name or email, with - before it for descending order, such as sort=-name")
			}
			query.sort = value
			query.others.Set(name, value)
		default:
			return query, badRequest(fmt.Sprintf("unknown query parameter %s: the list takes page, per_page, q, email and sort",
				quoteForMessage(name)))
		}
	}
	return query, nil
}

// totalPages is ceil(total / per_page): 0 when nothing matches.
func (q listQuery) totalPages(total int) int64 {
	return (int64(total) + q.perPage - 1) / q.perPage
}

// window returns the users of the answer as indexes [from, to) of total: all of them unless a
// page was asked for.
func (q listQuery) window(total int) (from, to int) {
	if !q.paged {
		return 0, total
	}
	return pageBounds(total, q.page, q.perPage)
}

// list returns the answer to a query of the list, encoded outside every lock. What clients ask for
// most, the whole list, is encoded once per change of the store; a page in id order copies only its
// users, the same cost at any size; a filter or another order looks at every user.
func (a *api) list(q listQuery) (*encodedList, error) {
	filtered := q.search != "" || q.email != ""
	switch {
	case !filtered && !q.paged && q.sort == "id":
		return a.wholeList.get(a.store)
	case !filtered && q.paged && (q.sort == "id" || q.sort == "-id"):
		order := ascending
		if q.sort == "-id" {
			order = descending
		}
		page, total := a.store.pageInIDOrder(q.page, q.perPage, order)
		return encodeList(page, total, q)
	}
	matches := a.store.filter(q.email, q.search)
	sortUsers(matches, q.sort)
	from, to := q.window(len(matches))
	return encodeList(matches[from:to], len(matches), q)
}

// listCache keeps the whole list, encoded, until the store changes.
type listCache struct {
	mu      sync.Mutex
	list    *encodedList // nil until a reader has encoded it
	version uint64       // the store's version that list shows
}

// get returns the whole list of s: the one cached, while s has not changed since, or a new one,
// encoded outside every lock and kept unless a newer one has been kept meanwhile.
func (c *listCache) get(s *userStore) (*encodedList, error) {
	c.mu.Lock()
	cached, cachedVersion := c.list, c.version
	c.mu.Unlock()
	if cached != nil && cachedVersion == s.version() {
		return cached, nil
	}
	users, version := s.all()
	fresh, err := encodeList(users, len(users), listQuery{})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.list == nil || version >= c.version {
		c.list, c.version = fresh, version
	}
	return fresh, nil
}

// collectionPrecondition returns the check of a POST's preconditions against the collection, whose
// ETag is the whole list's (docs/api.md, "Conditional requests"), for the store to run under its
// write lock.
func (a *api) collectionPrecondition(p preconditions) func() error {
	return func() error {
		if !p.present() {
			return nil // only a conditional POST pays for the list's ETag
		}
		collection, err := a.wholeList.get(a.store)
		if err != nil {
			return err
		}
		return p.checkWrite(collection.etag)
	}
}

// links is a page's Link header (RFC 8288): relative URIs that keep the other parameters.
func (q listQuery) links(total int) string {
	others := ""
	if len(q.others) > 0 {
		others = "&" + q.others.Encode()
	}
	link := func(page int64, rel string) string {
		return fmt.Sprintf(`</api/users?page=%d&per_page=%d%s>; rel="%s"`, page, q.perPage, others, rel)
	}
	totalPages := q.totalPages(total)
	links := []string{link(1, "first")}
	if q.page > 1 {
		links = append(links, link(q.page-1, "prev"))
	}
	if q.page < totalPages {
		links = append(links, link(q.page+1, "next"))
	}
	return strings.Join(append(links, link(max(totalPages, 1), "last")), ", ")
}

// An encodedList is one answer of the list, encoded and ready to send.
type encodedList struct {
	total int // how many users match the query before paging
	body  []byte
	etag  string
}

// userList is the list envelope. The page's numbers are in it only when a page was asked for.
type userList struct {
	Data  []user `json:"data"`
	Total int    `json:"total"`
	*pageNumbers
}

// pageNumbers are the members a page adds to the envelope.
type pageNumbers struct {
	Page       int64 `json:"page"`
	PerPage    int64 `json:"per_page"`
	TotalPages int64 `json:"total_pages"`
}

// encodeList encodes an answer of the list: users, of total matches, paged as q says.
func encodeList(users []user, total int, q listQuery) (*encodedList, error) {
	envelope := userList{Data: users, Total: total}
	if users == nil {
		envelope.Data = []user{} // an empty list is [], never null
	}
	if q.paged {
		envelope.pageNumbers = &pageNumbers{q.page, q.perPage, q.totalPages(total)}
	}
	body, err := encodeJSON(envelope)
	if err != nil {
		return nil, err
	}
	return &encodedList{total: total, body: body, etag: entityTag(body)}, nil
}

// sortUsers sorts users, given in id order, stably: lower-cased, then by bytes, then by id.
func sortUsers(users []user, order string) {
	field, descending := strings.TrimPrefix(order, "-"), strings.HasPrefix(order, "-")
	if field == "id" {
		if descending {
			slices.Reverse(users)
		}
		return
	}
	type sortKey struct{ lower, exact string }
	keys := make(map[int64]sortKey, len(users)) // lowered once each, not at every comparison
	for _, u := range users {
		value := u.Name
		if field == "email" {
			value = u.Email
		}
		keys[u.ID] = sortKey{strings.ToLower(value), value}
	}
	slices.SortStableFunc(users, func(a, b user) int {
		c := cmp.Or(strings.Compare(keys[a.ID].lower, keys[b.ID].lower), strings.Compare(keys[a.ID].exact, keys[b.ID].exact))
		if descending {
			return -c
		}
		return c
	})
}
