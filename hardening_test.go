package main

// Hardening. A reference server gets copied into places where anyone can reach it, so
// these tests prove that it keeps working whatever it is sent:
//
//   - every hostile or careless request gets a clear 4xx with the JSON error body, never a 5xx and
//     never a 2xx, and leaves the store exactly as it was;
//   - slow and stuck clients are cut off by the time-outs without slowing anyone else;
//   - bodies past 1 MiB are refused at once, whatever their size, without the server holding them;
//   - many clients writing at once keep ids and e-mails unique and total equal to the users present;
//   - SIGTERM lets requests in flight finish, refuses new ones and returns within its bound;
//   - a panic costs one request, and is logged with its stack;
//   - tokens never reach a log line or an answer, and request values cannot forge log lines.
//
// The fuzz targets in fuzz_test.go look for what these tables did not think of.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// ---------------------------------------------------------------------------------------------
// Hostile requests, through the whole handler stack.

// A hostileRequest is one request a hostile or careless client might send, and the status it
// must get.
type hostileRequest struct {
	name    string
	method  string
	target  string
	header  []string // pairs of name and value
	body    string
	want    int                 // the status; wantCleanPathRedirect for a path the mux cleans
	prepare func(*http.Request) // for what headers cannot say: a chunked body, a declared length
}

// wantCleanPathRedirect stands for the redirect ServeMux sends to a path not in clean form: 301 up
// to Go 1.25, 307 from Go 1.26 (docs/api.md, "Routes").
const wantCleanPathRedirect = 3

// anyClientError stands for any 4xx, where the specification leaves the choice open.
const anyClientError = 4

var (
	asWriterWithJSON = join(asWriter, asJSON)
	eveJSON          = `{"name":"Eve","email":"eve@example.com"}`
)

// serverWithThreeUsers is the service with three users, ids 1 to 3: hostile requests aim at
// something real.
func serverWithThreeUsers(t testing.TB) *testServer {
	t.Helper()
	s := newTestServer(t)
	s.create(t, "Ann", "ann@example.com")
	s.create(t, "Bob", "bob@example.com")
	s.create(t, "Cy", "cy@example.com")
	return s
}

// snapshotOfUsers is the whole collection as a writer sees it.
func snapshotOfUsers(t testing.TB, s *testServer) string {
	t.Helper()
	w := s.do("GET", "/api/users", "", asWriter...)
	if w.Code != http.StatusOK {
		t.Fatalf("GET /api/users: status %d, body %s", w.Code, w.Body)
	}
	return w.Body.String()
}

// requireUsersUnchanged fails unless the collection is what it was, and the next user created
// gets nextID: a refused create must not even use up an id.
func requireUsersUnchanged(t testing.TB, s *testServer, before string, nextID int64) {
	t.Helper()
	if after := snapshotOfUsers(t, s); after != before {
		t.Fatalf("the store changed:\nbefore %s\nafter  %s", before, after)
	}
	if created := s.create(t, "Probe", "probe@example.com"); created.ID != nextID {
		t.Fatalf("the next user created got id %d, want %d: a refused request used up an id", created.ID, nextID)
	}
}

// sendHostile sends a hostile request through the handler stack.
func sendHostile(s *testServer, c hostileRequest) *httptest.ResponseRecorder {
	r := httptest.NewRequest(c.method, c.target, strings.NewReader(c.body))
	if c.body == "" {
		r.Body, r.ContentLength = http.NoBody, 0
	}
	for i := 0; i+1 < len(c.header); i += 2 {
		r.Header.Add(c.header[i], c.header[i+1])
	}
	if c.prepare != nil {
		c.prepare(r)
	}
	w := httptest.NewRecorder()
	s.handler.ServeHTTP(w, r)
	return w
}

var echoableRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// checkHostileAnswer checks what every answer must be: the expected status, never a 5xx, the
// JSON error body on every failure, a short message that does not echo what was sent, and the
// headers every response carries.
func checkHostileAnswer(t *testing.T, c hostileRequest, w *httptest.ResponseRecorder) {
	t.Helper()
	switch {
	case c.want == wantCleanPathRedirect:
		if w.Code != http.StatusMovedPermanently && w.Code != http.StatusTemporaryRedirect {
			t.Fatalf("status %d, want a redirect to the clean path; body %.300s", w.Code, w.Body)
		}
		// "//host/..." would send the client to another host (an open redirect).
		if location := w.Header().Get("Location"); !strings.HasPrefix(location, "/") || strings.HasPrefix(location, "//") {
			t.Fatalf("Location %q is not a path on this server", location)
		}
	case w.Code != c.want:
		t.Fatalf("status %d, want %d; body %.300s", w.Code, c.want, w.Body)
	}
	if w.Code >= 400 {
		message, _ := errorBody(t, w)
		if len(message) > 400 {
			t.Fatalf("the error message is %d bytes long: messages must stay short whatever was sent", len(message))
		}
	}
	if got := w.Header().Get("X-Content-Type-Options"); got != "nosniff" {
		t.Fatalf("X-Content-Type-Options = %q, want nosniff", got)
	}
	if id := w.Header().Get("X-Request-Id"); !echoableRequestID.MatchString(id) {
		t.Fatalf("X-Request-Id = %q: a request id must be 1 to 64 characters of A-Z a-z 0-9 . _ -", id)
	}
}

func TestHostileRequestsGetA4xxAndLeaveTheStoreAsItWas(t *testing.T) {
	cases := hostileRequests()
	if len(cases) < 500 {
		t.Fatalf("only %d hostile requests: the battery has shrunk", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := serverWithThreeUsers(t)
			before := snapshotOfUsers(t, s)
			checkHostileAnswer(t, c, sendHostile(s, c))
			requireUsersUnchanged(t, s, before, 4)
		})
	}
}

// hostileRequests is the battery: every kind of input the issue names, each with the status the
// specification gives it.
func hostileRequests() []hostileRequest {
	var cases []hostileRequest
	add := func(c hostileRequest) { cases = append(cases, c) }
	onEveryWriteWithQuery := func(query, name, body string, header []string, want int) {
		for _, target := range []struct{ method, path string }{
			{"POST", "/api/users"}, {"PUT", "/api/users/1"}, {"PATCH", "/api/users/1"},
		} {
			add(hostileRequest{name: target.method + " " + name, method: target.method, target: target.path + query,
				header: header, body: body, want: want})
		}
	}
	onEveryWrite := func(name, body string, header []string, want int) {
		onEveryWriteWithQuery("", name, body, header, want)
	}

	// Bodies that are not one JSON object in valid UTF-8 with the right members (docs/api.md,
	// "Request bodies", rules 3 to 5).
	for _, b := range []struct{ name, body string }{
		{"empty body", ""},
		{"white space only", " \r\n\t "},
		{"null", "null"},
		{"an array", `[{"name":"Eve","email":"eve@example.com"}]`},
		{"a string", `"Eve"`},
		{"a number", `42`},
		{"true", `true`},
		{"a byte-order mark", "\uFEFF" + eveJSON},
		{"text after the object", eveJSON + "x"},
		{"two objects", eveJSON + eveJSON},
		{"a NUL byte after the object", eveJSON + "\x00"},
		{"a NUL byte between members", `{"name":"Eve",` + "\x00" + `"email":"eve@example.com"}`},
		{"a raw NUL byte in a string", "{\"name\":\"E\x00ve\",\"email\":\"eve@example.com\"}"},
		{"a raw newline in a string", "{\"name\":\"E\nve\",\"email\":\"eve@example.com\"}"},
		{"an escaped NUL in the name", `{"name":"E\u0000ve","email":"eve@example.com"}`},
		{"an escaped NUL in the email", `{"name":"Eve","email":"eve\u0000@example.com"}`},
		{"an unterminated object", `{"name":"Eve","email":"eve@example.com"`},
		{"an unterminated string", `{"name":"Eve`},
		{"a trailing comma", `{"name":"Eve","email":"eve@example.com",}`},
		{"a missing comma", `{"name":"Eve" "email":"eve@example.com"}`},
		{"a missing colon", `{"name" "Eve","email":"eve@example.com"}`},
		{"single quotes", `{'name':'Eve','email':'eve@example.com'}`},
		{"bare member names", `{name:"Eve",email:"eve@example.com"}`},
		{"a comment", `{"name":"Eve", /* hi */ "email":"eve@example.com"}`},
		{"a bad escape", `{"name":"E\qve","email":"eve@example.com"}`},
		{"a bad escape in a member name", `{"na\me":"Eve","email":"eve@example.com"}`},
		{"NaN", `{"name":NaN,"email":"eve@example.com"}`},
		{"invalid UTF-8", "{\"name\":\"\xff\xfe\",\"email\":\"eve@example.com\"}"},
		{"overlong UTF-8 for a slash", "{\"name\":\"\xc0\xaf\",\"email\":\"eve@example.com\"}"},
		{"overlong UTF-8 for NUL", "{\"name\":\"\xc0\x80\",\"email\":\"eve@example.com\"}"},
		{"a UTF-8-encoded surrogate", "{\"name\":\"\xed\xa0\x80\",\"email\":\"eve@example.com\"}"},
		{"a truncated UTF-8 sequence", "{\"name\":\"\xe2\x82\",\"email\":\"eve@example.com\"}"},
		{"Latin-1 text", "{\"name\":\"Jos\xe9\",\"email\":\"eve@example.com\"}"},
		{"invalid UTF-8 in a member name", "{\"n\xffame\":\"Eve\",\"email\":\"eve@example.com\"}"},
		{"UTF-16", "\x00{\x00\"\x00n\x00a\x00m\x00e\x00\"\x00:\x00\"\x00E\x00\"\x00}"},
		{"arrays nested 100,000 deep", `{"name":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `,"email":"eve@example.com"}`},
		{"objects nested 20,000 deep", `{"name":` + strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000) + `}`},
		{"a top-level array nested 100,000 deep", strings.Repeat("[", 100000) + strings.Repeat("]", 100000)},
		{"500,000 unclosed brackets", `{"name":` + strings.Repeat("[", 500000)},
		{"a 900 KB name", `{"name":"` + strings.Repeat("a", 900<<10) + `","email":"eve@example.com"}`},
		{"a 900 KB email", `{"name":"Eve","email":"` + strings.Repeat("a", 900<<10) + `@example.com"}`},
		{"a 900 KB member name", `{"` + strings.Repeat("n", 900<<10) + `":"Eve","email":"eve@example.com"}`},
		{"a 500,000-digit number as the name", `{"name":1` + strings.Repeat("0", 500000) + `,"email":"eve@example.com"}`},
		{"a number beyond float64 as the name", `{"name":1e999999,"email":"eve@example.com"}`},
		{"a number beyond int64 as the id", `{"id":99999999999999999999999999,"name":"Eve","email":"eve@example.com"}`},
		{"another id", `{"id":2,"name":"Eve","email":"eve@example.com"}`},
		{"a negative id", `{"id":-1,"name":"Eve","email":"eve@example.com"}`},
		{"a null id", `{"id":null,"name":"Eve","email":"eve@example.com"}`},
		{"the id as a string", `{"id":"1","name":"Eve","email":"eve@example.com"}`},
		{"the id as 1e999", `{"id":1e999,"name":"Eve","email":"eve@example.com"}`},
		{"the id twice", `{"id":1,"id":1,"name":"Eve","email":"eve@example.com"}`},
		{"the name twice", `{"name":"Eve","name":"Mallory","email":"eve@example.com"}`},
		{"the email twice", `{"name":"Eve","email":"eve@example.com","email":"mallory@example.com"}`},
		{"the name twice in two spellings", `{"name":"Eve","n\u0061me":"Mallory","email":"eve@example.com"}`},
		{"Name in capitals", `{"Name":"Eve","email":"eve@example.com"}`},
		{"NAME and EMAIL", `{"NAME":"Eve","EMAIL":"eve@example.com"}`},
		{"a role field", `{"name":"Eve","email":"eve@example.com","role":"admin"}`},
		{"a __proto__ field", `{"__proto__":{"admin":true},"name":"Eve","email":"eve@example.com"}`},
		{"an empty member name", `{"":"Eve","email":"eve@example.com"}`},
		{"the name as a number", `{"name":5,"email":"eve@example.com"}`},
		{"the name as an object", `{"name":{"first":"Eve"},"email":"eve@example.com"}`},
		{"the name as an array", `{"name":["Eve"],"email":"eve@example.com"}`},
		{"the name as true", `{"name":true,"email":"eve@example.com"}`},
		{"the email as a number", `{"name":"Eve","email":5}`},
		{"a null name", `{"name":null,"email":"eve@example.com"}`},
		{"a null email", `{"name":"Eve","email":null}`},
		{"both null", `{"name":null,"email":null}`},
		{"an empty object", `{}`},
		{"an empty name", `{"name":"","email":"eve@example.com"}`},
		{"a name of white space", `{"name":" \t\u00a0\u3000 ","email":"eve@example.com"}`},
		{"a name of 101 characters", `{"name":"` + strings.Repeat("é", 101) + `","email":"eve@example.com"}`},
		{"a bell in the name", `{"name":"E\u0007ve","email":"eve@example.com"}`},
		{"a newline inside the name", `{"name":"Eve\nlevel=ERROR","email":"eve@example.com"}`},
		{"DEL in the name", `{"name":"E\u007fve","email":"eve@example.com"}`},
		{"a C1 control in the name", `{"name":"E\u0085ve","email":"eve@example.com"}`},
		{"an empty email", `{"name":"Eve","email":""}`},
		{"an email without @", `{"name":"Eve","email":"eve.example.com"}`},
		{"an email with a display name", `{"name":"Eve","email":"Eve <eve@example.com>"}`},
		{"an email in angle brackets", `{"name":"Eve","email":"<eve@example.com>"}`},
		{"an email with a bracketed domain", `{"name":"Eve","email":"eve@[127.0.0.1]"}`},
		{"an email with a quoted local part", `{"name":"Eve","email":"\"eve smith\"@example.com"}`},
		{"an email with a newline", `{"name":"Eve","email":"eve@example.com\nBcc: all@example.com"}`},
		{"two emails", `{"name":"Eve","email":"eve@example.com, mallory@example.com"}`},
		{"an email of 255 bytes", `{"name":"Eve","email":"` + strings.Repeat("a", 64) + "@" + strings.Repeat("b", 186) + `.com"}`},
		{"an email with a comment", `{"name":"Eve","email":"eve(x)@example.com"}`},
	} {
		onEveryWrite(b.name, b.body, asWriterWithJSON, http.StatusBadRequest)
	}

	// An e-mail that another user has, in any case: 409 (docs/api.md, "Request bodies", rule 6).
	onEveryWrite("the email of another user in capitals", `{"name":"Eve","email":"BOB@EXAMPLE.COM"}`, asWriterWithJSON, http.StatusConflict)

	// Media types and encodings (docs/api.md, "Request bodies", rule 1): 415 before anything else
	// is looked at.
	for _, ct := range []struct{ name, value string }{
		{"no Content-Type", ""},
		{"text/plain", "text/plain"},
		{"a form", "application/x-www-form-urlencoded"},
		{"multipart", "multipart/form-data; boundary=x"},
		{"a charset other than UTF-8", "application/json; charset=iso-8859-1"},
		{"UTF-16", "application/json; charset=utf-16"},
		{"a look-alike type", "application/jsonx"},
		{"a type with a suffix", "application/problem+json"},
		{"two types in one header", "application/json, text/plain"},
		{"a malformed parameter", "application/json; charset"},
		{"a repeated parameter", "application/json; charset=utf-8; charset=iso-8859-1"},
		{"a NUL in the type", "application/json\x00"},
		{"a 60 KB type", "application/json" + strings.Repeat("x", 60<<10)},
		{"only the subtype", "json"},
	} {
		header := asWriter
		if ct.value != "" {
			header = join(asWriter, []string{"Content-Type", ct.value})
		}
		onEveryWrite(ct.name, eveJSON, header, http.StatusUnsupportedMediaType)
	}
	onEveryWrite("a gzip Content-Encoding", eveJSON, join(asWriterWithJSON, []string{"Content-Encoding", "gzip"}), http.StatusUnsupportedMediaType)
	onEveryWrite("an identity Content-Encoding", eveJSON, join(asWriterWithJSON, []string{"Content-Encoding", "identity"}), http.StatusUnsupportedMediaType)
	for _, method := range []string{"POST", "PUT"} { // merge patches are for PATCH only
		target := map[string]string{"POST": "/api/users", "PUT": "/api/users/1"}[method]
		add(hostileRequest{name: method + " a merge patch", method: method, target: target,
			header: join(asWriter, []string{"Content-Type", "application/merge-patch+json"}), body: eveJSON,
			want: http.StatusUnsupportedMediaType})
	}
	// Media type comes first of the request checks: a bad type with a bad body is still 415.
	onEveryWrite("a bad type and a bad body", "\xff", join(asWriter, []string{"Content-Type", "text/plain"}), http.StatusUnsupportedMediaType)

	// Size (docs/api.md, "Request bodies", rule 2): one byte past 1 MiB is 413, whatever it holds,
	// however it is sent.
	padded := eveJSON + strings.Repeat(" ", maxBodyBytes+1-len(eveJSON))
	onEveryWrite("a valid user padded to 1 MiB + 1", padded, asWriterWithJSON, http.StatusRequestEntityTooLarge)
	onEveryWrite("1 MiB + 1 of garbage", strings.Repeat("\xff", maxBodyBytes+1), asWriterWithJSON, http.StatusRequestEntityTooLarge)
	for _, method := range []string{"POST", "PUT", "PATCH"} {
		target := map[string]string{"POST": "/api/users", "PUT": "/api/users/1", "PATCH": "/api/users/1"}[method]
		add(hostileRequest{name: method + " a chunked body of 1 MiB + 1", method: method, target: target,
			header: asWriterWithJSON, body: padded, want: http.StatusRequestEntityTooLarge,
			prepare: func(r *http.Request) { r.ContentLength, r.TransferEncoding = -1, []string{"chunked"} }})
		add(hostileRequest{name: method + " a declared length of 10 GiB", method: method, target: target,
			header: asWriterWithJSON, body: eveJSON, want: http.StatusRequestEntityTooLarge,
			prepare: func(r *http.Request) { r.ContentLength = 10 << 30 }})
		add(hostileRequest{name: method + " a body that fails to arrive", method: method, target: target,
			header: asWriterWithJSON, want: http.StatusBadRequest,
			prepare: func(r *http.Request) {
				r.Body, r.ContentLength = io.NopCloser(io.MultiReader(strings.NewReader(`{"name":`), brokenConnectionBody{})), -1
			}})
	}

	// Authentication comes first (docs/api.md, "The order of the checks" and "Authentication").
	// Sent with a valid create: a hole would add a user.
	longToken := strings.Repeat("a", 60<<10)
	for _, a := range []struct {
		name   string
		header []string
		want   int
	}{
		{"no Authorization", nil, 401},
		{"an empty Authorization", []string{"Authorization", ""}, 401},
		{"Bearer alone", []string{"Authorization", "Bearer"}, 401},
		{"Bearer and spaces", []string{"Authorization", "Bearer    "}, 401},
		{"Basic", []string{"Authorization", "Basic dGVzdC13cml0ZS10b2tlbjo="}, 401},
		{"the token without a scheme", []string{"Authorization", writeToken}, 401},
		{"the token after Token", []string{"Authorization", "Token " + writeToken}, 401},
		{"the token then more", []string{"Authorization", "Bearer " + writeToken + " " + writeToken}, 401},
		{"the token with a comma", []string{"Authorization", "Bearer " + writeToken + ","}, 401},
		{"the token with a character more", []string{"Authorization", "Bearer " + writeToken + "x"}, 401},
		{"the token with a character less", []string{"Authorization", "Bearer " + writeToken[:len(writeToken)-1]}, 401},
		{"the token with padding", []string{"Authorization", "Bearer " + writeToken + "="}, 401},
		{"the token in capitals", []string{"Authorization", "Bearer " + strings.ToUpper(writeToken)}, 401},
		{"the token after a tab", []string{"Authorization", "Bearer\t" + writeToken}, 401},
		{"the token after an equals sign", []string{"Authorization", "Bearer=" + writeToken}, 401},
		{"the token in quotes", []string{"Authorization", `Bearer "` + writeToken + `"`}, 401},
		{"the token with a NUL", []string{"Authorization", "Bearer " + writeToken + "\x00"}, 401},
		{"the token with a newline", []string{"Authorization", "Bearer " + writeToken + "\nX: y"}, 401},
		{"a token with non-ASCII letters", []string{"Authorization", "Bearer tëst-wrïte-token"}, 401},
		{"a 60 KB token", []string{"Authorization", "Bearer " + longToken}, 401},
		{"a 60 KB scheme", []string{"Authorization", longToken + " " + writeToken}, 401},
		{"the token twice in two headers", join(asWriter, asWriter), 401},
		{"an empty header, then the token", join([]string{"Authorization", ""}, asWriter), 401},
		{"the read token, then the write token", join(asReader, asWriter), 401},
		{"the read token", asReader, 403},
	} {
		add(hostileRequest{name: "POST with " + a.name, method: "POST", target: "/api/users",
			header: join(a.header, asJSON), body: eveJSON, want: a.want})
		add(hostileRequest{name: "DELETE with " + a.name, method: "DELETE", target: "/api/users/1",
			header: a.header, want: a.want})
	}
	add(hostileRequest{name: "a token in the query instead of the header", method: "POST",
		target: "/api/users?access_token=" + writeToken, header: asJSON, body: eveJSON, want: 401})

	// Methods (docs/api.md, "Routes"): 405 with Allow, after authentication; a read token learns
	// nothing more.
	for _, m := range []struct{ method, target string }{
		{"TRACE", "/api/users"}, {"TRACE", "/api/users/1"}, {"get", "/api/users"}, {"get", "/api/users/1"},
		{"post", "/api/users"}, {"Delete", "/api/users/1"}, {"CONNECT", "/api/users"}, {"PROPFIND", "/api/users/1"},
		{"MKCOL", "/api/users"}, {"M-SEARCH", "/api/users/1"}, {"FOO", "/api/users"}, {"DELETE", "/api/users"},
		{"PUT", "/api/users"}, {"PATCH", "/api/users"}, {"POST", "/api/users/1"}, {"POST", "/api/users/abc"},
	} {
		add(hostileRequest{name: m.method + " " + m.target, method: m.method, target: m.target,
			header: asWriterWithJSON, body: eveJSON, want: http.StatusMethodNotAllowed})
	}
	add(hostileRequest{name: "TRACE without a token", method: "TRACE", target: "/api/users", want: 401})

	// Paths (docs/api.md, "Routes"): a path not in the table, or an id not in canonical form, names
	// nothing.
	for _, p := range []struct {
		path string
		want int
	}{
		{"/api/users/0", 404}, {"/api/users/01", 404}, {"/api/users/+1", 404}, {"/api/users/-1", 404},
		{"/api/users/1.0", 404}, {"/api/users/1e0", 404}, {"/api/users/0x1", 404}, {"/api/users/%201", 404},
		{"/api/users/1%20", 404}, {"/api/users/%EF%BC%91", 404}, // a full-width digit one
		{"/api/users/9223372036854775807", 404}, {"/api/users/9223372036854775808", 404},
		{"/api/users/99999999999999999999999999999", 404}, {"/api/users/" + strings.Repeat("9", 100000), 404},
		{"/api/users/%00", 404}, {"/api/users/1%00", 404}, {"/api/users/%0A", 404}, {"/api/users/1%0D%0A", 404},
		{"/api/users/%2F", 404}, {"/api/users/1%2F2", 404}, {"/api/users%2F1", 404}, {"/api%2Fusers", 404},
		{"/api/users/1/", 404}, {"/api/users/", 404}, {"/api/users/1/orders", 404}, {"/api/users;id=1", 404},
		{"/api/users/1;x", 404}, {"/api/products", 404}, {"/api/getUsers", 404}, {"/api/", 404},
		{"/api/" + strings.Repeat("a", 60<<10), 404}, {"/api/users/" + strings.Repeat("a/", 20000), 404},
		{"/api", 404}, {"/API/USERS", 404}, {"/getUsers", 404}, {"/%00", 404}, {"/assets/..%2F..%2Fetc%2Fpasswd", 404},
		{"/api/users/..", wantCleanPathRedirect}, {"/api/users/../users", wantCleanPathRedirect}, {"/api/users/./1", wantCleanPathRedirect},
		{"/api/users//1", wantCleanPathRedirect}, {"/api//users", wantCleanPathRedirect}, {"//api/users", wantCleanPathRedirect},
		{"/api/users/../../../etc/passwd", wantCleanPathRedirect}, {"///evil.example/api/users", wantCleanPathRedirect},
		{"/api/users/%2e%2e", 404}, {"/api/users/1/..", wantCleanPathRedirect},
	} {
		add(hostileRequest{name: "GET " + inputName(p.path), method: "GET", target: p.path, header: asWriter, want: p.want})
		if p.want == 404 && isAPIPath(p.path) {
			add(hostileRequest{name: "DELETE " + inputName(p.path), method: "DELETE", target: p.path, header: asWriter, want: 404})
		}
	}

	// Query strings (docs/api.md, "Routes" and "Listing"): anything the list does not take, and any
	// query elsewhere, is 400.
	manyNames, manyPages := make([]string, 10000), make([]string, 10000)
	for i := range manyNames {
		manyNames[i], manyPages[i] = fmt.Sprintf("p%d=1", i), "page=1"
	}
	for _, q := range []string{
		"pgae=2", "page=0", "page=01", "page=-1", "page=+1", "page=1.0", "page=", "page", "page=1&page=1",
		"page=99999999999999999999", "per_page=0", "per_page=101", "per_page=abc", "per_page=1e1", "per_page=%31%30%31",
		"sort=age", "sort=--id", "sort=id,name", "sort=", "email=", "email=a&email=b", "q=a&q=b",
		"%zz", "page=%", "q=%G0", "a;b", "page=1;per_page=2", "PAGE=1", "page%00=1", "=1",
		strings.Join(manyNames, "&"), strings.Join(manyPages, "&"),
		"q=" + strings.Repeat("%FF", 10000) + "&x=1",
	} {
		add(hostileRequest{name: "GET list ?" + inputName(q), method: "GET", target: "/api/users?" + q, header: asWriter, want: 400})
	}
	for _, q := range []string{"x=1", "access_token=" + writeToken, "&", "=", strings.Join(manyNames, "&")} {
		add(hostileRequest{name: "GET a user ?" + inputName(q), method: "GET", target: "/api/users/1?" + q, header: asWriter, want: 400})
		add(hostileRequest{name: "DELETE ?" + inputName(q), method: "DELETE", target: "/api/users/1?" + q, header: asWriter, want: 400})
		onEveryWriteWithQuery("?"+q, "?"+inputName(q), eveJSON, asWriterWithJSON, http.StatusBadRequest)
	}

	// Conditions (docs/api.md, "Conditional requests"): a change whose If-Match fails changes
	// nothing, whatever the list holds.
	manyTags := strings.TrimSuffix(strings.Repeat(`"0123456789abcdef", `, 5000), ", ")
	for _, ifMatch := range []string{`"bogus"`, `W/"bogus"`, `"`, `"unterminated`, "garbage", manyTags, `"a", garbage, *`} {
		for _, method := range []string{"PUT", "PATCH"} {
			add(hostileRequest{name: method + " If-Match " + inputName(ifMatch), method: method, target: "/api/users/1",
				header: join(asWriterWithJSON, []string{"If-Match", ifMatch}), body: eveJSON, want: http.StatusPreconditionFailed})
		}
		add(hostileRequest{name: "DELETE If-Match " + inputName(ifMatch), method: "DELETE", target: "/api/users/1",
			header: join(asWriter, []string{"If-Match", ifMatch}), want: http.StatusPreconditionFailed})
	}
	add(hostileRequest{name: "DELETE a missing user with If-Match *", method: "DELETE", target: "/api/users/999",
		header: join(asWriter, []string{"If-Match", "*"}), want: 404})

	// Bodies on GET and DELETE are ignored (docs/api.md, "Request bodies"): they cannot create or
	// change anything.
	add(hostileRequest{name: "GET the list with a body", method: "GET", target: "/api/users",
		header: asWriterWithJSON, body: eveJSON, want: 200})
	add(hostileRequest{name: "GET the list with a chunked 1 MiB + 1 body", method: "GET", target: "/api/users",
		header: asWriterWithJSON, body: padded, want: 200,
		prepare: func(r *http.Request) { r.ContentLength, r.TransferEncoding = -1, []string{"chunked"} }})
	add(hostileRequest{name: "HEAD a user with a body", method: "HEAD", target: "/api/users/1",
		header: asWriterWithJSON, body: eveJSON, want: 200})
	add(hostileRequest{name: "DELETE a missing user with a body", method: "DELETE", target: "/api/users/999",
		header: asWriterWithJSON, body: `{"id":1}`, want: 404})
	add(hostileRequest{name: "OPTIONS with a body and a bad token", method: "OPTIONS", target: "/api/users",
		header: []string{"Authorization", "Bearer nope", "Content-Type", "application/json"}, body: eveJSON, want: 204})

	// Odd headers that must change nothing.
	for _, h := range []struct{ name, value string }{
		{"X-Request-Id", "abc\nlevel=ERROR msg=forged"},
		{"X-Request-Id", strings.Repeat("a", 65)},
		{"X-Request-Id", "with space"},
		{"X-Request-Id", `"quoted"`},
		{"If-None-Match", strings.Repeat(`W/"`, 10000)},
		{"X-Junk", strings.Repeat("j", 60<<10)},
		{"Expect", "100-continue"},
		{"Content-Length", "-1"},
		{"Transfer-Encoding", "gzip, chunked"},
		{"X-HTTP-Method-Override", "DELETE"},
		{"X-Forwarded-For", "127.0.0.1\r\nX-Injected: 1"},
	} {
		add(hostileRequest{name: "GET a user with " + h.name + " " + inputName(h.value), method: "GET", target: "/api/users/1",
			header: join(asWriter, []string{h.name, h.value}), want: 200})
		add(hostileRequest{name: "POST an invalid user with " + h.name + " " + inputName(h.value), method: "POST",
			target: "/api/users", header: join(asWriterWithJSON, []string{h.name, h.value}), body: `{"name":""}`, want: 400})
	}
	return cases
}

// brokenConnectionBody is a body whose connection breaks.
type brokenConnectionBody struct{}

func (brokenConnectionBody) Read([]byte) (int, error) {
	return 0, errors.New("connection reset by peer")
}

// inputName names a long input in a test name by its start and length.
func inputName(s string) string {
	if len(s) <= 40 {
		return s
	}
	return fmt.Sprintf("%s...(%d bytes)", s[:30], len(s))
}

// The boundary of the body limit is exact: 1 MiB is read and judged, one byte more is refused
// (docs/api.md, "Request bodies", rule 2).
func TestBodyLimitIsExactlyOneMebibyte(t *testing.T) {
	s := serverWithThreeUsers(t)
	exactly := eveJSON + strings.Repeat(" ", maxBodyBytes-len(eveJSON))
	if w := s.do("POST", "/api/users", exactly, asWriterWithJSON...); w.Code != http.StatusCreated {
		t.Fatalf("a body of exactly 1 MiB: status %d, want 201; body %s", w.Code, w.Body)
	}
	before := snapshotOfUsers(t, s)
	if w := s.do("POST", "/api/users", exactly+" ", asWriterWithJSON...); w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body of 1 MiB + 1: status %d, want 413", w.Code)
	}
	requireUsersUnchanged(t, s, before, 5)
}

// ---------------------------------------------------------------------------------------------
// A real listener: what net/http itself does with hostile bytes, and slow, stuck and greedy
// clients.

// listenerTimeouts are the server's time-outs, shortened so that the tests run fast. main.go sets
// the real ones.
type listenerTimeouts struct{ readHeader, read, write time.Duration }

// serveOnLoopbackWith serves handler on 127.0.0.1 with the given time-outs and returns its address.
func serveOnLoopbackWith(t testing.TB, handler http.Handler, timeouts listenerTimeouts) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: timeouts.readHeader,
		ReadTimeout:       timeouts.read,
		WriteTimeout:      timeouts.write,
		IdleTimeout:       10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go server.Serve(listener)
	t.Cleanup(func() { server.Close() })
	return listener.Addr().String()
}

var generousTimeouts = listenerTimeouts{readHeader: 5 * time.Second, read: 15 * time.Second, write: 20 * time.Second}

// sendRawBytes sends bytes as they are and reads the status of the first answer.
func sendRawBytes(t testing.TB, addr, request string) (status int, answer *http.Response) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	go io.WriteString(conn, request) // the server may answer before it has read everything
	response, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	body, _ := io.ReadAll(response.Body)
	response.Body = io.NopCloser(bytes.NewReader(body))
	return response.StatusCode, response
}

// Bytes that net/http rejects before any handler runs get its own answer (docs/api.md, "Responses"
// exempts those from the JSON body; its only 5xx are 501 for an unknown transfer coding and 505 for
// an unknown version); whatever reaches the handler gets the JSON error body. None changes the
// store.
func TestHostileBytesOnTheWireGetA4xx(t *testing.T) {
	auth := "Authorization: Bearer " + writeToken + "\r\n"
	post := "POST /api/users HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json\r\n"
	cases := []struct {
		name    string
		request string
		want    int
		json    bool // the answer comes from the handler, so it is the JSON error body
	}{
		{"a bad escape in the path", "GET /api/users/%ZZ HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 400, false},
		{"a NUL in the path", "GET /api/users/\x00 HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 400, false},
		{"a space too many in the request line", "GET  /api/users HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 400, false},
		{"an unknown HTTP version", "GET /api/users HTTP/9.9\r\nHost: x\r\n" + auth + "\r\n", 505, false},
		{"no Host", "GET /api/users HTTP/1.1\r\n" + auth + "\r\n", 400, false},
		{"two Hosts", "GET /api/users HTTP/1.1\r\nHost: x\r\nHost: y\r\n" + auth + "\r\n", 400, false},
		{"a NUL in a header", "GET /api/users HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n" + auth + "\r\n", 400, false},
		{"a header without a colon", "GET /api/users HTTP/1.1\r\nHost: x\r\nnonsense\r\n" + auth + "\r\n", 400, false},
		{"a space before the colon", "GET /api/users HTTP/1.1\r\nHost: x\r\nAuthorization : Bearer " + writeToken + "\r\n\r\n", 400, false},
		{"70 KB of headers", "GET /api/users HTTP/1.1\r\nHost: x\r\nX-A: " + strings.Repeat("a", 70<<10) + "\r\n" + auth + "\r\n", 431, false},
		// Targets that are not a path reach the handler, which must answer them like any other
		// failure.
		{"GET with the asterisk-form target", "GET * HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", anyClientError, true},
		{"DELETE with the asterisk-form target", "DELETE * HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", anyClientError, true},
		{"PRI * over HTTP/1.1", "PRI * HTTP/1.1\r\nHost: x\r\n\r\n", anyClientError, true},
		{"CONNECT with the authority-form target", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n" + auth + "\r\n", anyClientError, true},
		{"an absolute URI with no path", "GET http://x HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", wantCleanPathRedirect, false},
		{"a lower-case method", "get /api/users HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 405, true},
		{"TRACE", "TRACE /api/users HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 405, true},
		{"an absolute URI naming another host", "DELETE http://evil.example/api/users/1?x HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 400, true},
		{"Content-Length and Transfer-Encoding", post + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, false},
		{"two different Content-Lengths", post + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n{}", 400, false},
		{"a negative Content-Length", post + "Content-Length: -1\r\n\r\n", 400, false},
		{"an unknown transfer coding", post + "Transfer-Encoding: gzip\r\n\r\n", 501, false},
		{"a malformed chunk size", post + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", 400, true},
		{"a chunk longer than it says", post + "Transfer-Encoding: chunked\r\n\r\n2\r\n" + eveJSON + "\r\n0\r\n\r\n", 400, true},
		{"a chunked valid user followed by garbage", post + "Transfer-Encoding: chunked\r\n\r\n" +
			strconv.FormatInt(int64(len(eveJSON)+1), 16) + "\r\n" + eveJSON + "x\r\n0\r\n\r\n", 400, true},
		{"a declared length of 1 MiB + 1", post + "Content-Length: 1048577\r\n\r\n" + eveJSON, 413, true},
		{"a declared length of 2^63-1", post + "Content-Length: 9223372036854775807\r\n\r\n" + eveJSON, 413, true},
		{"a declared length beyond int64", post + "Content-Length: 99999999999999999999\r\n\r\n", 400, false},
		{"Expect 100-continue with 10 MiB", post + "Content-Length: 10485760\r\nExpect: 100-continue\r\n\r\n", 413, true},
		{"an unknown Expect", post + "Content-Length: 2\r\nExpect: 200-ok\r\n\r\n{}", 417, false},
		{"a body the length does not cover", post + "Content-Length: 2\r\n\r\n" + eveJSON, 400, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := serverWithThreeUsers(t)
			before := snapshotOfUsers(t, s)
			addr := serveOnLoopbackWith(t, s.handler, generousTimeouts)
			status, answer := sendRawBytes(t, addr, c.request)
			switch c.want {
			case anyClientError:
				if status < 400 || status > 499 {
					t.Fatalf("status %d, want a 4xx", status)
				}
			case wantCleanPathRedirect:
				if status != http.StatusMovedPermanently && status != http.StatusTemporaryRedirect {
					t.Fatalf("status %d, want a redirect", status)
				}
			default:
				if status != c.want {
					t.Fatalf("status %d, want %d", status, c.want)
				}
			}
			if c.json {
				recorder := httptest.NewRecorder()
				recorder.Code, recorder.HeaderMap = status, answer.Header
				io.Copy(recorder.Body, answer.Body)
				errorBody(t, recorder)
			}
			requireUsersUnchanged(t, s, before, 4)
		})
	}
}

// A flood of clients that send their headers a byte at a time is cut off at the read-header
// time-out, while every other client is served as fast as ever (README, "What it withstands").
func TestSlowHeaderFloodIsCutOffWithoutSlowingOthers(t *testing.T) {
	const (
		flood             = 200
		readHeaderTimeout = time.Second
	)
	s := serverWithThreeUsers(t)
	addr := serveOnLoopbackWith(t, s.handler, listenerTimeouts{readHeader: readHeaderTimeout, read: 2 * time.Second, write: 3 * time.Second})

	slow := make([]net.Conn, flood)
	for i := range slow {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		defer conn.Close()
		slow[i] = conn
	}
	start := time.Now()
	// Each slow client sends one byte of a request every 100 ms: never the whole header in time.
	partial := "GET /api/users HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + writeToken + "\r\nX-Slow: "
	stopFeeding := make(chan struct{})
	var feeding sync.WaitGroup
	feeding.Add(1)
	go func() {
		defer feeding.Done()
		ticker := time.NewTicker(100 * time.Millisecond)
		defer ticker.Stop()
		for i := 0; ; i++ {
			for _, conn := range slow {
				conn.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
				conn.Write([]byte{partial[i%len(partial)]}) // fails once the server has hung up
			}
			select {
			case <-stopFeeding:
				return
			case <-ticker.C:
			}
		}
	}()
	defer func() { close(stopFeeding); feeding.Wait() }()

	// Each slow connection must be closed by the server, not long after the time-out.
	closedAfter := make([]time.Duration, flood)
	var waiting sync.WaitGroup
	for i, conn := range slow {
		waiting.Add(1)
		go func(i int, conn net.Conn) {
			defer waiting.Done()
			conn.SetReadDeadline(start.Add(readHeaderTimeout + 4*time.Second))
			_, err := io.Copy(io.Discard, conn) // returns when the server closes the connection
			closedAfter[i] = time.Since(start)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				closedAfter[i] = -1
			}
		}(i, conn)
	}

	// Meanwhile, other clients are served at once, each on a new connection.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	var slowest time.Duration
	for time.Since(start) < readHeaderTimeout+500*time.Millisecond {
		began := time.Now()
		request, _ := http.NewRequest("GET", "http://"+addr+"/api/users/1", nil)
		request.Header.Set("Authorization", "Bearer "+readToken)
		response, err := client.Do(request)
		if err != nil {
			t.Fatalf("a client during the flood: %v", err)
		}
		io.Copy(io.Discard, response.Body)
		response.Body.Close()
		if response.StatusCode != http.StatusOK {
			t.Fatalf("a client during the flood: status %d", response.StatusCode)
		}
		slowest = max(slowest, time.Since(began))
		time.Sleep(20 * time.Millisecond)
	}
	// Held up by the flood, a client would wait for the time-out; a loaded test machine is far
	// faster.
	if slowest > readHeaderTimeout*3/4 {
		t.Errorf("a client during the flood waited %v: the flood held it up", slowest)
	}

	waiting.Wait()
	for i, after := range closedAfter {
		if after < 0 {
			t.Fatalf("slow connection %d was still open %v after the read-header time-out", i, 4*time.Second)
		}
		if after < readHeaderTimeout-100*time.Millisecond {
			t.Fatalf("slow connection %d was closed after %v, before the read-header time-out", i, after)
		}
	}
}

// A client that sends its body a byte at a time is cut off at the read time-out: it gets a 400,
// and nothing changes.
func TestSlowBodyIsCutOffAtTheReadTimeout(t *testing.T) {
	const readTimeout = time.Second
	s := serverWithThreeUsers(t)
	before := snapshotOfUsers(t, s)
	addr := serveOnLoopbackWith(t, s.handler, listenerTimeouts{readHeader: readTimeout, read: readTimeout, write: 4 * time.Second})

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", writeToken, len(eveJSON))
	stopFeeding := make(chan struct{})
	defer close(stopFeeding)
	go func() {
		for i := 0; i < len(eveJSON); i++ { // a byte every 200 ms: 8 s for the whole body
			select {
			case <-stopFeeding:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{eveJSON[i]}); err != nil {
				return
			}
		}
	}()

	conn.SetReadDeadline(start.Add(readTimeout + 3*time.Second))
	response, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a slow body: %v", err)
	}
	elapsed := time.Since(start)
	answer := httptest.NewRecorder()
	answer.Code, answer.HeaderMap = response.StatusCode, response.Header
	io.Copy(answer.Body, response.Body)
	if answer.Code != http.StatusBadRequest {
		t.Fatalf("status %d, want 400 for a body that did not arrive in time", answer.Code)
	}
	errorBody(t, answer)
	if elapsed < readTimeout-100*time.Millisecond || elapsed > readTimeout+3*time.Second {
		t.Fatalf("the slow body was cut off after %v, want about the read time-out, %v", elapsed, readTimeout)
	}
	requireUsersUnchanged(t, s, before, 4)
}

// A client that asks for big answers and never reads them holds only its own connection: while
// the server is stuck writing to it, every other request, writes included, is served at once.
// (The list is encoded without holding the store's lock, README, "What it withstands".)
func TestClientThatNeverReadsBlocksNoOne(t *testing.T) {
	s := newTestServer(t)
	logs := &syncLog{}
	s.log = newLogger("text", logs)
	s.build()
	for i := 0; i < 10000; i++ { // a list of about 600 KB
		if _, err := s.store.commit(createChange(fmt.Sprintf("User %d", i), fmt.Sprintf("user%d@example.com", i))); err != nil {
			t.Fatal(err)
		}
	}
	const writeTimeout = 6 * time.Second // what a request held up behind the stuck writer would wait
	addr := serveOnLoopbackWith(t, s.handler, listenerTimeouts{readHeader: time.Second, read: 2 * time.Second, write: writeTimeout})

	stuck, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	const pipelined = 50 // about 30 MB of answers, far more than the kernel's buffers hold
	var requests strings.Builder
	for i := 0; i < pipelined; i++ {
		fmt.Fprintf(&requests, "GET /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nX-Request-Id: stuck-%d\r\n\r\n", readToken, i)
	}
	if _, err := io.WriteString(stuck, requests.String()); err != nil {
		t.Fatal(err)
	}
	// Nothing the client sees tells when the server's writes to that connection block: give it
	// 300 ms to fill the connection's buffers.
	time.Sleep(300 * time.Millisecond)

	client := &http.Client{Timeout: 5 * time.Second}
	for _, c := range []struct {
		method, target, body string
		header               []string
		want                 int
	}{
		{"POST", "/api/users", eveJSON, asWriterWithJSON, 201},
		{"PUT", "/api/users/1", `{"name":"Ann","email":"ann@example.com"}`, asWriterWithJSON, 200},
		{"PATCH", "/api/users/2", `{"name":"Bob"}`, asWriterWithJSON, 200},
		{"DELETE", "/api/users/3", "", asWriter, 204},
		{"GET", "/api/users", "", asReader, 200},
		{"GET", "/api/users?page=3&per_page=5", "", asReader, 200},
		{"GET", "/api/users/1", "", asReader, 200},
	} {
		began := time.Now()
		request, _ := http.NewRequest(c.method, "http://"+addr+c.target, strings.NewReader(c.body))
		for i := 0; i+1 < len(c.header); i += 2 {
			request.Header.Set(c.header[i], c.header[i+1])
		}
		response, err := client.Do(request)
		if err != nil {
			t.Fatalf("%s %s while a client is stuck: %v", c.method, c.target, err)
		}
		io.Copy(io.Discard, response.Body)
		response.Body.Close()
		if response.StatusCode != c.want {
			t.Fatalf("%s %s while a client is stuck: status %d, want %d", c.method, c.target, response.StatusCode, c.want)
		}
		if waited := time.Since(began); waited > writeTimeout/2 {
			t.Fatalf("%s %s waited %v behind a client that does not read", c.method, c.target, waited)
		}
	}
	if answered := strings.Count(logs.String(), "request_id=stuck-"); answered >= pipelined {
		t.Fatalf("all %d answers to the stuck client were written: the test did not get it stuck", answered)
	}
}

// Bodies past 1 MiB are refused as soon as that is known, whatever their size and however they
// are sent, without the server holding them: it reads at most a bounded prefix, and its memory
// stays flat.
func TestBigBodiesAreRefusedAtOnceWithFlatMemory(t *testing.T) {
	s := serverWithThreeUsers(t)
	before := snapshotOfUsers(t, s)
	addr := serveOnLoopbackWith(t, s.handler, generousTimeouts)
	for _, c := range []struct {
		name     string
		size     int64
		declared bool // Content-Length, or else chunked with no length
	}{
		{"1 MiB + 1, declared", maxBodyBytes + 1, true},
		{"1 MiB + 1, chunked", maxBodyBytes + 1, false},
		{"10 MiB, declared", 10 << 20, true},
		{"10 MiB, chunked", 10 << 20, false},
		{"100 MiB, declared", 100 << 20, true},
		{"100 MiB, chunked", 100 << 20, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var memory runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&memory)
			allocatedBefore := memory.TotalAlloc
			began := time.Now()

			status, sent := streamHugeBody(t, addr, c.size, c.declared)

			elapsed := time.Since(began)
			runtime.ReadMemStats(&memory)
			if status != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413", status)
			}
			if elapsed > 5*time.Second {
				t.Fatalf("the 413 took %v", elapsed)
			}
			if c.size > 32<<20 && sent > 32<<20 {
				t.Fatalf("the client could send %d MiB before the 413: the server kept reading", sent>>20)
			}
			if allocated := memory.TotalAlloc - allocatedBefore; allocated > 48<<20 {
				t.Fatalf("refusing the body allocated %d MiB", allocated>>20)
			}
		})
	}
	requireUsersUnchanged(t, s, before, 4)
}

// streamHugeBody sends a POST with a body of size bytes, generated as it goes, and reads the answer
// while it sends. It returns the status and how many bytes of body the client got to send.
func streamHugeBody(t *testing.T, addr string, size int64, declared bool) (status int, sent int64) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	header := "POST /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + writeToken + "\r\nContent-Type: application/json\r\n"
	if declared {
		header += "Content-Length: " + strconv.FormatInt(size, 10) + "\r\n\r\n"
	} else {
		header += "Transfer-Encoding: chunked\r\n\r\n"
	}
	var written atomic.Int64
	answered := make(chan struct{})
	sending := make(chan struct{})
	go func() {
		defer close(sending)
		if _, err := io.WriteString(conn, header); err != nil {
			return
		}
		chunk := bytes.Repeat([]byte("a"), 64<<10)
		for left := size; left > 0; {
			select {
			case <-answered:
				return
			default:
			}
			n := min(left, int64(len(chunk)))
			var err error
			if declared {
				_, err = conn.Write(chunk[:n])
			} else {
				_, err = fmt.Fprintf(conn, "%x\r\n%s\r\n", n, chunk[:n])
			}
			if err != nil {
				return // the server has closed the connection after its answer
			}
			written.Add(n)
			left -= n
		}
		if !declared {
			io.WriteString(conn, "0\r\n\r\n")
		}
	}()
	response, err := http.ReadResponse(bufio.NewReader(conn), nil)
	close(answered)
	if err != nil {
		t.Fatalf("no answer after %d bytes: %v", written.Load(), err)
	}
	sent = written.Load()
	answer := httptest.NewRecorder()
	answer.Code, answer.HeaderMap = response.StatusCode, response.Header
	io.Copy(answer.Body, response.Body)
	if response.StatusCode >= 400 {
		errorBody(t, answer)
	}
	conn.Close()
	<-sending
	return response.StatusCode, sent
}

// ---------------------------------------------------------------------------------------------
// Many clients at once.

// A loadClient sends one request and returns the status and body of the answer.
type loadClient func(method, target, body string, header ...string) (int, []byte)

// loadThroughHandler sends requests straight to the handler stack: fast, so the race detector sees
// many interleavings.
func loadThroughHandler(s *testServer) loadClient {
	return func(method, target, body string, header ...string) (int, []byte) {
		w := s.do(method, target, body, header...)
		return w.Code, w.Body.Bytes()
	}
}

// loadOverHTTP sends requests to a running server.
func loadOverHTTP(t *testing.T, baseURL string) loadClient {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	t.Cleanup(client.CloseIdleConnections)
	return func(method, target, body string, header ...string) (int, []byte) {
		request, err := http.NewRequest(method, baseURL+target, strings.NewReader(body))
		if err != nil {
			t.Error(err)
			return 0, nil
		}
		for i := 0; i+1 < len(header); i += 2 {
			request.Header.Add(header[i], header[i+1])
		}
		response, err := client.Do(request)
		if err != nil {
			t.Errorf("%s %s: %v", method, target, err)
			return 0, nil
		}
		defer response.Body.Close()
		answer, _ := io.ReadAll(response.Body)
		return response.StatusCode, answer
	}
}

type listSeen struct {
	Data       []user `json:"data"`
	Total      int    `json:"total"`
	Page       int    `json:"page"`
	PerPage    int    `json:"per_page"`
	TotalPages int    `json:"total_pages"`
}

// checkListUnderLoad checks what every list must show, however many writers are at work: total
// equal to the users shown (or, paged, consistent with them), ids ascending, and no e-mail twice.
func checkListUnderLoad(t *testing.T, status int, body []byte, perPage int) (listSeen, bool) {
	t.Helper()
	var list listSeen
	if status != http.StatusOK {
		t.Errorf("list: status %d, body %s", status, body)
		return list, false
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Errorf("list: %v in %s", err, body)
		return list, false
	}
	ok := true
	if perPage == 0 && list.Total != len(list.Data) {
		t.Errorf("list: total %d, but %d users", list.Total, len(list.Data))
		ok = false
	}
	if perPage > 0 && (len(list.Data) > perPage || list.TotalPages != (list.Total+perPage-1)/perPage || len(list.Data) > list.Total) {
		t.Errorf("page: %d users, per_page %d, total %d, total_pages %d", len(list.Data), perPage, list.Total, list.TotalPages)
		ok = false
	}
	emails := map[string]bool{}
	for i, u := range list.Data {
		if i > 0 && u.ID <= list.Data[i-1].ID {
			t.Errorf("list: id %d after id %d", u.ID, list.Data[i-1].ID)
			ok = false
		}
		if key := strings.ToLower(u.Email); emails[key] {
			t.Errorf("list: the e-mail %s twice", u.Email)
			ok = false
		} else {
			emails[key] = true
		}
	}
	return list, ok
}

// loadLedger is what the clients were told: every id created, and every id deleted.
type loadLedger struct {
	mu      sync.Mutex
	created map[int64]bool
	deleted map[int64]int
	maxID   atomic.Int64
}

// runLoad has workers create, replace, patch, delete, read and list users at once, on a small
// set of e-mails so that they collide, and checks every answer as it comes. It returns the ledger.
func runLoad(t *testing.T, send loadClient, workers, opsEach int) *loadLedger {
	ledger := &loadLedger{created: map[int64]bool{}, deleted: map[int64]int{}}
	emailFor := func(r *rand.Rand) string {
		n := r.Intn(40)
		if r.Intn(2) == 0 {
			return fmt.Sprintf("User%d@Example.com", n) // the same address as user%d@example.com
		}
		return fmt.Sprintf("user%d@example.com", n)
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			r := rand.New(rand.NewSource(seed))
			for i := 0; i < opsEach && !t.Failed(); i++ {
				id := r.Int63n(ledger.maxID.Load()+3) + 1
				target := userPath(id)
				userJSON := fmt.Sprintf(`{"name":"Worker %d op %d","email":%q}`, seed, i, emailFor(r))
				switch op := r.Intn(20); {
				case op < 6:
					status, body := send("POST", "/api/users", userJSON, asWriterWithJSON...)
					if status == http.StatusConflict {
						continue
					}
					var created user
					if status != http.StatusCreated || json.Unmarshal(body, &created) != nil {
						t.Errorf("create: status %d, body %s", status, body)
						continue
					}
					ledger.mu.Lock()
					if ledger.created[created.ID] {
						t.Errorf("id %d was given twice", created.ID)
					}
					ledger.created[created.ID] = true
					ledger.mu.Unlock()
					for old := ledger.maxID.Load(); created.ID > old && !ledger.maxID.CompareAndSwap(old, created.ID); old = ledger.maxID.Load() {
					}
				case op < 9:
					if status, body := send("PUT", target, userJSON, asWriterWithJSON...); status != 200 && status != 404 && status != 409 {
						t.Errorf("PUT %s: status %d, body %s", target, status, body)
					}
				case op < 12:
					patch := fmt.Sprintf(`{"email":%q}`, emailFor(r))
					if r.Intn(2) == 0 {
						patch = fmt.Sprintf(`{"name":"Patched %d"}`, i)
					}
					if status, body := send("PATCH", target, patch, asWriterWithJSON...); status != 200 && status != 404 && status != 409 {
						t.Errorf("PATCH %s: status %d, body %s", target, status, body)
					}
				case op < 14:
					status, body := send("DELETE", target, "", asWriter...)
					switch status {
					case http.StatusNoContent:
						ledger.mu.Lock()
						ledger.deleted[id]++
						ledger.mu.Unlock()
					case http.StatusNotFound:
					default:
						t.Errorf("DELETE %s: status %d, body %s", target, status, body)
					}
				case op < 17:
					status, body := send("GET", "/api/users", "", asReader...)
					checkListUnderLoad(t, status, body, 0)
				case op < 18:
					perPage := r.Intn(10) + 1
					status, body := send("GET", fmt.Sprintf("/api/users?page=%d&per_page=%d", r.Intn(4)+1, perPage), "", asReader...)
					checkListUnderLoad(t, status, body, perPage)
				default:
					if status, body := send("GET", target, "", asReader...); status != 200 && status != 404 {
						t.Errorf("GET %s: status %d, body %s", target, status, body)
					}
				}
			}
		}(int64(w + 1))
	}
	wg.Wait()
	return ledger
}

// checkAfterLoad checks the store once the clients are done: exactly the users created and not
// deleted are there, each deleted once, each e-mail once, and the next id follows the last given.
func checkAfterLoad(t *testing.T, send loadClient, ledger *loadLedger) string {
	t.Helper()
	status, body := send("GET", "/api/users", "", asReader...)
	list, ok := checkListUnderLoad(t, status, body, 0)
	if !ok {
		t.FailNow()
	}
	present := map[int64]bool{}
	for _, u := range list.Data {
		present[u.ID] = true
		if !ledger.created[u.ID] {
			t.Errorf("user %d is listed, but no create was answered with it", u.ID)
		}
		if ledger.deleted[u.ID] > 0 {
			t.Errorf("user %d is listed, but a DELETE of it was answered 204", u.ID)
		}
		status, body := send("GET", "/api/users?email="+strings.ToUpper(u.Email), "", asReader...)
		if found, _ := checkListUnderLoad(t, status, body, 0); len(found.Data) != 1 || found.Data[0].ID != u.ID {
			t.Errorf("?email=%s found %s, want user %d", u.Email, body, u.ID)
		}
	}
	for id := range ledger.created {
		if !present[id] && ledger.deleted[id] == 0 {
			t.Errorf("user %d was created and never deleted, but is gone", id)
		}
	}
	for id, times := range ledger.deleted {
		if times > 1 {
			t.Errorf("user %d was deleted %d times", id, times)
		}
	}
	if len(ledger.created) < 20 {
		t.Errorf("only %d users were created: the load was too light to prove anything", len(ledger.created))
	}
	status, body = send("POST", "/api/users", `{"name":"Last","email":"last@example.com"}`, asWriterWithJSON...)
	var last user
	if status != http.StatusCreated || json.Unmarshal(body, &last) != nil || last.ID != ledger.maxID.Load()+1 {
		t.Errorf("the create after the load: status %d, body %s; want id %d", status, body, ledger.maxID.Load()+1)
	}
	_, body = send("GET", "/api/users", "", asReader...)
	return string(body)
}

// Many clients creating, replacing, patching, deleting and listing at once leave a consistent
// store: ids unique and never reused, e-mails unique, total equal to the users present. Run it
// under -race (./test.sh does).
func TestConcurrentClientsKeepTheStoreConsistent(t *testing.T) {
	s := newTestServer(t)
	send := loadThroughHandler(s)
	ledger := runLoad(t, send, 8, 250)
	checkAfterLoad(t, send, ledger)
}

// The same with -data, over HTTP, through run: the journal judges writes in batches, and what it
// acknowledged is what a restart finds.
func TestConcurrentClientsKeepTheJournalledStoreConsistent(t *testing.T) {
	file := t.TempDir() + "/users.jsonl"
	service := startProgram(t, "-data", file)
	send := loadOverHTTP(t, service.url)
	ledger := runLoad(t, send, 8, 60)
	final := checkAfterLoad(t, send, ledger)
	if err := service.shutdown(t); err != nil {
		t.Fatalf("run returned %v", err)
	}

	restarted := startProgram(t, "-data", file)
	if _, body := loadOverHTTP(t, restarted.url)("GET", "/api/users", "", asReader...); string(body) != final {
		t.Fatalf("after a restart the store is\n%s\nbut the clients were last shown\n%s", body, final)
	}
}

// ---------------------------------------------------------------------------------------------
// The program as main runs it.

// programUnderTest is run, as main calls it, serving on a free port of 127.0.0.1.
type programUnderTest struct {
	url      string
	logs     *syncLog
	stop     context.CancelFunc // what SIGTERM does
	finished chan struct{}
	err      error // what run returned, once finished is closed
}

// listeningURLInLog finds the URL of the start-up log: http://127.0.0.1:PORT, or https:// with
// -tls-cert.
var listeningURLInLog = regexp.MustCompile(`url"?[=:]"?(https?://127\.0\.0\.1:[0-9]+)`)

// startProgram runs the server with the test tokens and the given flags, and waits until it
// listens.
func startProgram(t *testing.T, flags ...string) *programUnderTest {
	t.Helper()
	return startProgramWithEnv(t, map[string]string{"USERS_TOKENS": writeToken + ":write," + readToken + ":read"}, flags...)
}

func startProgramWithEnv(t *testing.T, env map[string]string, flags ...string) *programUnderTest {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &programUnderTest{logs: &syncLog{}, stop: cancel, finished: make(chan struct{})}
	args := append([]string{"users", "-addr", "127.0.0.1:0"}, flags...)
	go func() {
		defer close(s.finished)
		s.err = run(ctx, args, func(name string) string { return env[name] }, io.Discard, s.logs)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.finished:
		case <-time.After(15 * time.Second):
			t.Error("run did not return within 15 s of its context ending")
		}
	})
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if m := listeningURLInLog.FindStringSubmatch(s.logs.String()); m != nil {
			s.url = m[1]
			return s
		}
		select {
		case <-s.finished:
			t.Fatalf("run returned %v before listening; it logged:\n%s", s.err, s.logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("run did not log its address within 5 s; it logged:\n%s", s.logs)
		}
	}
}

// shutdown does what SIGTERM does and returns what run returned; it fails the test if run takes
// longer than its 10 s bound.
func (s *programUnderTest) shutdown(t *testing.T) error {
	t.Helper()
	s.stop()
	select {
	case <-s.finished:
		return s.err
	case <-time.After(11 * time.Second):
		t.Fatal("run did not return within its 10 s bound after SIGTERM")
		return nil
	}
}

// SIGTERM with a request in flight: new connections are refused at once, the request finishes
// with its answer, and run returns nil (exit status 0) as soon as it is done. The request here is
// an upload still arriving when SIGTERM comes.
func TestShutdownLetsRequestsInFlightFinishAndRefusesNewOnes(t *testing.T) {
	const uploadEndsAfter = 700 * time.Millisecond
	program := startProgram(t)
	host := strings.TrimPrefix(program.url, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Content-Length: %d\r\nExpect: 100-continue\r\n\r\n%s", writeToken, len(eveJSON), eveJSON[:10])
	answers := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if proceed, err := http.ReadResponse(answers, nil); err != nil || proceed.StatusCode != http.StatusContinue {
		t.Fatalf("want 100 Continue, which says the handler reads the body: %v", err)
	}

	stoppedAt := time.Now()
	program.stop()
	for refused := false; !refused; time.Sleep(10 * time.Millisecond) {
		probe, err := net.DialTimeout("tcp", host, 100*time.Millisecond)
		if err != nil {
			refused = true
		} else {
			probe.Close()
		}
		if !refused && time.Since(stoppedAt) > 2*time.Second {
			t.Fatal("new connections were still accepted 2 s after SIGTERM")
		}
	}
	select {
	case <-program.finished:
		t.Fatalf("run returned %v with a request in flight", program.err)
	default:
	}

	time.Sleep(time.Until(stoppedAt.Add(uploadEndsAfter)))
	io.WriteString(conn, eveJSON[10:])
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	response, err := http.ReadResponse(answers, nil)
	if err != nil {
		t.Fatalf("the request in flight got no answer: %v", err)
	}
	if response.StatusCode != http.StatusCreated {
		t.Fatalf("the request in flight got status %d, want 201", response.StatusCode)
	}
	if err := program.shutdown(t); err != nil {
		t.Fatalf("run returned %v, want nil (exit status 0)", err)
	}
	if took := time.Since(stoppedAt); took < uploadEndsAfter || took > 10*time.Second {
		t.Fatalf("run returned %v after SIGTERM, with a request that ended after %v: want between the two", took, uploadEndsAfter)
	}
}

// -delay may be as long as the 10 s shutdown bound itself. A request that arrives just before
// SIGTERM must still be answered, and run must still return nil (exit status 0) within its bound:
// a stopping server has no reason to wait out a delay that exists only for demos.
func TestShutdownDoesNotWaitOutTheLongestDelay(t *testing.T) {
	program := startProgram(t, "-delay", "10s")
	conn, err := net.Dial("tcp", strings.TrimPrefix(program.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", readToken)
	// Nothing the server sends can show that a request is in its -delay: the delay's point is that
	// nothing comes. 20 ms lets the server read the request first.
	time.Sleep(20 * time.Millisecond)

	stoppedAt := time.Now()
	if err := program.shutdown(t); err != nil {
		t.Fatalf("run returned %q after %v: with -delay 10s a request in flight outlasts the 10 s shutdown bound "+
			"(and main would exit 1, cutting the request off)", err, time.Since(stoppedAt).Round(time.Millisecond))
	}
	if took := time.Since(stoppedAt); took > 10*time.Second {
		t.Fatalf("run took %v to stop: more than its 10 s bound", took)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	response, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || response.StatusCode != http.StatusOK {
		t.Fatalf("the request in flight got %v, %v; want 200", response, err)
	}
}

// SIGTERM while many clients are busy: every answer given is a success, never a 5xx; run returns
// nil within its bound; and with -data, every create that was answered 201 is there after a
// restart.
func TestShutdownUnderLoadExitsCleanly(t *testing.T) {
	for _, storage := range []struct{ name, dataFile string }{
		{"in memory", ""},
		{"with -data", t.TempDir() + "/users.jsonl"},
	} {
		t.Run(storage.name, func(t *testing.T) {
			flags := []string{"-delay", "100ms"}
			if storage.dataFile != "" {
				flags = append(flags, "-data", storage.dataFile)
			}
			program := startProgram(t, flags...)
			client := &http.Client{Timeout: 5 * time.Second}
			var answered, refusedAfterStop atomic.Int64
			var stopped atomic.Bool
			var acknowledged sync.Map // id of every 201
			var wg sync.WaitGroup
			for w := 0; w < 16; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for i := 0; ; i++ {
						method, body := "GET", ""
						if i%2 == 0 {
							method, body = "POST", fmt.Sprintf(`{"name":"W%d","email":"w%d.%d@example.com"}`, w, w, i)
						}
						request, _ := http.NewRequest(method, program.url+"/api/users", strings.NewReader(body))
						request.Header.Set("Authorization", "Bearer "+writeToken)
						request.Header.Set("Content-Type", "application/json")
						response, err := client.Do(request)
						if err != nil {
							if !stopped.Load() {
								t.Errorf("before SIGTERM: %v", err)
							}
							refusedAfterStop.Add(1)
							return // the server has stopped accepting
						}
						answer, _ := io.ReadAll(response.Body)
						response.Body.Close()
						switch response.StatusCode {
						case http.StatusCreated:
							var created user
							json.Unmarshal(answer, &created)
							acknowledged.Store(created.ID, true)
						case http.StatusOK:
						default:
							t.Errorf("%s: status %d during shutdown, body %s", method, response.StatusCode, answer)
							return
						}
						answered.Add(1)
					}
				}(w)
			}
			time.Sleep(500 * time.Millisecond)
			stopped.Store(true)
			if err := program.shutdown(t); err != nil {
				t.Fatalf("run returned %v, want nil", err)
			}
			wg.Wait()
			if answered.Load() < 16 {
				t.Fatalf("only %d requests were answered: the load did not happen", answered.Load())
			}
			if refusedAfterStop.Load() != 16 {
				t.Fatalf("%d of 16 clients were refused after the stop", refusedAfterStop.Load())
			}
			if storage.dataFile == "" {
				return
			}
			restarted := startProgram(t, "-data", storage.dataFile)
			status, body := loadOverHTTP(t, restarted.url)("GET", "/api/users", "", asReader...)
			list, _ := checkListUnderLoad(t, status, body, 0)
			present := map[int64]bool{}
			for _, u := range list.Data {
				present[u.ID] = true
			}
			acknowledged.Range(func(id, _ any) bool {
				if !present[id.(int64)] {
					t.Errorf("user %d was answered 201 before the stop, but is gone after the restart", id)
				}
				return true
			})
		})
	}
}

// ---------------------------------------------------------------------------------------------
// Panics.

// A panic before the answer has begun is a JSON 500, logged with its stack; a panic after it has
// begun cuts the connection, since the status is already on its way; either way the server goes
// on, and net/http does not log the panic a second time (README, "What it withstands").
func TestPanicInAHandlerIsAJSON500AndTheServerGoesOn(t *testing.T) {
	panics := []struct {
		path    string
		handler http.HandlerFunc
		cut     bool // the connection is cut, rather than answered 500
	}{
		{"/before-the-answer", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "/half/made") // for an answer never given: must not leak into the 500
			panic("panic before the answer")
		}, false},
		{"/after-the-status", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			panic("panic after the status")
		}, true},
		{"/after-part-of-the-body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"data":[`)
			http.NewResponseController(w).Flush()
			panic("panic after part of the body")
		}, true},
	}
	s := serverWithThreeUsers(t)
	logs := &syncLog{}
	s.log = newLogger("text", logs)
	s.build()
	mux := http.NewServeMux()
	for _, p := range panics {
		mux.Handle(p.path, observed(s.log, p.handler))
	}
	mux.Handle("/", s.handler)
	server := httptest.NewUnstartedServer(mux)
	serverLog := &syncLog{}
	server.Config.ErrorLog = log.New(serverLog, "", 0)
	server.Start()
	defer server.Close()

	// A new connection for each request: on a reused one, net/http's client would retry a GET
	// whose connection was cut, and the panic would happen twice.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	get := func(path string) (*http.Response, []byte, error) {
		request, _ := http.NewRequest("GET", server.URL+path, nil)
		request.Header.Set("Authorization", "Bearer "+readToken)
		response, err := client.Do(request)
		if err != nil {
			return nil, nil, err
		}
		defer response.Body.Close()
		body, err := io.ReadAll(response.Body)
		return response, body, err
	}
	const rounds = 3
	for round := 0; round < rounds; round++ {
		for _, p := range panics {
			response, body, err := get(p.path)
			switch {
			case p.cut && err == nil:
				t.Fatalf("%s: the client got a whole answer, %d %q; want the connection cut", p.path, response.StatusCode, body)
			case p.cut:
			case err != nil:
				t.Fatalf("%s: %v", p.path, err)
			case response.StatusCode != 500 || response.Header.Get("Content-Type") != "application/json" ||
				string(body) != `{"error":"internal server error"}`:
				t.Fatalf("%s: status %d, Content-Type %q, body %s; want the JSON 500",
					p.path, response.StatusCode, response.Header.Get("Content-Type"), body)
			case response.Header.Get("Location") != "" || response.Header.Get("X-Request-Id") == "":
				t.Fatalf("%s: headers %v", p.path, response.Header)
			}
		}
		if response, body, err := get("/api/users/1"); err != nil || response.StatusCode != 200 {
			t.Fatalf("after the panics: %v, body %s", err, body)
		}
	}
	logged := logs.String()
	for _, p := range panics {
		if n := strings.Count(logged, "panic="+strconv.Quote(strings.ReplaceAll("panic "+p.path[1:], "-", " "))); n != rounds {
			t.Errorf("the panic at %s is logged %d times, want %d", p.path, n, rounds)
		}
	}
	if n := strings.Count(logged, `stack="goroutine `); n != rounds*len(panics) || !strings.Contains(logged, "hardening_test.go") {
		t.Errorf("%d stacks logged for %d panics, or none names the handler that panicked", n, rounds*len(panics))
	}
	if n, want := strings.Count(logged, "msg=request"), rounds*(len(panics)+1); n != want {
		t.Errorf("%d access log lines for %d requests", n, want)
	}
	if strings.Contains(serverLog.String(), "panic") {
		t.Errorf("net/http logged a panic a second time:\n%s", serverLog)
	}
}

// A panic deep in the real handler stack, and a failure the API did not foresee, are both the
// JSON 500, with no trace of the half-made answer; the detail goes only to the log.
func TestFailuresInsideTheStackAreAJSON500(t *testing.T) {
	for _, c := range []struct {
		name   string
		disk   diskFile
		logged string
	}{
		{"a panic", func([]byte) (int, error) { panic("the disk is on fire") }, "the disk is on fire"},
		{"an unforeseen error", func([]byte) (int, error) { return 0, errors.New("the disk is full") }, "the disk is full"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := serverWithThreeUsers(t)
			logs := &syncLog{}
			s.log = newLogger("text", logs)
			s.build()
			s.journalOn(c.disk)
			w := s.do("POST", "/api/users", eveJSON, asWriterWithJSON...)
			if w.Code != 500 {
				t.Fatalf("status %d, want 500", w.Code)
			}
			if message, _ := errorBody(t, w); message != "internal server error" {
				t.Fatalf("message %q: a 500 says only internal server error", message)
			}
			if strings.Contains(w.Body.String(), c.logged) {
				t.Fatalf("the detail reached the client: %s", w.Body)
			}
			if w.Header().Get("Location") != "" || w.Header().Get("Etag") != "" || w.Header().Get("Cache-Control") != "no-store" {
				t.Fatalf("headers %v", w.Header())
			}
			if !strings.Contains(logs.String(), c.logged) {
				t.Fatalf("the log does not hold the detail:\n%s", logs)
			}
			if w := s.do("GET", "/api/users/1", "", asReader...); w.Code != 200 {
				t.Fatalf("after the failure: status %d", w.Code)
			}
		})
	}
}

// ---------------------------------------------------------------------------------------------
// Logs.

var tokensThatMustNotLeak = []string{writeToken, readToken, "unknown-secret-token-0123456789"}

// requestsCarryingTokens are requests with tokens in every place a client might put them.
func requestsCarryingTokens() []hostileRequest {
	return []hostileRequest{
		{name: "the write token", method: "GET", target: "/api/users", header: asWriter, want: 200},
		{name: "the read token", method: "GET", target: "/api/users/1", header: asReader, want: 200},
		{name: "the read token on a write", method: "POST", target: "/api/users", header: join(asReader, asJSON), body: eveJSON, want: 403},
		{name: "an unknown token", method: "GET", target: "/api/users", header: []string{"Authorization", "Bearer " + tokensThatMustNotLeak[2]}, want: 401},
		{name: "the token twice", method: "GET", target: "/api/users", header: join(asWriter, asWriter), want: 401},
		{name: "the token after another scheme", method: "GET", target: "/api/users", header: []string{"Authorization", "Token " + writeToken}, want: 401},
		{name: "the token in the query alone", method: "GET", target: "/api/users?access_token=" + writeToken, want: 401},
		{name: "the token in the query of the list", method: "GET", target: "/api/users?access_token=" + writeToken, header: asWriter, want: 400},
		{name: "the token in the query of a user", method: "GET", target: "/api/users/1?access_token=" + readToken, header: asWriter, want: 400},
		{name: "the token in the query of a create", method: "POST", target: "/api/users?access_token=" + writeToken, header: asWriterWithJSON, body: eveJSON, want: 400},
		{name: "the token as a query value to sort", method: "GET", target: "/api/users?sort=" + writeToken, header: asWriter, want: 400},
		{name: "the token as a page", method: "GET", target: "/api/users?page=" + writeToken, header: asWriter, want: 400},
		{name: "the token in If-Match", method: "DELETE", target: "/api/users/1", header: join(asWriter, []string{"If-Match", `"` + writeToken + `"`}), want: 412},
		{name: "the token on a 404", method: "GET", target: "/api/nothing", header: asWriter, want: 404},
		{name: "the token on a 405", method: "TRACE", target: "/api/users", header: asWriter, want: 405},
		{name: "the token on OPTIONS", method: "OPTIONS", target: "/api/users/1", header: asWriter, want: 204},
		{name: "the token on /healthz", method: "GET", target: "/healthz", header: asWriter, want: 200},
	}
}

// Tokens never reach a log line, an error message, or any answer (docs/api.md, "Authentication"),
// in either log format.
func TestTokensNeverReachTheLogOrAnAnswer(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			s := serverWithThreeUsers(t)
			logs := &syncLog{}
			s.log = newLogger(format, logs)
			s.build()
			for _, c := range requestsCarryingTokens() {
				linesBefore := logs.lines()
				w := sendHostile(s, c)
				if w.Code != c.want {
					t.Errorf("%s: status %d, want %d", c.name, w.Code, c.want)
				}
				for _, secret := range tokensThatMustNotLeak {
					if strings.Contains(w.Body.String(), secret) || strings.Contains(fmt.Sprint(w.Header()), secret) {
						t.Errorf("%s: the answer holds a token: %v %s", c.name, w.Header(), w.Body)
					}
				}
				if lines := logs.lines() - linesBefore; lines != 1 {
					t.Errorf("%s: %d log lines, want 1", c.name, lines)
				}
			}
			for _, secret := range tokensThatMustNotLeak {
				if strings.Contains(logs.String(), secret) {
					t.Fatalf("the log holds a token:\n%s", logs)
				}
			}
		})
	}
}

// The same, for the program as it runs: nothing it logs, from its start to its stop, holds a
// token, even net/http's own error log; and a generated token is shown only in the start-up notice.
func TestTokensNeverReachTheLogOfTheRunningServer(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			service := startProgram(t, "-log-format", format)
			send := loadOverHTTP(t, service.url)
			if status, _ := send("POST", "/api/users", `{"name":"Ann","email":"ann@example.com"}`, asWriterWithJSON...); status != 201 {
				t.Fatalf("creating user 1: status %d", status)
			}
			for _, c := range requestsCarryingTokens() {
				if status, _ := send(c.method, c.target, c.body, c.header...); status != c.want {
					t.Errorf("%s: status %d, want %d", c.name, status, c.want)
				}
			}
			sendRawBytes(t, strings.TrimPrefix(service.url, "http://"),
				"GET /api/users?access_token="+writeToken+" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+writeToken+"\r\nX-A: a\x00\r\n\r\n")
			if err := service.shutdown(t); err != nil {
				t.Fatal(err)
			}
			for _, secret := range tokensThatMustNotLeak {
				if strings.Contains(service.logs.String(), secret) {
					t.Fatalf("the log holds a token:\n%s", service.logs)
				}
			}
		})
	}
	t.Run("generated tokens", func(t *testing.T) {
		service := startProgramWithEnv(t, nil)
		notice := service.logs.String()
		tokens := regexp.MustCompile(`(?m)^  (write|read) token: +([0-9a-f]{32})$`).FindAllStringSubmatch(notice, -1)
		if len(tokens) != 2 {
			t.Fatalf("no generated tokens in the notice:\n%s", notice)
		}
		send := loadOverHTTP(t, service.url)
		for _, token := range tokens {
			if status, _ := send("GET", "/api/users?access_token="+token[2], "", "Authorization", "Bearer "+token[2]); status != 400 {
				t.Fatalf("the %s token: status %d, want 400 for the unknown query parameter", token[1], status)
			}
		}
		service.shutdown(t)
		for _, token := range tokens {
			if before, after := strings.Count(notice, token[2]), strings.Count(service.logs.String(), token[2]); after != before {
				t.Fatalf("the %s token is printed %d times after requests, %d times in the notice alone", token[1], after, before)
			}
		}
	})
}

// Request values are logged as data: a path, header or id holding a newline, quotes or escape
// codes cannot start a log line of its own or pass for another field. One request, one line.
func TestRequestValuesCannotForgeLogLines(t *testing.T) {
	forged := []hostileRequest{
		{name: "a newline in the path", target: "/api/users/1%0Atime=2000-01-01%20level=ERROR%20msg=forged"},
		{name: "a carriage return in the path", target: "/api/users/1%0D%0Alevel=ERROR"},
		{name: "quotes in the path", target: `/api/users/%22%20status=200%20x=%22`},
		{name: "a JSON break-out in the path", target: `/api/users/%22,%22level%22:%22ERROR`},
		{name: "an escape code in the path", target: "/api/users/%1B%5B31mred"},
		{name: "a line separator in the path", target: "/api/users/1%E2%80%A8level=ERROR"},
		{name: "a NUL in the path", target: "/api/%00level=ERROR"},
		{name: "invalid UTF-8 in the path", target: "/api/users/%FF%FE"},
		{name: "a newline in X-Request-Id", target: "/api/users/1", header: []string{"X-Request-Id", "a\nlevel=ERROR msg=forged"}},
		{name: "quotes in X-Request-Id", target: "/api/users/1", header: []string{"X-Request-Id", `a" level="ERROR`}},
		{name: "an unknown method", method: "FORGED", target: "/api/users"},
		{name: "a newline in a field name", method: "POST", target: "/api/users", header: asJSON,
			body: `{"x\nlevel=ERROR":1}`},
		{name: "a newline in a query name", target: "/api/users?x%0Alevel=ERROR=1"},
	}
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			s := serverWithThreeUsers(t)
			logs := &syncLog{}
			s.log = newLogger(format, logs)
			s.build()
			for _, c := range forged {
				if c.method == "" {
					c.method = "GET"
				}
				c.header = join(c.header, asWriter)
				before := logs.String()
				w := sendHostile(s, c)
				if w.Code >= 500 {
					t.Errorf("%s: status %d", c.name, w.Code)
				}
				line := strings.TrimPrefix(logs.String(), before)
				if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
					t.Errorf("%s: the request logged %q, want one line", c.name, line)
					continue
				}
				wantPath := httptest.NewRequest(c.method, c.target, nil).URL.Path
				requestID := w.Header().Get("X-Request-Id")
				if format == "json" {
					var record map[string]any
					if err := json.Unmarshal([]byte(line), &record); err != nil {
						t.Errorf("%s: the line is not one JSON record: %v\n%s", c.name, err, line)
						continue
					}
					if record["path"] != replaceInvalidBytes(wantPath) || record["request_id"] != requestID ||
						record["level"] != "INFO" || record["msg"] != "request" || record["method"] != c.method {
						t.Errorf("%s: the record says %v", c.name, record)
					}
					continue
				}
				keys, values, err := parseTextLogLine(line)
				if err != nil {
					t.Errorf("%s: %v in the line %s", c.name, err, line)
					continue
				}
				if strings.Join(keys, " ") != "time level msg method path status bytes duration_ms request_id" ||
					values["level"] != "INFO" || values["msg"] != "request" || values["method"] != c.method ||
					values["path"] != wantPath || values["request_id"] != requestID {
					t.Errorf("%s: the line reads as %q = %q", c.name, keys, values)
				}
			}
		})
	}
}

// parseTextLogLine reads a line of slog's text format: key=value pairs separated by spaces, where
// a value is either Go-quoted or has no space, quote or equals sign in it.
func parseTextLogLine(line string) (keys []string, values map[string]string, err error) {
	values = map[string]string{}
	rest := strings.TrimSuffix(line, "\n")
	for rest != "" {
		key, after, found := strings.Cut(rest, "=")
		if !found || key == "" || strings.ContainsAny(key, " \"") {
			return nil, nil, fmt.Errorf("no key=value at %q", rest)
		}
		var value string
		if strings.HasPrefix(after, `"`) {
			quoted, err := strconv.QuotedPrefix(after)
			if err != nil {
				return nil, nil, fmt.Errorf("a bad quoted value at %q", after)
			}
			value, _ = strconv.Unquote(quoted)
			after = after[len(quoted):]
		} else {
			value, after, _ = strings.Cut(after, " ")
			after = " " + after
			if strings.ContainsAny(value, "\"=") {
				return nil, nil, fmt.Errorf("an unquoted value %q", value)
			}
		}
		if _, seen := values[key]; seen {
			return nil, nil, fmt.Errorf("the key %s twice", key)
		}
		keys, values[key] = append(keys, key), value
		if after == " " || after == "" {
			break
		}
		if !strings.HasPrefix(after, " ") {
			return nil, nil, fmt.Errorf("no space after a value at %q", after)
		}
		rest = after[1:]
	}
	return keys, values, nil
}

// replaceInvalidBytes replaces each byte that is not part of valid UTF-8 with U+FFFD, as slog's
// JSON handler does.
func replaceInvalidBytes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // utf8.RuneError is U+FFFD
		i += size
	}
	return b.String()
}
