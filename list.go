package main

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// listQuery is the query of GET /api/users (SPEC §7).
type listQuery struct {
	paged   bool // page or per_page was given
	page    int64
	perPage int64
	search  string     // q: name or e-mail contains it, case-insensitively
	email   string     // e-mail equals it, case-insensitively
	sort    string     // id, name or email, with "-" before it for descending order
	others  url.Values // q, email and sort as given, for the Link header
}

var sortOrders = []string{"id", "-id", "name", "-name", "email", "-email"}

// parseListQuery reads the list's query. Anything it does not know is an error that names the
// parameter: a typo such as ?pgae=2 must not silently return everything.
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
	sort.Strings(names) // so that the same query always gets the same message
	for _, name := range names {
		if len(values[name]) > 1 {
			return query, badRequest(fmt.Sprintf("the query parameter %s is given more than once", quoteForMessage(name)))
		}
		value := values[name][0]
		var ok bool
		switch name {
		case "page":
			query.page, ok = parsePositive(value)
			query.paged = true
			if !ok {
				return query, badRequest("page must be a whole number from 1 up, such as page=2")
			}
		case "per_page":
			query.perPage, ok = parsePositive(value)
			query.paged = true
			if !ok || query.perPage > 100 {
				return query, badRequest("per_page must be a whole number from 1 to 100, such as per_page=20")
			}
		case "q":
			query.search = value // an empty q, as a search form sends it, filters nothing
		case "email":
			if value == "" {
				return query, badRequest("email must not be empty: give the address to look for, such as email=ann@example.com")
			}
			query.email = value
		case "sort":
			if !slices.Contains(sortOrders, value) {
				return query, badRequest("sort must be id, name or email, with - before it for descending order, such as sort=-name")
			}
			query.sort = value
		default:
			return query, badRequest(fmt.Sprintf("unknown query parameter %s: the list takes page, per_page, q, email and sort",
				quoteForMessage(name)))
		}
		if name != "page" && name != "per_page" {
			query.others.Set(name, value)
		}
	}
	return query, nil
}

// window returns which users of the whole result make the page, as indexes [from, to). A page past
// the end, however far, is empty; the arithmetic cannot overflow, since page*perPage is never computed
// for a page past the end.
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

func (q listQuery) totalPages(total int) int64 {
	return (int64(total) + q.perPage - 1) / q.perPage
}

// An encodedList is one answer of the list, ready to send. Its body is bytes, not a string:
// net/http hands a large []byte to the connection in one write, but copies a string through its
// 2 KiB buffer a piece at a time, one write to the socket per piece (the list of 1,000 users took
// three times the CPU of a []byte one). The body is never changed once built.
type encodedList struct {
	version uint64 // for the cached unpaged list: the store version it shows
	body    []byte
	etag    string
	link    string
}

// selectList answers a list query. The unpaged list in id order is what clients ask for most, so
// it is encoded once per change of the store and then served as is.
func (a *api) selectList(q listQuery) *encodedList {
	if !q.paged && q.search == "" && q.email == "" && q.sort == "id" {
		return a.store.allUsersEncoded()
	}
	users, total := a.store.selectUsers(q)
	list := encodeList(users, total, q)
	if q.paged {
		list.link = q.links(total)
	}
	return list
}

// allUsersEncoded returns the unpaged list, encoded anew only when the store has changed since.
func (s *userStore) allUsersEncoded() *encodedList {
	s.mu.RLock()
	cached, version := s.allUsers.Load(), s.version
	if cached != nil && cached.version == version {
		s.mu.RUnlock()
		return cached
	}
	users := make([]storedUser, len(s.ids))
	for i, id := range s.ids {
		users[i] = s.users[id]
	}
	s.mu.RUnlock()

	fresh := encodeList(users, len(users), listQuery{}) // outside the lock: readers and writers go on
	fresh.version = version
	for { // keep the newest: a slow reader must not replace a newer list with its older one
		old := s.allUsers.Load()
		if old != nil && old.version >= version || s.allUsers.CompareAndSwap(old, fresh) {
			return fresh
		}
	}
}

// selectUsers returns the users of one page (or all, unpaged) and how many match before paging.
// A page in id order costs the same however many users there are: it is a slice of the sorted ids.
// Filters and other orders must look at every user.
func (s *userStore) selectUsers(q listQuery) ([]storedUser, int) {
	if q.search == "" && q.email == "" && (q.sort == "id" || q.sort == "-id") {
		s.mu.RLock()
		defer s.mu.RUnlock()
		total := len(s.ids)
		from, to := q.window(total)
		page := make([]storedUser, 0, to-from)
		for i := from; i < to; i++ {
			if q.sort == "-id" {
				page = append(page, s.users[s.ids[total-1-i]])
			} else {
				page = append(page, s.users[s.ids[i]])
			}
		}
		return page, total
	}
	matches := s.filter(q.email, strings.ToLower(q.search))
	sortUsers(matches, q.sort)
	from, to := q.window(len(matches))
	return matches[from:to], len(matches)
}

// filter returns the users that match email and search, in id order.
func (s *userStore) filter(email, search string) []storedUser {
	matches := func(u storedUser) bool {
		return search == "" || strings.Contains(strings.ToLower(u.name()), search) ||
			strings.Contains(strings.ToLower(u.email()), search)
	}
	key := s.byEmail.key(email)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if email != "" {
		id, ok := s.byEmail.find(key, s.emailKeyOf)
		if !ok || !matches(s.users[id]) {
			return nil
		}
		return []storedUser{s.users[id]}
	}
	var found []storedUser
	for _, id := range s.ids {
		if u := s.users[id]; matches(u) {
			found = append(found, u)
		}
	}
	return found
}

// sortUsers puts users, given in id order, into the order asked for. Names and e-mails compare
// lower-cased, then byte by byte; the sort is stable, so ties stay in ascending id order whichever
// the direction.
func sortUsers(users []storedUser, order string) {
	field := strings.TrimPrefix(order, "-")
	descending := order != field
	if field == "id" {
		if descending {
			slices.Reverse(users)
		}
		return
	}
	type keyed struct {
		lower, exact string
		user         storedUser
	}
	keys := make([]keyed, len(users))
	for i, u := range users {
		value := u.name()
		if field == "email" {
			value = u.email()
		}
		keys[i] = keyed{strings.ToLower(value), value, u}
	}
	slices.SortStableFunc(keys, func(a, b keyed) int {
		c := strings.Compare(a.lower, b.lower)
		if c == 0 {
			c = strings.Compare(a.exact, b.exact)
		}
		if descending {
			return -c
		}
		return c
	})
	for i := range keys {
		users[i] = keys[i].user
	}
}

// encodeList joins users, each already encoded, into the list envelope. Its ETag combines the
// users' own hashes with the envelope's numbers, so the body itself is never hashed.
func encodeList(users []storedUser, total int, q listQuery) *encodedList {
	size := 64
	for _, u := range users {
		size += len(u.json) + 1
	}
	body := make([]byte, 0, size)
	body = append(body, `{"data":[`...)
	hash := fnv.New64a()
	var buffer [8]byte
	for i, u := range users {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, u.json...)
		binary.LittleEndian.PutUint64(buffer[:], u.etag)
		hash.Write(buffer[:])
	}
	envelope := `],"total":` + strconv.Itoa(total)
	if q.paged {
		envelope += fmt.Sprintf(`,"page":%d,"per_page":%d,"total_pages":%d`, q.page, q.perPage, q.totalPages(total))
	}
	envelope += "}"
	body = append(body, envelope...)
	hash.Write([]byte(envelope))
	return &encodedList{body: body, etag: formatETag(hash.Sum64())}
}

// links builds the Link header of a page (RFC 8288): first, last, and prev and next where they
// exist, as relative URIs that keep the other parameters.
func (q listQuery) links(total int) string {
	link := func(page int64, rel string) string {
		others := ""
		if len(q.others) > 0 {
			others = "&" + q.others.Encode()
		}
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
	links = append(links, link(max(totalPages, 1), "last"))
	return strings.Join(links, ", ")
}
