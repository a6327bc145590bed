package main

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"
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

// window returns the page's users as indexes [from, to); page*perPage is computed only for a page
// that exists, so no page, however far past the end, overflows.
func (q listQuery) window(total int) (from, to int) {
	if !q.paged {
		return 0, total
	}
	if q.page > q.totalPages(total) {
		return total, total
	}
	from = int(q.page-1) * int(q.perPage)
	return from, min(from+int(q.perPage), total)
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
