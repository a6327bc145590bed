package main

// Fuzz targets for every function that reads what a client sends: the body (decodeUserBody and
// the rules of userBody), the list's query (parseListQuery), the Authorization header
// (tokens.authenticate), an id (parseCanonical), and, around them all, whole requests through
// newTestServer. Each says what must hold for any input, checked against a plain reference where
// there is one. `go test` runs the seeds below and those in testdata/fuzz/<FuzzName>/; ./fuzz.sh
// searches beyond them, FUZZTIME seconds a target, and saves what fails there as a new seed.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// A body is taken only when it is one JSON object in valid UTF-8, which encoding/json reads with
// unknown fields refused, whose id (if any) is the path's written as an integer, and whose fields
// pass their rules once trimmed; what it sets is what it sent, trimmed. Anything else is a 400
// with a message, and fields, when there are some, that name name or email.
func FuzzDecodeUserBody(f *testing.F) {
	for _, body := range []string{
		`{"name":"Ann","email":"ann@example.com"}`, `{"id":7,"name":" Ann ","email":" ann@example.com "}`,
		`{"id":7.0,"name":"Ann"}`, `{"id":null,"name":"Ann"}`, `{"email":null}`, `{}`, `null`, `[]`, ``, `{"name":5}`,
		`{"NAME":"Ann","Email":"ann@example.com"}`, `{"name":"Ann","name":null}`, `{"age":1,"name":5}`, `{"name":"Ann"} x`,
		`{"name":"` + strings.Repeat("a", 101) + `","email":"a@b.c"}`, `{"name":"a\u0000b","email":"a@b.c"}`,
		`{"name":"Ann","email":"Ann <ann@example.com>"}`, `{"name":"Ann","email":"ann@[127.0.0.1]"}`,
	} {
		f.Add([]byte(body), int64(0), false)
		f.Add([]byte(body), int64(7), false)
		f.Add([]byte(body), int64(7), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, pathID int64, patch bool) {
		if pathID <= 0 {
			pathID, patch = 0, false // 0 stands for a POST
		}
		b, err := decodeUserBody(body)
		var fields userFields
		switch {
		case err != nil:
		case pathID == 0:
			fields, err = b.createFields()
		case patch:
			fields, err = b.patchFields(pathID)
		default:
			fields, err = b.replaceFields(pathID)
		}
		if err != nil {
			var e *apiError
			if !errors.As(err, &e) || e.status != http.StatusBadRequest || e.message == "" || !utf8.ValidString(e.message) {
				t.Fatalf("%q: error %#v, want a 400 with a message in UTF-8", body, err)
			}
			for field, problem := range e.fields {
				if field != "name" && field != "email" || !strings.Contains(e.message, problem) {
					t.Fatalf("%q: fields %v do not match the message %q", body, e.fields, e.message)
				}
			}
			return
		}

		var sent struct { // the body as encoding/json reads it, the reference
			ID    json.RawMessage `json:"id"`
			Name  *string         `json:"name"`
			Email *string         `json:"email"`
		}
		decoder := json.NewDecoder(bytes.NewReader(body))
		decoder.DisallowUnknownFields()
		if !utf8.Valid(body) || decoder.Decode(&sent) != nil || decoder.Decode(new(json.RawMessage)) != io.EOF {
			t.Fatalf("took %q, which is not one JSON object in UTF-8 with known members", body)
		}
		if sent.ID != nil && (pathID == 0 || string(sent.ID) != strconv.FormatInt(pathID, 10)) {
			t.Fatalf("took the id %s with the path's id %d", sent.ID, pathID)
		}
		if fields.name == nil && fields.email == nil || !patch && (fields.name == nil || fields.email == nil) {
			t.Fatalf("took %q, which sets the name %v and the email %v (a patch: %v)", body, fields.name != nil, fields.email != nil, patch)
		}
		for _, field := range []struct {
			set, sent *string
		}{{fields.name, sent.Name}, {fields.email, sent.Email}} {
			if field.set != nil && (field.sent == nil || *field.set != strings.TrimSpace(*field.sent)) {
				t.Fatalf("took %q, which sets %q", body, *field.set)
			}
		}
		if name := fields.name; name != nil {
			if n := utf8.RuneCountInString(*name); n < 1 || n > 100 || strings.ContainsFunc(*name, unicode.IsControl) {
				t.Fatalf("took the name %q", *name)
			}
		}
		if email := fields.email; email != nil {
			address, err := mail.ParseAddress(*email)
			if err != nil || address.Name != "" || address.Address != *email || len(*email) > 254 || strings.Contains(*email, "@[") {
				t.Fatalf("took the email %q", *email)
			}
		}
	})
}

// The list's query takes page, per_page, q, email and sort, each once, with page and per_page in
// canonical form and in range, and builds a Link header whose every URI is the same query on
// another page. A refusal says one of the sentences the names alone decide: it never shows a
// value or the raw query, where a client may have put a token (RFC 6750 §2.3).
func FuzzParseListQuery(f *testing.F) {
	for _, query := range []string{
		"", "page=2", "per_page=100", "page=3&per_page=7&sort=-name&q=ann", "email=ann@example.com", "q=", "page=0",
		"page=01", "per_page=101", "page=9223372036854775807&per_page=100", "pgae=2", "page=1&page=2", "%zz",
		"access_token=SECRET;", "q=%0D%0ASet-Cookie:%20x", "=", "&&",
	} {
		f.Add(query, uint32(0))
		f.Add(query, uint32(25))
	}
	sentences := map[string]bool{} // what the parser says of a query whatever its values
	for _, query := range []string{";", "page=0", "per_page=0", "sort=x", "email="} {
		_, err := parseListQuery(query)
		sentences[err.Error()] = true
	}
	linkURI := regexp.MustCompile(`<([^>]*)>`)
	f.Fuzz(func(t *testing.T, rawQuery string, totalUsers uint32) {
		query, err := parseListQuery(rawQuery)
		values, parseErr := url.ParseQuery(rawQuery)
		if err != nil {
			said := func(q url.Values) bool {
				_, e := parseListQuery(q.Encode())
				return e != nil && e.Error() == err.Error()
			}
			named := false
			for name := range values {
				named = named || said(url.Values{name: {"x"}}) || said(url.Values{name: {"x", "x"}})
			}
			var e *apiError
			if !errors.As(err, &e) || e.status != http.StatusBadRequest || !sentences[e.message] && !named {
				t.Fatalf("%q: error %#v, want a 400 that the parameters' names alone decide", rawQuery, err)
			}
			return
		}
		if parseErr != nil {
			t.Fatalf("took %q, which url.ParseQuery refuses: %v", rawQuery, parseErr)
		}
		for name, given := range values {
			if !slices.Contains([]string{"page", "per_page", "q", "email", "sort"}, name) || len(given) != 1 {
				t.Fatalf("took %q: %q given %d times", rawQuery, name, len(given))
			}
		}
		if !slices.Contains([]string{"id", "name", "email"}, query.sortBy) {
			t.Fatalf("took %q, sorted by %q", rawQuery, query.sortBy)
		}
		if (query.page != nil) != (values.Has("page") || values.Has("per_page")) {
			t.Fatalf("%q: paged is %v", rawQuery, query.page != nil)
		}
		if query.page != nil && (values.Has("page") && values.Get("page") != strconv.FormatInt(query.page.number, 10) ||
			values.Has("per_page") && values.Get("per_page") != strconv.FormatInt(query.page.size, 10) ||
			query.page.number < 1 || query.page.size < 1 || query.page.size > 100) {
			t.Fatalf("took %q as the page %+v", rawQuery, *query.page)
		}

		users := make([]user, totalUsers%200)
		for i := range users {
			users[i] = user{ID: int64(i + 1), Name: fmt.Sprintf("User %d", i), Email: fmt.Sprintf("user%d@example.com", i)}
		}
		selected, total := query.selectUsers(users)
		if total > len(users) || query.page == nil && len(selected) != total || query.page != nil && int64(len(selected)) > query.page.size {
			t.Fatalf("%q of %d users: %d selected of %d", rawQuery, len(users), len(selected), total)
		}
		if query.page == nil {
			return
		}
		link := query.links(total)
		if strings.ContainsFunc(link, unicode.IsControl) || !strings.Contains(link, `rel="first"`) || !strings.Contains(link, `rel="last"`) {
			t.Fatalf("the Link header %q", link)
		}
		for _, uri := range linkURI.FindAllStringSubmatch(link, -1) {
			again, err := parseListQuery(strings.TrimPrefix(uri[1], "/api/users?"))
			if err != nil || again.page.size != query.page.size || again.sortBy != query.sortBy || again.descending != query.descending || again.search != query.search || again.email != query.email {
				t.Fatalf("the link %s is not the query %q on another page: %+v, %v", uri[1], rawQuery, again, err)
			}
		}
	})
}

// An id is a positive integer in canonical decimal, at most 2^63-1: exactly the strings that
// strconv.FormatInt writes for a positive int64.
func FuzzParseCanonical(f *testing.F) {
	for _, s := range []string{"7", "07", "+7", "0", "9223372036854775807", "9223372036854775808"} { // more in testdata/fuzz
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		reference, err := strconv.ParseInt(s, 10, 64)
		canonical := err == nil && reference > 0 && strconv.FormatInt(reference, 10) == s
		if id, ok := parseCanonical(s); ok != canonical || ok && id != reference {
			t.Fatalf("parseCanonical(%q) = %d, %v; want %v", s, id, ok, canonical)
		}
	})
}

// Any request at all, as net/http parses it from the wire, gets an answer that is not a 5xx: a
// failure is the JSON error body, a 204 or 304 has no body and no Content-Type, and an answer
// under /api/ varies by Authorization. Only a write token's successful POST, PUT, PATCH or DELETE
// changes the store; a failure leaves it as it was, and the next id with it.
func FuzzRequest(f *testing.F) {
	const eve = `{"name":"Eve","email":"eve@example.com"}`
	for _, seed := range []struct {
		method, target, contentType, body string
		writer                            bool
	}{
		{"POST", "/api/users", "application/json", eve, true},
		{"POST", "/api/users", "application/json", eve, false},
		{"PUT", "/api/users/1", "application/json", `{"id":1,"name":"Ann","email":"ann@example.com"}`, true},
		{"PATCH", "/api/users/2", "application/merge-patch+json", `{"email":"ANN@example.com"}`, true},
		{"DELETE", "/api/users/3", "", "", true},
		{"GET", "/api/users?page=2&per_page=1&sort=-email", "", "", false},
		{"GET", "/api/users?access_token=x;", "", "", false},
		{"OPTIONS", "/api/users/1", "", "", false},
		{"TRACE", "/api/users", "", "", true},
		{"GET", "/api//users/../users/%2e%2e", "", "", true},
		{"POST", "/api/users", "application/json; charset=latin1", "{}", true},
		{"GET", "/healthz", "", "", false},
		{"GET", "/assets/..%2f..%2fgo.mod", "", "", false},
	} {
		f.Add(seed.method, seed.target, seed.contentType, []byte(seed.body), seed.writer)
	}
	f.Fuzz(func(t *testing.T, method, target, contentType string, body []byte, writer bool) {
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(method + " " + target + " HTTP/1.1\r\nHost: x\r\n\r\n")))
		if err != nil || r.Method != method || r.RequestURI != target || !strings.HasPrefix(r.URL.Path, "/") {
			return // net/http answers it itself, or its target is no path (*, CONNECT's host:port): both exempt
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		r.Header.Set("Authorization", "Bearer "+readToken)
		if writer {
			r.Header.Set("Authorization", "Bearer "+writeToken)
		}
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		ts := newTestServer(t)
		for _, name := range []string{"Ann", "Bob", "Cy"} { // something real to aim at
			ts.create(t, name, strings.ToLower(name)+"@example.com")
		}
		before := allUsers(t, ts.store)

		w := ts.serve(r)

		h, what := w.Header(), fmt.Sprintf("%s %s (write token: %v): %d", method, target, writer, w.Code)
		var failure struct{ Error string }
		switch {
		case w.Code >= 500:
			t.Fatalf("%s %s", what, w.Body)
		case w.Code >= 400 && (h.Get("Content-Type") != "application/json" || json.Unmarshal(w.Body.Bytes(), &failure) != nil || failure.Error == ""):
			t.Fatalf("%s without the JSON error body: %q", what, w.Body)
		case (w.Code == http.StatusNoContent || w.Code == http.StatusNotModified) && (w.Body.Len() > 0 || h.Get("Content-Type") != ""):
			t.Fatalf("%s with a body or a Content-Type", what)
		case strings.HasPrefix(r.URL.Path, "/api/") && !slices.Contains(h.Values("Vary"), "Authorization"):
			t.Fatalf("%s with Vary %q", what, h.Values("Vary"))
		}
		if after := allUsers(t, ts.store); !slices.Equal(after, before) &&
			(w.Code > 299 || !writer || !slices.Contains([]string{"POST", "PUT", "PATCH", "DELETE"}, method)) {
			t.Fatalf("%s changed the store:\nbefore %v\nafter  %v", what, before, after)
		}
		if w.Code >= 400 {
			if next := ts.create(t, "Dee", "dee@example.com"); next.ID != 4 {
				t.Fatalf("%s used up an id: the next create got %d", what, next.ID)
			}
		}
	})
}
