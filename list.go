package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// listQuery is the query of GET /api/users (docs/api.md, "Listing").
type listQuery struct {
	search     string     // q: users whose name or e-mail contains it; "" filters nothing
	email      string     // email: the user with this address; "" when the query has none
	sortBy     string     // sort: id, name or email (sortKeys, user.go); "" is id
	descending bool       // sort with "-" before it
	page       *pageQuery // nil unless page or per_page was given: then the whole list
	kept       url.Values // q, email and sort as given, which every Link of a page keeps
}

// The zero listQuery selects every user, in id order.

// A pageQuery is the page a query asks for: its number, from 1, and its size.
type pageQuery struct{ number, size int64 }

// parseListQuery reads the list's query. Anything it does not take is 400, so that ?pgae=2 never
// returns everything; a message names the parameter, never its value, since RFC 6750 §2.3 lets
// clients put a token in a query. Of several problems, the first by parameter name is reported.
func parseListQuery(rawQuery string) (listQuery, error) {
	q := listQuery{sortBy: "id", kept: url.Values{}}
	values, err := url.ParseQuery(rawQuery)
	if err != nil { // its message quotes the query: it stays out of ours
		return q, badRequest("the query is malformed: write it as name=value pairs, with no semicolon, and a percent sign only before two hex digits")
	}
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	slices.Sort(names) // so that the same query always gets the same message
	page := pageQuery{number: 1, size: 10}
	paged := false
	for _, name := range names {
		if len(values[name]) > 1 {
			return q, badRequest(fmt.Sprintf("the query parameter %q is given more than once", name))
		}
		value := values[name][0]
		switch name {
		case "page":
			n, ok := parseCanonical(value)
			if !ok {
				return q, badRequest("page must be a whole number from 1 up, such as page=2")
			}
			page.number, paged = n, true
		case "per_page":
			n, ok := parseCanonical(value)
			if !ok || n > 100 {
				return q, badRequest("per_page must be a whole number from 1 to 100, such as per_page=20")
			}
			page.size, paged = n, true
		case "q":
			q.search = value
			q.kept.Set(name, value)
		case "email":
			if value == "" {
				return q, badRequest("email must not be empty: give the address to look for, such as email=ann@example.com")
			}
			q.email = value
			q.kept.Set(name, value)
		case "sort":
			field := strings.TrimPrefix(value, "-")
			if _, ok := sortKeys[field]; !ok && field != "id" {
				return q, badRequest("sort must be id, name or email, with - before it for descending order, such as sort=-name")
			}
			q.sortBy, q.descending = field, field != value
			q.kept.Set(name, value)
		default:
			return q, badRequest(fmt.Sprintf("unknown query parameter %q: the list takes page, per_page, q, email and sort", name))
		}
	}
	if paged {
		q.page = &page
	}
	return q, nil
}

// selectUsers returns the users the query selects from users, a copy of every user in id order:
// filtered, sorted and paged; and how many matched before paging.
func (q listQuery) selectUsers(users []user) (selected []user, total int) {
	selected = users
	if q.email != "" || q.search != "" {
		selected = slices.DeleteFunc(users, func(u user) bool {
			if q.email != "" && !u.hasEmail(q.email) {
				return true
			}
			return q.search != "" && !u.contains(q.search)
		})
	}
	q.sortUsers(selected)
	total = len(selected)
	if q.page == nil {
		return selected, total
	}
	if q.page.number > q.page.totalPages(total) { // past the end, however far: no product to overflow
		return nil, total
	}
	from := (q.page.number - 1) * q.page.size
	return selected[from:min(from+q.page.size, int64(total))], total
}

// sortUsers sorts users, given in id order, as the query asks: by the field lower-cased (sortKeys,
// user.go), ties in ascending id order in both directions.
func (q listQuery) sortUsers(users []user) {
	key, ok := sortKeys[q.sortBy]
	if !ok { // id: users are in id order already
		if q.descending {
			slices.Reverse(users)
		}
		return
	}
	slices.SortStableFunc(users, func(a, b user) int { // stable: ties keep their id order
		c := strings.Compare(strings.ToLower(key(a)), strings.ToLower(key(b)))
		if q.descending {
			return -c
		}
		return c
	})
}

// totalPages is ceil(total / size): 0 when nothing matches.
func (p pageQuery) totalPages(total int) int64 {
	return (int64(total) + p.size - 1) / p.size
}

// links is a page's Link header (RFC 8288): relative URIs of the first, previous, next and last
// pages, each keeping the query's other parameters.
func (q listQuery) links(total int) string {
	others := ""
	if len(q.kept) > 0 {
		others = "&" + q.kept.Encode()
	}
	link := func(page int64, rel string) string {
		return fmt.Sprintf(`</api/users?page=%d&per_page=%d%s>; rel="%s"`, page, q.page.size, others, rel)
	}
	last := q.page.totalPages(total)
	links := []string{link(1, "first")}
	if q.page.number > 1 {
		links = append(links, link(q.page.number-1, "prev"))
	}
	if q.page.number < last {
		links = append(links, link(q.page.number+1, "next"))
	}
	return strings.Join(append(links, link(max(last, 1), "last")), ", ")
}

// userList is the list envelope. The page's numbers are nil, and left out, unless a page was
// asked for.
type userList struct {
	Data       []user `json:"data"`
	Total      int    `json:"total"`
	Page       *int64 `json:"page,omitempty"`
	PerPage    *int64 `json:"per_page,omitempty"`
	TotalPages *int64 `json:"total_pages,omitempty"`
}

// listRepresentation encodes an answer of the list: users, of total matches, and the numbers of
// page when one was asked for (nil for the whole list).
func listRepresentation(users []user, total int, page *pageQuery) representation {
	envelope := userList{Data: users, Total: total}
	if users == nil {
		envelope.Data = []user{} // an empty list is [], never null
	}
	if page != nil {
		totalPages := page.totalPages(total)
		envelope.Page, envelope.PerPage, envelope.TotalPages = &page.number, &page.size, &totalPages
	}
	body, _ := json.Marshal(envelope) // users, ints and strings always encode
	return representation{contentType: "application/json", cacheControl: "private, no-cache", body: body, etag: entityTag(body)}
}
