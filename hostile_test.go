package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// Hostile and careless requests, through the whole service. Each rule is tested beside its own
// code; this one table aims every kind of input at the routes that take it, so that a gap between
// the layers shows: whatever is sent, the answer has the status docs/api.md gives it, a failure is
// the JSON error body, and nothing changes, not even the id the next create gets.

// A hostileRequest is a request a hostile or careless client might send, and its status.
type hostileRequest struct {
	name, method, target, token, body string
	header                            []string // name, value pairs, each a line of its own
	status                            int
	prepare                           func(*http.Request) // what header fields cannot say
}

// Every hostile request gets its status and leaves the store as it was: each case meets a service
// of its own holding Ann (/api/users/1), Bob (2) and Cy (3), and after it the next create is 4.
func TestHostileRequestsChangeNothing(t *testing.T) {
	for _, c := range hostileRequests() {
		t.Run(c.name, func(t *testing.T) {
			ts := newTestServer(t)
			for _, name := range []string{"Ann", "Bob", "Cy"} {
				ts.create(t, name, strings.ToLower(name)+"@example.com")
			}
			before := allUsers(t, ts.store)
			r := apiRequest(c.method, c.target, c.token, c.body, c.header...)
			if c.prepare != nil {
				c.prepare(r)
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

// hostileRequests are the requests of TestHostileRequestsChangeNothing, by kind.
func hostileRequests() []hostileRequest {
	var cases []hostileRequest
	add := func(c hostileRequest) {
		if len(c.name) > 60 {
			c.name = c.name[:50] + fmt.Sprintf("...(%d bytes)", len(c.name))
		}
		cases = append(cases, c)
	}
	const eve = `{"name":"Eve","email":"eve@example.com"}`
	asJSON := []string{"Content-Type", "application/json"}
	onEveryWrite := func(name, body string, header []string, status int, prepare func(*http.Request)) {
		for _, w := range []struct{ method, target string }{{"POST", "/api/users"}, {"PUT", "/api/users/1"}, {"PATCH", "/api/users/1"}} {
			add(hostileRequest{name: w.method + " " + name, method: w.method, target: w.target, token: writeToken,
				body: body, header: header, status: status, prepare: prepare})
		}
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
		onEveryWrite(fmt.Sprintf("%q", body), body, asJSON, http.StatusBadRequest, nil)
	}

	// An e-mail another user has, in any case: 409.
	onEveryWrite("Bob's e-mail in capitals", `{"name":"Eve","email":"BOB@EXAMPLE.COM"}`, nil, http.StatusConflict, nil)

	// Media types and codings: 415, before anything else about the body is judged.
	for _, contentType := range []string{
		"text/plain", "application/jsonx", "application/problem+json", "application/json; charset=iso-8859-1",
		"application/json; charset=utf-16", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
		"application/json, text/plain", "json", "application/json\x00",
	} {
		onEveryWrite(fmt.Sprintf("Content-Type %q", contentType), eve, []string{"Content-Type", contentType}, http.StatusUnsupportedMediaType, nil)
	}
	onEveryWrite("no Content-Type", eve, nil, http.StatusUnsupportedMediaType, func(r *http.Request) { r.Header.Del("Content-Type") })
	onEveryWrite("gzip", eve, []string{"Content-Encoding", "gzip"}, http.StatusUnsupportedMediaType, nil)
	onEveryWrite("text/plain and not JSON", "\xff", []string{"Content-Type", "text/plain"}, http.StatusUnsupportedMediaType, nil)
	for _, w := range []struct{ method, target string }{{"POST", "/api/users"}, {"PUT", "/api/users/1"}} {
		add(hostileRequest{name: w.method + " a merge patch", method: w.method, target: w.target, token: writeToken, body: eve,
			header: []string{"Content-Type", "application/merge-patch+json"}, status: http.StatusUnsupportedMediaType})
	}

	// Size: one byte over 1 MiB is 413, whatever the body holds, however it is sent; a body that
	// breaks off is 400.
	padded := eve + strings.Repeat(" ", maxBodyBytes+1-len(eve))
	onEveryWrite("a user padded to 1 MiB + 1", padded, nil, http.StatusRequestEntityTooLarge, nil)
	onEveryWrite("1 MiB + 1 of bad bytes", strings.Repeat("\xff", maxBodyBytes+1), nil, http.StatusRequestEntityTooLarge, nil)
	chunked := func(r *http.Request) { r.ContentLength, r.TransferEncoding = -1, []string{"chunked"} }
	onEveryWrite("a chunked 1 MiB + 1", padded, nil, http.StatusRequestEntityTooLarge, chunked)
	onEveryWrite("a declared length of 10 GiB", eve, nil, http.StatusRequestEntityTooLarge, func(r *http.Request) { r.ContentLength = 10 << 30 })
	onEveryWrite("a body that breaks off", eve, nil, http.StatusBadRequest, func(r *http.Request) {
		r.Body = io.NopCloser(io.MultiReader(strings.NewReader(`{"name":`), iotest.ErrReader(errors.New("connection reset by peer"))))
		r.ContentLength = -1
	})

	// Tokens: authentication first (401), then permission (403), before anything else is judged.
	for _, a := range []struct {
		name          string
		authorization []string
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
		var header []string
		for _, line := range a.authorization {
			header = append(header, "Authorization", line)
		}
		add(hostileRequest{name: "POST with " + a.name, method: "POST", target: "/api/users", body: eve, header: header, status: a.status})
		add(hostileRequest{name: "DELETE with " + a.name, method: "DELETE", target: "/api/users/1", header: header, status: a.status})
	}
	add(hostileRequest{name: "POST with the token in the query", method: "POST", target: "/api/users?access_token=" + writeToken,
		body: eve, status: http.StatusUnauthorized})

	// Routes: a method the path does not take is 405, a path not in the table or an id not in
	// canonical form 404 (docs/api.md, "Routes").
	for _, m := range []struct{ method, target string }{
		{"POST", "/api/users/1"}, {"POST", "/api/users/abc"}, {"DELETE", "/api/users"}, {"PUT", "/api/users"}, {"PATCH", "/api/users"},
		{"TRACE", "/api/users"}, {"FOO", "/api/users/1"}, {"get", "/api/users"}, {"Delete", "/api/users/1"},
	} {
		add(hostileRequest{name: m.method + " " + m.target, method: m.method, target: m.target, token: writeToken, body: eve,
			status: http.StatusMethodNotAllowed})
	}
	for _, target := range []string{
		"/api/users/0", "/api/users/01", "/api/users/+1", "/api/users/-1", "/api/users/1.0", "/api/users/%201", "/api/users/%EF%BC%91",
		"/api/users/9223372036854775808", "/api/users/4", "/api/users/1/orders", "/api/users/", "/api/products", "/api/",
	} {
		add(hostileRequest{name: "DELETE " + target, method: "DELETE", target: target, token: writeToken, status: http.StatusNotFound})
		add(hostileRequest{name: "PUT " + target, method: "PUT", target: target, token: writeToken, body: eve, status: http.StatusNotFound})
	}

	// The list's query: anything it does not take is 400. Other routes ignore a query.
	manyNames := make([]string, 10000)
	for i := range manyNames {
		manyNames[i] = fmt.Sprintf("p%d=1", i)
	}
	for _, query := range []string{
		"pgae=2", "page=0", "page=01", "page=+1", "per_page=101", "sort=age", "sort=--id", "email=", "page=1&page=1",
		"%zz", "a;b", "access_token=" + writeToken + ";", strings.Join(manyNames, "&"),
	} {
		add(hostileRequest{name: "GET ?" + query, method: "GET", target: "/api/users?" + query, token: writeToken, status: http.StatusBadRequest})
	}
	add(hostileRequest{name: "GET a user ?x=1;y", method: "GET", target: "/api/users/1?x=1;y", token: writeToken, status: http.StatusOK})

	// Preconditions: a write whose If-Match fails changes nothing; a missing user is 404 first.
	manyTags := strings.TrimSuffix(strings.Repeat(`"0123456789abcdef", `, 5000), ", ")
	for _, ifMatch := range []string{`"bogus"`, `W/"bogus"`, `"`, "garbage", manyTags} {
		for _, method := range []string{"PUT", "PATCH", "DELETE"} {
			body := map[string]string{"PUT": eve, "PATCH": `{"name":"Eve"}`}[method]
			add(hostileRequest{name: method + " If-Match " + ifMatch, method: method, target: "/api/users/1", token: writeToken,
				body: body, header: []string{"If-Match", ifMatch}, status: http.StatusPreconditionFailed})
		}
	}
	add(hostileRequest{name: "POST If-None-Match *", method: "POST", target: "/api/users", token: writeToken, body: eve,
		header: []string{"If-None-Match", "*"}, status: http.StatusPreconditionFailed})
	add(hostileRequest{name: "DELETE a missing user If-Match *", method: "DELETE", target: "/api/users/9", token: writeToken,
		header: []string{"If-Match", "*"}, status: http.StatusNotFound})

	// A body on GET, HEAD, DELETE or OPTIONS is ignored, and so are the headers that ask
	// other servers to take another method.
	add(hostileRequest{name: "GET the list with a body", method: "GET", target: "/api/users", token: writeToken, body: eve, status: http.StatusOK})
	add(hostileRequest{name: "GET the list with a chunked 1 MiB + 1", method: "GET", target: "/api/users", token: writeToken, body: padded,
		status: http.StatusOK, prepare: chunked})
	add(hostileRequest{name: "HEAD a user with a body", method: "HEAD", target: "/api/users/1", token: writeToken, body: eve, status: http.StatusOK})
	add(hostileRequest{name: "DELETE a missing user with a body", method: "DELETE", target: "/api/users/9", token: writeToken,
		body: `{"id":1}`, status: http.StatusNotFound})
	add(hostileRequest{name: "OPTIONS with a body and a bad token", method: "OPTIONS", target: "/api/users", token: "nope", body: eve,
		status: http.StatusNoContent})
	add(hostileRequest{name: "GET with X-HTTP-Method-Override DELETE", method: "GET", target: "/api/users/1", token: writeToken,
		header: []string{"X-HTTP-Method-Override", "DELETE"}, status: http.StatusOK})
	return cases
}
