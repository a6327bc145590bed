package main

// Fuzz targets for every parser that reads what a client sends: the body decoder and the field
// rules, the list's query, the Authorization header, the id in the path, and, around them all,
// whole requests. Each states what must hold for any input, checked against a plain reference
// where one exists. `go test` runs the seeds (here and in testdata/fuzz/); ./fuzz.sh searches
// beyond them, for FUZZTIME seconds a target.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// fuzzClientAnswer returns what is wrong with err as an answer to the client, or nil: it must be an
// *apiError of the status given, with a short sentence in valid UTF-8, and fields, when it has
// them, that name a problem.
func fuzzClientAnswer(err error, status int) (*apiError, error) {
	var e *apiError
	switch {
	case !errors.As(err, &e):
		return nil, fmt.Errorf("%T %v is not an *apiError: the client would get a 500", err, err)
	case e.status != status:
		return e, fmt.Errorf("status %d, want %d (%s)", e.status, status, e.message)
	case e.message == "" || len(e.message) > 400 || !utf8.ValidString(e.message):
		return e, fmt.Errorf("the message %q is empty, too long or not UTF-8", e.message)
	case e.fields != nil && e.fields.Name == "" && e.fields.Email == "":
		return e, fmt.Errorf("fields name no problem: %+v", *e.fields)
	}
	return e, nil
}

// The body decoder and the field rules accept exactly one JSON object in valid UTF-8 whose members
// are name and email (and id, only the path's, written as that integer), and what they accept
// satisfies every field rule. Everything else is a 400, and nothing panics.
func FuzzDecodeUserBody(f *testing.F) {
	for _, body := range []string{
		`{"name":"Ann","email":"ann@example.com"}`,
		`{"id":7,"name":" Ann ","email":" ann@example.com "}`,
		`{"id":7.0,"name":"Ann"}`, `{"id":7e0}`, `{"id":null,"name":"Ann"}`, `{"email":null}`, `{}`, `null`, `[]`, ``,
		`{"name":"Ann","name":"Bob"}`, `{"Name":"Ann"}`, `{"name":5}`, `{"name":"Ann"}x`, "\uFEFF{}", "{\"name\":\"\xff\"}",
		`{"name":"` + strings.Repeat("a", 101) + `","email":"a@b.c"}`, `{"name":"a\u0000b","email":"a@b.c"}`,
		`{"name":"Ann","email":"Ann <ann@example.com>"}`, `{"name":"Ann","email":"ann@[127.0.0.1]"}`,
		`{"name":"Ann","email":"\"a b\"@example.com"}`, `{"name":[[[[[[[[]]]]]]]]}`, `{"name":"\ud800","email":"a@b.c"}`,
		`{"id":9223372036854775807,"name":"Ann","email":"ann@example.com"}`, `{"id":9007199254740993.0}`,
	} {
		f.Add([]byte(body), int64(0), false)
		f.Add([]byte(body), int64(7), false)
		f.Add([]byte(body), int64(7), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, pathID int64, patch bool) {
		if pathID <= 0 {
			pathID, patch = 0, false // the path's id is positive, or 0 for POST
		}
		decoded, err := decodeUserBody(body)
		if err != nil {
			if _, problem := fuzzClientAnswer(err, http.StatusBadRequest); problem != nil {
				t.Fatal(problem)
			}
			return
		}
		var fields userFields
		switch {
		case pathID == 0:
			fields, err = decoded.newUser()
		case patch:
			fields, err = decoded.patch(pathID)
		default:
			fields, err = decoded.replacement(pathID)
		}
		if err != nil {
			if _, problem := fuzzClientAnswer(err, http.StatusBadRequest); problem != nil {
				t.Fatal(problem)
			}
			return
		}
		stored := func(value *string) string {
			if value == nil {
				return ""
			}
			return *value
		}
		name, email := stored(fields.name), stored(fields.email)

		// Accepted: check it against what encoding/json makes of the same bytes.
		if !utf8.Valid(body) || !json.Valid(body) {
			t.Fatalf("accepted %q, which is not valid UTF-8 JSON", body)
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(body, &members); err != nil || members == nil {
			t.Fatalf("accepted %q, which is not a JSON object", body)
		}
		for member, value := range members {
			switch member {
			case "name", "email":
				var text string
				if err := json.Unmarshal(value, &text); err != nil {
					t.Fatalf("accepted %s %s, which is not a string", member, value)
				}
				got := map[string]string{"name": name, "email": email}[member]
				if strings.TrimSpace(text) != got {
					t.Fatalf("%s %q was stored as %q", member, text, got)
				}
			case "id":
				if pathID == 0 || string(value) != strconv.FormatInt(pathID, 10) {
					t.Fatalf("accepted the id %s with the path's id %d", value, pathID)
				}
			default:
				t.Fatalf("accepted the member %q", member)
			}
		}
		_, hasName := members["name"]
		_, hasEmail := members["email"]
		if !patch && (!hasName || !hasEmail) || patch && !hasName && !hasEmail {
			t.Fatalf("accepted %q, which lacks a required field (patch %v)", body, patch)
		}
		if hasName {
			if n := utf8.RuneCountInString(name); n < 1 || n > 100 || strings.ContainsFunc(name, unicode.IsControl) ||
				name != strings.TrimSpace(name) {
				t.Fatalf("accepted the name %q", name)
			}
		}
		if hasEmail {
			address, err := mail.ParseAddress(email)
			if err != nil || address.Name != "" || address.Address != email || len(email) > 254 ||
				strings.Contains(email, "@[") || email != strings.TrimSpace(email) {
				t.Fatalf("accepted the email %q", email)
			}
		}
	})
}

// The list's query parser accepts only page, per_page, q, email and sort, each once, with values
// in range; the window it computes stays inside the list; and the Link header it builds is a
// safe header value that names the same query.
func FuzzParseListQuery(f *testing.F) {
	for _, query := range []string{
		"", "page=2", "per_page=100", "page=3&per_page=7&sort=-name&q=ann", "email=ann@example.com", "sort=email",
		"page=0", "page=01", "per_page=101", "page=9223372036854775807&per_page=100", "page=9223372036854775808",
		"pgae=2", "page=1&page=2", "%zz", "a;b", "q=", "q=%0D%0ASet-Cookie:%20x", "sort=id&q=%E2%80%A8", "=", "&&",
	} {
		f.Add(query, uint32(0))
		f.Add(query, uint32(25))
	}
	linkTarget := regexp.MustCompile(`<([^>]*)>`) // the URIs of a Link header
	f.Fuzz(func(t *testing.T, rawQuery string, totalUsers uint32) {
		query, err := parseListQuery(rawQuery)
		if err != nil {
			if _, problem := fuzzClientAnswer(err, http.StatusBadRequest); problem != nil {
				t.Fatal(problem)
			}
			return
		}
		values, err := url.ParseQuery(rawQuery)
		if err != nil {
			t.Fatalf("accepted %q, which url.ParseQuery rejects: %v", rawQuery, err)
		}
		for name, given := range values {
			if !slices.Contains([]string{"page", "per_page", "q", "email", "sort"}, name) || len(given) != 1 {
				t.Fatalf("accepted %q: %s given %d times", rawQuery, name, len(given))
			}
		}
		if query.page < 1 || query.perPage < 1 || query.perPage > 100 || !slices.Contains(sortOrders, query.sort) {
			t.Fatalf("accepted %q as %+v", rawQuery, query)
		}
		if page, given := values["page"]; given && page[0] != strconv.FormatInt(query.page, 10) {
			t.Fatalf("accepted page=%q, which is not in canonical form", page[0])
		}
		if query.paged != (values.Has("page") || values.Has("per_page")) {
			t.Fatalf("%q: paged is %v", rawQuery, query.paged)
		}

		total := int(totalUsers % 1000000)
		from, to := query.window(total)
		if from < 0 || from > to || to > total || query.paged && int64(to-from) > query.perPage || !query.paged && to-from != total {
			t.Fatalf("%q with %d users: the window is [%d, %d)", rawQuery, total, from, to)
		}
		if !query.paged {
			return
		}
		link := query.links(total)
		for _, c := range link {
			if c < ' ' || c == 0x7f {
				t.Fatalf("the Link header %q holds a control character", link)
			}
		}
		for _, rel := range []string{`rel="first"`, `rel="last"`} {
			if !strings.Contains(link, rel) {
				t.Fatalf("the Link header %q lacks %s", link, rel)
			}
		}
		for _, target := range linkTarget.FindAllStringSubmatch(link, -1) {
			again, err := parseListQuery(strings.TrimPrefix(target[1], "/api/users?"))
			if err != nil || again.perPage != query.perPage || again.sort != query.sort || again.search != query.search ||
				again.email != query.email {
				t.Fatalf("the link %s does not keep the query %q: %+v, %v", target[1], rawQuery, again, err)
			}
		}
	})
}

// The Authorization parser grants a role exactly when there is one header holding the scheme
// Bearer (in any case), one or more spaces and a configured token, and nothing else; every other
// header is a 401 with the right challenge, which never repeats what was sent.
func FuzzAuthorization(f *testing.F) {
	for _, value := range []string{
		"Bearer " + writeToken, "bearer " + readToken, "BEARER    " + writeToken, "Bearer", "Bearer ", "Bearer  ",
		"Bearer " + writeToken + " ", "Bearer " + writeToken + "x", "Bearer\t" + writeToken, "Basic dXNlcjpwYXNz",
		"Token " + writeToken, writeToken, "", " ", "Bearer a=", "Bearer ==", "Bearer a=b", "Bearer tëst",
		"Bearer " + writeToken + "\x00", "Bearer " + strings.Repeat("~", 300),
	} {
		f.Add(value, "", false)
		f.Add(value, "Bearer "+writeToken, true)
	}
	tokenSet, err := parseTokens(writeToken + ":write," + readToken + ":read")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, value, second string, twoHeaders bool) {
		r := &http.Request{Header: http.Header{"Authorization": {value}}}
		if twoHeaders {
			r.Header["Authorization"] = append(r.Header["Authorization"], second)
		}
		granted, err := tokenSet.authenticate(r)

		var want role // 0: none
		scheme, rest, spaced := strings.Cut(value, " ")
		if !twoHeaders && strings.EqualFold(scheme, "bearer") && spaced {
			want = map[string]role{writeToken: roleWrite, readToken: roleRead}[strings.TrimLeft(rest, " ")]
		}
		if granted != want {
			t.Fatalf("Authorization %q (a second header: %v) granted role %d, want %d", value, twoHeaders, granted, want)
		}
		if want != 0 {
			if err != nil {
				t.Fatalf("granted a role, and an error: %v", err)
			}
			return
		}
		// No token or another scheme asks for a token; a bad token, or more than one header, says
		// it is invalid (docs/api.md, "Authentication", RFC 6750 §3). Both are fixed answers:
		// nothing sent is repeated.
		e, problem := fuzzClientAnswer(err, http.StatusUnauthorized)
		if problem != nil {
			t.Fatal(problem)
		}
		wantRefusal := errInvalidToken
		if !twoHeaders && (strings.TrimSpace(value) == "" || !strings.EqualFold(scheme, "bearer")) {
			wantRefusal = errNoToken
		}
		if e != wantRefusal {
			t.Fatalf("Authorization %q (a second header: %v): %q with %v, want %q with %v",
				value, twoHeaders, e.message, e.header, wantRefusal.message, wantRefusal.header)
		}
	})
}

// An id is a positive integer in canonical decimal form, and nothing else: through the whole stack
// such an id names a user (200) or nothing (404), and anything else is a JSON 404.
func FuzzParseID(f *testing.F) {
	for _, id := range []string{
		"1", "3", "4", "7", "07", "+7", "-7", "0", "7.0", "7e0", "0x7", " 7", "7 ", "", "9223372036854775807",
		"9223372036854775808", "99999999999999999999", "١", "７", "1/2", "%31", "\x00", "1\n",
	} {
		f.Add(id)
	}
	// One service for every input, holding Ann, Bob and Cy: each input is a GET, so none changes
	// what the next one meets.
	ts := newTestServer(f)
	var ids []int64
	for _, name := range []string{"Ann", "Bob", "Cy"} {
		created := ts.create(f, name, strings.ToLower(name)+"@example.com")
		ids = append(ids, created.ID)
	}
	f.Fuzz(func(t *testing.T, id string) {
		reference, err := strconv.ParseInt(id, 10, 64)
		canonical := err == nil && reference > 0 && strconv.FormatInt(reference, 10) == id
		if id == "." || id == ".." {
			return // the path itself is not clean: the service redirects it (308)
		}
		r := httptest.NewRequest("GET", "/api/users/"+url.PathEscape(id), nil)
		r.Header.Set("Authorization", "Bearer "+readToken)
		w := ts.serve(r)
		want := http.StatusNotFound
		if canonical && slices.Contains(ids, reference) {
			want = http.StatusOK
		}
		if w.Code != want {
			t.Fatalf("GET /api/users/%s: status %d, want %d", url.PathEscape(id), w.Code, want)
		}
		var body errorBody
		if want == http.StatusNotFound && (w.Header().Get("Content-Type") != "application/json" ||
			json.Unmarshal(w.Body.Bytes(), &body) != nil || body.Error == "") {
			t.Fatalf("GET /api/users/%s: the 404 is not the JSON error body: %q", url.PathEscape(id), w.Body)
		}
	})
}

// Any request at all, as net/http would parse it from the wire, gets an answer that is not a 5xx,
// with the JSON error body on every failure and the headers every answer carries, given once and
// logged on one line; a failure leaves the store exactly as it was, and only a write token can
// change it.
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
		{"GET", "/api/users/1?x", "", "", true},
		{"OPTIONS", "/api/users/1", "", "", false},
		{"TRACE", "/api/users", "", "", true},
		{"get", "/api//users/../users/%2e%2e", "", "", true},
		{"POST", "/api/users", "application/json; charset=latin1", "{}", true},
		{"GET", "/healthz", "", "", false},
		{"GET", "/", "", "", false},
		{"GET", "/assets/..%2f..%2fgo.mod", "", "", false},
		{"HEAD", "/openapi.json", "", "", false},
	} {
		f.Add(seed.method, seed.target, seed.contentType, []byte(seed.body), seed.writer)
	}
	requestID := regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	f.Fuzz(func(t *testing.T, method, target, contentType string, body []byte, writer bool) {
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(method + " " + target + " HTTP/1.1\r\nHost: x\r\n\r\n")))
		if err != nil || r.Method != method || r.RequestURI != target {
			return // net/http answers this itself, before any handler runs
		}
		r.Body, r.ContentLength = http.NoBody, 0
		if len(body) > 0 {
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader(string(body))), int64(len(body))
		}
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
		// users is the whole collection as a writer sees it.
		users := func() string {
			r := httptest.NewRequest("GET", "/api/users", nil)
			r.Header.Set("Authorization", "Bearer "+writeToken)
			w := ts.serve(r)
			if w.Code != http.StatusOK {
				t.Fatalf("GET /api/users: status %d, body %s", w.Code, w.Body)
			}
			return w.Body.String()
		}
		before := users()
		logLinesBefore := strings.Count(ts.log.String(), "\n")

		answer := &fuzzAnswerOnce{ResponseRecorder: httptest.NewRecorder()}
		ts.ServeHTTP(answer, r)
		w := answer.ResponseRecorder

		if w.Code >= 500 && w.Code != http.StatusNotImplemented { // 501: a method no route takes
			t.Fatalf("%s %s: status %d, body %s", method, target, w.Code, w.Body)
		}
		if answer.superfluous != "" {
			t.Fatalf("%s %s: %s (net/http would log it)", method, target, answer.superfluous)
		}
		var failure errorBody
		if w.Code >= 400 && (w.Header().Get("Content-Type") != "application/json" ||
			json.Unmarshal(w.Body.Bytes(), &failure) != nil || failure.Error == "") {
			t.Fatalf("%s %s: status %d without the JSON error body: %q", method, target, w.Code, w.Body)
		}
		h := w.Header()
		if h.Get("X-Content-Type-Options") != "nosniff" || !requestID.MatchString(h.Get("X-Request-Id")) {
			t.Fatalf("%s %s: headers %v lack nosniff or a request id", method, target, h)
		}
		if (w.Code == http.StatusNoContent || w.Code == http.StatusNotModified) && (w.Body.Len() > 0 || h.Get("Content-Type") != "") {
			t.Fatalf("%s %s: status %d with a body or a Content-Type", method, target, w.Code)
		}
		if isAPIPath(r.URL.Path) && (!strings.Contains(h.Get("Vary"), "Authorization") ||
			w.Code >= 300 && w.Code != http.StatusNotModified && h.Get("Cache-Control") != "no-store") {
			t.Fatalf("%s %s: status %d with Vary %q and Cache-Control %q", method, target, w.Code, h.Get("Vary"), h.Get("Cache-Control"))
		}
		if lines := strings.Count(ts.log.String(), "\n") - logLinesBefore; lines != 1 {
			t.Fatalf("%s %s: %d log lines, want one:\n%s", method, target, lines, ts.log)
		}
		after := users()
		if after == before {
			return
		}
		if w.Code < 200 || w.Code > 299 || !writer || !slices.Contains([]string{"POST", "PUT", "PATCH", "DELETE"}, method) {
			t.Fatalf("%s %s (write token: %v) answered %d and changed the store:\nbefore %s\nafter  %s",
				method, target, writer, w.Code, before, after)
		}
	})
}

// fuzzAnswerOnce is a recorder that notes a status set twice, or after the body began: net/http
// ignores such a call and logs "superfluous response.WriteHeader call".
type fuzzAnswerOnce struct {
	*httptest.ResponseRecorder
	headerWritten bool
	superfluous   string
}

func (a *fuzzAnswerOnce) WriteHeader(status int) {
	if a.headerWritten && a.superfluous == "" {
		a.superfluous = fmt.Sprintf("WriteHeader(%d) after the answer began with %d", status, a.Code)
	}
	a.headerWritten = true
	a.ResponseRecorder.WriteHeader(status)
}

func (a *fuzzAnswerOnce) Write(b []byte) (int, error) {
	a.headerWritten = true
	return a.ResponseRecorder.Write(b)
}
