package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// Hostile and careless requests, through the whole service. Each rule is tested beside its own
// code; this one table aims every kind of input at the routes that take it, so that a gap between
// the layers shows: whatever is sent, the answer has the status docs/api.md gives it, a failure is
// the JSON error body, and nothing changes, not even the id the next create gets.

// Every hostile request gets its status and leaves the store as it was: each request meets a
// service of its own holding Ann (/api/users/1), Bob (2) and Cy (3), and after it the next create
// gets id 4.
func TestHostileRequestsChangeNothing(t *testing.T) {
	type route struct{ method, target string }
	type hostile struct {
		what      string      // what is hostile or careless about it ("" when the route says it)
		routes    []route     // each gets the request
		header    http.Header // each value a line of its own
		body      string
		length    int64 // the Content-Length, when not the body's: -1 for none, the body sent chunked
		breaksOff bool  // the connection is reset after the body's bytes
		status    int
	}
	const eve = `{"name":"Eve","email":"eve@example.com"}`
	writes := []route{{"POST", "/api/users"}, {"PUT", "/api/users/1"}, {"PATCH", "/api/users/1"}}
	writer := http.Header{"Authorization": {"Bearer " + writeToken}}
	asJSON := http.Header{"Authorization": {"Bearer " + writeToken}, "Content-Type": {"application/json"}}
	padded := eve + strings.Repeat(" ", maxBodyBytes+1-len(eve)) // 1 MiB + 1

	cases := []hostile{
		// An e-mail another user has, in any case: 409.
		{what: "Bob's e-mail in capitals", routes: writes, header: asJSON, body: `{"name":"Eve","email":"BOB@EXAMPLE.COM"}`, status: 409},

		// Media types and codings: 415, before anything else about the body is judged.
		{what: "no Content-Type", routes: writes, header: writer, body: eve, status: 415},
		{what: "gzip", routes: writes, body: eve, status: 415, header: http.Header{"Authorization": {"Bearer " + writeToken},
			"Content-Type": {"application/json"}, "Content-Encoding": {"gzip"}}},
		{what: "text/plain and not JSON", routes: writes, body: "\xff", status: 415,
			header: http.Header{"Authorization": {"Bearer " + writeToken}, "Content-Type": {"text/plain"}}},
		{what: "a merge patch", routes: []route{{"POST", "/api/users"}, {"PUT", "/api/users/1"}}, body: eve, status: 415,
			header: http.Header{"Authorization": {"Bearer " + writeToken}, "Content-Type": {"application/merge-patch+json"}}},

		// Size: one byte over 1 MiB is 413, whatever the body holds, however it is sent; a body
		// that breaks off is 400.
		{what: "a user padded to 1 MiB + 1", routes: writes, header: asJSON, body: padded, status: 413},
		{what: "1 MiB + 1 of bad bytes", routes: writes, header: asJSON, body: strings.Repeat("\xff", maxBodyBytes+1), status: 413},
		{what: "a chunked 1 MiB + 1", routes: writes, header: asJSON, body: padded, length: -1, status: 413},
		{what: "a declared length of 10 GiB", routes: writes, header: asJSON, body: eve, length: 10 << 30, status: 413},
		{what: "a body that breaks off", routes: writes, header: asJSON, body: `{"name":`, breaksOff: true, status: 400},

		// Tokens: only in the Authorization header (401 elsewhere).
		{what: "the token in the query", routes: []route{{"POST", "/api/users?access_token=" + writeToken}},
			header: http.Header{"Content-Type": {"application/json"}}, body: eve, status: 401},

		// The list's query: other routes ignore a query.
		{routes: []route{{"GET", "/api/users/1?x=1;y"}}, header: writer, status: 200},

		// Preconditions: a missing user is 404 first.
		{what: "If-None-Match *", routes: []route{{"POST", "/api/users"}}, body: eve, status: 412,
			header: http.Header{"Authorization": {"Bearer " + writeToken}, "Content-Type": {"application/json"}, "If-None-Match": {"*"}}},
		{what: "If-Match *", routes: []route{{"DELETE", "/api/users/9"}}, status: 404,
			header: http.Header{"Authorization": {"Bearer " + writeToken}, "If-Match": {"*"}}},

		// A body on GET, HEAD, DELETE or OPTIONS is ignored, and so are the headers that ask
		// other servers to take another method.
		{what: "with a body", routes: []route{{"GET", "/api/users"}, {"HEAD", "/api/users/1"}}, header: asJSON, body: eve, status: 200},
		{what: "with a chunked 1 MiB + 1", routes: []route{{"GET", "/api/users"}}, header: asJSON, body: padded, length: -1, status: 200},
		{what: "with a body", routes: []route{{"DELETE", "/api/users/9"}}, header: asJSON, body: `{"id":1}`, status: 404},
		{what: "with a body and a bad token", routes: []route{{"OPTIONS", "/api/users"}}, body: eve, status: 204,
			header: http.Header{"Authorization": {"Bearer nope"}, "Content-Type": {"application/json"}}},
		{what: "with X-HTTP-Method-Override: DELETE", routes: []route{{"GET", "/api/users/1"}}, status: 200,
			header: http.Header{"Authorization": {"Bearer " + writeToken}, "X-HTTP-Method-Override": {"DELETE"}}},
	}

	// Bodies that are not one JSON object in UTF-8 whose members follow the field rules: 400
	// (docs/api.md, "Request bodies").
	for _, body := range []string{
		"", " \r\n\t ", "null", "[" + eve + "]", `"Eve"`, "42", eve + "x", eve + eve, eve + "\x00", "\uFEFF" + eve,
		`{"name":"Eve","email":"eve@example.com"`, `{'name':'Eve','email':'eve@example.com'}`, `{name:"Eve",email:"eve@example.com"}`,
		`{"name":"Eve", /* hi */ "email":"eve@example.com"}`, `{"name":"E\qve","email":"eve@example.com"}`,
		`{"name":NaN,"email":"eve@example.com"}`, "{\"name\":\"E\x00ve\",\"email\":\"eve@example.com\"}",
		"{\"name\":\"\xff\xfe\",\"email\":\"eve@example.com\"}", "{\"name\":\"\xc0\xaf\",\"email\":\"eve@example.com\"}",
		"{\"name\":\"\xed\xa0\x80\",\"email\":\"eve@example.com\"}", "{\"name\":\"Jos\xe9\",\"email\":\"eve@example.com\"}",
		"\x00{\x00\"\x00n\x00a\x00m\x00e\x00\"\x00:\x00\"\x00E\x00\"\x00}",
		`{"name":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `,"email":"eve@example.com"}`,
		`{"name":` + strings.Repeat("[", 500000),
		`{"name":1` + strings.Repeat("0", 100000) + `,"email":"eve@example.com"}`, `{"name":1e999999,"email":"eve@example.com"}`,
		`{"id":2,"name":"Eve","email":"eve@example.com"}`, `{"id":null,"name":"Eve","email":"eve@example.com"}`,
		`{"id":"1","name":"Eve","email":"eve@example.com"}`, `{"id":1.0,"name":"Eve","email":"eve@example.com"}`,
		`{"id":99999999999999999999999,"name":"Eve","email":"eve@example.com"}`,
		`{"name":"Eve","email":"eve@example.com","role":"admin"}`, `{"__proto__":{"admin":true},"name":"Eve","email":"eve@example.com"}`,
		`{"":"Eve","email":"eve@example.com"}`, `{"name":5,"email":"eve@example.com"}`, `{"name":{"first":"Eve"},"email":"eve@example.com"}`,
		`{"name":["Eve"],"email":"eve@example.com"}`, `{"name":true,"email":"eve@example.com"}`, `{"name":"Eve","email":5}`,
		`{"name":null,"email":"eve@example.com"}`, `{"name":"Eve","email":null}`, `{"name":null,"email":null}`, `{}`,
		`{"name":"","email":"eve@example.com"}`, `{"name":" \t\u00a0\u3000 ","email":"eve@example.com"}`,
		`{"name":"` + strings.Repeat("é", 101) + `","email":"eve@example.com"}`, `{"name":"E\u0007ve","email":"eve@example.com"}`,
		`{"name":"Eve\nlevel=ERROR msg=forged","email":"eve@example.com"}`, `{"name":"E\u007fve","email":"eve@example.com"}`,
		`{"name":"E\u0085ve","email":"eve@example.com"}`, `{"name":"Eve","email":""}`, `{"name":"Eve","email":"eve.example.com"}`,
		`{"name":"Eve","email":"Eve <eve@example.com>"}`, `{"name":"Eve","email":"<eve@example.com>"}`,
		`{"name":"Eve","email":"eve@[127.0.0.1]"}`, `{"name":"Eve","email":"\"eve smith\"@example.com"}`,
		`{"name":"Eve","email":"eve@example.com\nBcc: all@example.com"}`, `{"name":"Eve","email":"eve@example.com, bob@example.com"}`,
		`{"name":"Eve","email":"eve(x)@example.com"}`,
		`{"name":"Eve","email":"` + strings.Repeat("a", 64) + "@" + strings.Repeat("b", 186) + `.com"}`,
	} {
		cases = append(cases, hostile{what: fmt.Sprintf("%.40q", body), routes: writes, header: asJSON, body: body, status: 400})
	}

	// Media types that are not JSON, or not in UTF-8: 415.
	for _, contentType := range []string{
		"text/plain", "application/jsonx", "application/problem+json", "application/json; charset=iso-8859-1",
		"application/json; charset=utf-16", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
		"application/json, text/plain", "json", "application/json\x00",
	} {
		cases = append(cases, hostile{what: fmt.Sprintf("Content-Type %q", contentType), routes: writes, body: eve, status: 415,
			header: http.Header{"Authorization": {"Bearer " + writeToken}, "Content-Type": {contentType}}})
	}

	// Tokens: authentication first (401), then permission (403), before anything else is judged.
	for _, a := range []struct {
		name          string
		authorization []string // each a line of its own
		status        int
	}{
		{"no Authorization", nil, 401},
		{"Basic", []string{"Basic dGVzdC13cml0ZS10b2tlbjo="}, 401},
		{"Bearer alone", []string{"Bearer"}, 401},
		{"an unknown token", []string{"Bearer " + writeToken + "x"}, 401},
		{"the token and more", []string{"Bearer " + writeToken + " " + writeToken}, 401},
		{"the token twice", []string{"Bearer " + writeToken, "Bearer " + writeToken}, 401},
		{"the read token", []string{"Bearer " + readToken}, 403},
	} {
		cases = append(cases, hostile{what: "with " + a.name, routes: []route{{"POST", "/api/users"}, {"DELETE", "/api/users/1"}},
			header: http.Header{"Authorization": a.authorization, "Content-Type": {"application/json"}}, body: eve, status: a.status})
	}

	// Routes: a method the path does not take is 405, a path not in the table or an id not in
	// canonical form 404 (docs/api.md, "Routes").
	for _, r := range []route{
		{"POST", "/api/users/1"}, {"POST", "/api/users/abc"}, {"DELETE", "/api/users"}, {"PUT", "/api/users"}, {"PATCH", "/api/users"},
		{"TRACE", "/api/users"}, {"FOO", "/api/users/1"}, {"get", "/api/users"}, {"Delete", "/api/users/1"},
	} {
		cases = append(cases, hostile{routes: []route{r}, header: asJSON, body: eve, status: 405})
	}
	for _, target := range []string{
		"/api/users/0", "/api/users/01", "/api/users/+1", "/api/users/-1", "/api/users/1.0", "/api/users/%201", "/api/users/%EF%BC%91",
		"/api/users/9223372036854775808", "/api/users/4", "/api/users/1/orders", "/api/users/", "/api/products", "/api/",
	} {
		cases = append(cases, hostile{routes: []route{{"DELETE", target}, {"PUT", target}}, header: asJSON, body: eve, status: 404})
	}

	// The list's query: anything it does not take is 400.
	manyNames := make([]string, 10000)
	for i := range manyNames {
		manyNames[i] = fmt.Sprintf("p%d=1", i)
	}
	for _, query := range []string{
		"pgae=2", "page=0", "page=01", "page=+1", "per_page=101", "sort=age", "sort=--id", "email=", "page=1&page=1",
		"%zz", "a;b", "access_token=" + writeToken + ";", strings.Join(manyNames, "&"),
	} {
		cases = append(cases, hostile{routes: []route{{"GET", "/api/users?" + query}}, header: writer, status: 400})
	}

	// Preconditions: a write whose If-Match fails changes nothing.
	manyTags := strings.TrimSuffix(strings.Repeat(`"0123456789abcdef", `, 5000), ", ")
	for _, ifMatch := range []string{`"bogus"`, `W/"bogus"`, `"`, "garbage", manyTags} {
		cases = append(cases, hostile{what: fmt.Sprintf("If-Match %.40q", ifMatch), body: eve, status: 412,
			routes: []route{{"PUT", "/api/users/1"}, {"PATCH", "/api/users/1"}, {"DELETE", "/api/users/1"}},
			header: http.Header{"Authorization": {"Bearer " + writeToken}, "Content-Type": {"application/json"}, "If-Match": {ifMatch}}})
	}

	for _, c := range cases {
		for _, route := range c.routes {
			t.Run(fmt.Sprintf("%s %.40s %s", route.method, route.target, c.what), func(t *testing.T) {
				ts := newTestServer(t)
				for _, name := range []string{"Ann", "Bob", "Cy"} {
					ts.create(t, name, strings.ToLower(name)+"@example.com")
				}
				before := allUsers(t, ts.store)
				var body io.Reader = strings.NewReader(c.body)
				if c.breaksOff {
					body = io.MultiReader(body, iotest.ErrReader(errors.New("connection reset by peer")))
				}
				r := httptest.NewRequest(route.method, route.target, body)
				r.Header = c.header.Clone()
				switch {
				case c.length == -1:
					r.ContentLength, r.TransferEncoding = -1, []string{"chunked"}
				case c.length != 0:
					r.ContentLength = c.length
				}

				w := ts.serve(r)

				if w.Code != c.status {
					t.Errorf("status %d, want %d; body %.200s", w.Code, c.status, w.Body)
				}
				var failure struct{ Error string }
				if w.Code >= 400 && (w.Header().Get("Content-Type") != "application/json" ||
					json.Unmarshal(w.Body.Bytes(), &failure) != nil || failure.Error == "") {
					t.Errorf("a %d without the JSON error body: %.200q", w.Code, w.Body)
				}
				if after := allUsers(t, ts.store); !slices.Equal(after, before) {
					t.Errorf("the store changed:\nbefore %v\nafter  %v", before, after)
				}
				if next := ts.create(t, "Dee", "dee@example.com"); next.ID != 4 {
					t.Errorf("the next create got id %d, want 4: the request used up an id", next.ID)
				}
			})
		}
	}
}
