package main

// Hostile and careless requests, through the whole handler (README, "What it withstands"). Each
// rule is proved beside its own code (body_test.go, list_test.go, auth_test.go, middleware_test.go,
// conditional_test.go); this one table aims every kind of input at every route, so that a gap
// between the layers shows. What needs a real connection (hostile bytes on the wire, slow and
// flooding clients, big bodies sent for real) is tested in blackbox/hardening_test.go.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// Every hostile or careless request gets the status docs/api.md gives it and leaves the store as
// it was. Each case meets a service of its own holding Ann (/api/users/1), Bob (2) and Cy (3).
func TestHostileRequestsLeaveTheStoreAlone(t *testing.T) {
	for _, c := range hostileRequests() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ts := newTestServer(t)
			for _, name := range []string{"Ann", "Bob", "Cy"} {
				ts.create(t, name, strings.ToLower(name)+"@example.com")
			}
			before, version := ts.store.all()

			w := ts.serve(c.request())

			wantHostileAnswer(t, c, w)
			// version counts every change the store made, so an id used up would show too.
			if after, versionAfter := ts.store.all(); versionAfter != version || !slices.Equal(after, before) {
				t.Errorf("the store changed (version %d, then %d):\nbefore %v\nafter  %v", version, versionAfter, before, after)
			}
		})
	}
}

// A hostileRequest is one request a hostile or careless client might send, and the status it
// must get.
type hostileRequest struct {
	name    string
	method  string
	target  string
	header  http.Header // each value is sent, so a field may come twice
	body    string
	status  int
	prepare func(*http.Request) // for what headers cannot say: a chunked body, a declared length
}

// request is c as the handler receives it.
func (c hostileRequest) request() *http.Request {
	r := httptest.NewRequest(c.method, c.target, strings.NewReader(c.body))
	if c.body == "" {
		r.Body, r.ContentLength = http.NoBody, 0
	}
	for name, values := range c.header {
		for _, value := range values {
			r.Header.Add(name, value)
		}
	}
	if c.prepare != nil {
		c.prepare(r)
	}
	return r
}

// hostileRequestID is what every answer's X-Request-Id must be, whatever the client sent.
var hostileRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// wantHostileAnswer fails the test unless w has the status c must get, redirects only to a path
// on this server, is the JSON error body with a short message on a failure, and carries the
// headers every answer carries.
func wantHostileAnswer(t *testing.T, c hostileRequest, w *httptest.ResponseRecorder) {
	t.Helper()
	if w.Code != c.status {
		t.Fatalf("status %d, want %d; body %.300s", w.Code, c.status, w.Body)
	}
	// "//host/..." would send the client to another host: an open redirect.
	if location := w.Header().Get("Location"); w.Code == http.StatusPermanentRedirect &&
		(!strings.HasPrefix(location, "/") || strings.HasPrefix(location, "//")) {
		t.Fatalf("Location %q is not a path on this server", location)
	}
	if w.Code >= 400 {
		var body errorBody
		if w.Header().Get("Content-Type") != "application/json" || json.Unmarshal(w.Body.Bytes(), &body) != nil || body.Error == "" {
			t.Fatalf("the body %.300q is not the JSON error body", w.Body)
		}
		if len(body.Error) > 400 {
			t.Fatalf("the error message is %d bytes long: it must stay short whatever was sent", len(body.Error))
		}
	}
	if got := w.Header().Get("X-Content-Type-Options"); got != "nosniff" {
		t.Fatalf("X-Content-Type-Options %q, want nosniff", got)
	}
	if id := w.Header().Get("X-Request-Id"); !hostileRequestID.MatchString(id) {
		t.Fatalf("X-Request-Id %q: a request id is 1 to 64 characters of A-Z a-z 0-9 . _ -", id)
	}
}

// hostileRequests are the requests aimed at Ann, of a service holding Ann, Bob and Cy: every kind
// of input README's "What it withstands" names, each with the status docs/api.md gives it.
func hostileRequests() []hostileRequest {
	var cases []hostileRequest
	add := func(c hostileRequest) {
		c.name = strings.ReplaceAll(c.name, "/", "∕") // t.Run takes "/" to separate subtests: a path shows as a∕b
		cases = append(cases, c)
	}
	// header is base with these name, value pairs added: a name given twice is sent twice.
	header := func(base http.Header, pairs ...string) http.Header {
		h := base.Clone()
		if h == nil {
			h = http.Header{}
		}
		for i := 0; i+1 < len(pairs); i += 2 {
			h[pairs[i]] = append(h[pairs[i]], pairs[i+1])
		}
		return h
	}
	writer := header(nil, "Authorization", "Bearer "+writeToken)
	asJSON := header(nil, "Content-Type", "application/json")
	writerJSON := header(writer, "Content-Type", "application/json")
	const annPath, missingPath = "/api/users/1", "/api/users/1001"
	const eve = `{"name":"Eve","email":"eve@example.com"}`
	// inputName names a long input in a test name by its start and length.
	inputName := func(s string) string {
		if len(s) <= 40 {
			return s
		}
		return fmt.Sprintf("%s...(%d bytes)", s[:30], len(s))
	}
	writes := []struct{ method, path string }{{"POST", "/api/users"}, {"PUT", annPath}, {"PATCH", annPath}}
	onEveryWrite := func(name, body string, h http.Header, status int) {
		for _, w := range writes {
			add(hostileRequest{name: w.method + " " + name, method: w.method, target: w.path, header: h, body: body, status: status})
		}
	}

	// Bodies that are not one JSON object in valid UTF-8 with the right members (docs/api.md,
	// "Request bodies", rules 3 to 5).
	for _, b := range []struct{ name, body string }{
		{"empty body", ""},
		{"white space only", " \r\n\t "},
		{"null", "null"},
		{"an array", `[` + eve + `]`},
		{"a string", `"Eve"`},
		{"a number", `42`},
		{"true", `true`},
		{"a byte-order mark", "\uFEFF" + eve},
		{"text after the object", eve + "x"},
		{"two objects", eve + eve},
		{"a NUL byte after the object", eve + "\x00"},
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
		onEveryWrite(b.name, b.body, writerJSON, http.StatusBadRequest)
	}

	// An e-mail that another user has, in any case: 409 (docs/api.md, "Request bodies", rule 6).
	onEveryWrite("the email of another user in capitals", `{"name":"Eve","email":"BOB@EXAMPLE.COM"}`, writerJSON, http.StatusConflict)

	// Media types and encodings (docs/api.md, "Request bodies", rule 1): 415 before anything else
	// is looked at, a bad body included.
	for _, ct := range []struct{ name, value string }{
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
		{"text/plain", "text/plain"},
		{"a form", "application/x-www-form-urlencoded"},
		{"multipart", "multipart/form-data; boundary=x"},
	} {
		onEveryWrite(ct.name, eve, header(writer, "Content-Type", ct.value), http.StatusUnsupportedMediaType)
	}
	onEveryWrite("no Content-Type", eve, writer, http.StatusUnsupportedMediaType)
	onEveryWrite("a gzip Content-Encoding", eve, header(writerJSON, "Content-Encoding", "gzip"), http.StatusUnsupportedMediaType)
	onEveryWrite("an identity Content-Encoding", eve, header(writerJSON, "Content-Encoding", "identity"), http.StatusUnsupportedMediaType)
	onEveryWrite("a bad type and a bad body", "\xff", header(writer, "Content-Type", "text/plain"), http.StatusUnsupportedMediaType)
	mergePatch := header(writer, "Content-Type", "application/merge-patch+json") // for PATCH only
	add(hostileRequest{name: "POST a merge patch", method: "POST", target: "/api/users", header: mergePatch, body: eve, status: 415})
	add(hostileRequest{name: "PUT a merge patch", method: "PUT", target: annPath, header: mergePatch, body: eve, status: 415})

	// Size (docs/api.md, "Request bodies", rule 2): one byte past 1 MiB is 413, whatever it holds,
	// however it is sent; a body that breaks off is 400.
	padded := eve + strings.Repeat(" ", maxBodyBytes+1-len(eve))
	onEveryWrite("a valid user padded to 1 MiB + 1", padded, writerJSON, http.StatusRequestEntityTooLarge)
	onEveryWrite("1 MiB + 1 of garbage", strings.Repeat("\xff", maxBodyBytes+1), writerJSON, http.StatusRequestEntityTooLarge)
	chunked := func(r *http.Request) { r.ContentLength, r.TransferEncoding = -1, []string{"chunked"} }
	for _, w := range writes {
		add(hostileRequest{name: w.method + " a chunked body of 1 MiB + 1", method: w.method, target: w.path,
			header: writerJSON, body: padded, status: 413, prepare: chunked})
		add(hostileRequest{name: w.method + " a declared length of 10 GiB", method: w.method, target: w.path,
			header: writerJSON, body: eve, status: 413, prepare: func(r *http.Request) { r.ContentLength = 10 << 30 }})
		add(hostileRequest{name: w.method + " a body that fails to arrive", method: w.method, target: w.path,
			header: writerJSON, status: 400, prepare: func(r *http.Request) {
				cut := iotest.ErrReader(errors.New("connection reset by peer"))
				r.Body, r.ContentLength = io.NopCloser(io.MultiReader(strings.NewReader(`{"name":`), cut)), -1
			}})
	}

	// Authentication comes first (docs/api.md, "The order of the checks" and "Authentication"),
	// tried on a valid create, where a hole would add a user, and on a delete.
	longToken := strings.Repeat("a", 60<<10)
	for _, a := range []struct {
		name          string
		authorization []string
		status        int
	}{
		{"no Authorization", nil, 401},
		{"an empty Authorization", []string{""}, 401},
		{"Bearer alone", []string{"Bearer"}, 401},
		{"Bearer and spaces", []string{"Bearer    "}, 401},
		{"Basic", []string{"Basic dGVzdC13cml0ZS10b2tlbjo="}, 401},
		{"the token without a scheme", []string{writeToken}, 401},
		{"the token after Token", []string{"Token " + writeToken}, 401},
		{"the token then more", []string{"Bearer " + writeToken + " " + writeToken}, 401},
		{"the token with a comma", []string{"Bearer " + writeToken + ","}, 401},
		{"the token with a character more", []string{"Bearer " + writeToken + "x"}, 401},
		{"the token with a character less", []string{"Bearer " + writeToken[:len(writeToken)-1]}, 401},
		{"the token with padding", []string{"Bearer " + writeToken + "="}, 401},
		{"the token in capitals", []string{"Bearer " + strings.ToUpper(writeToken)}, 401},
		{"the token after a tab", []string{"Bearer\t" + writeToken}, 401},
		{"the token after an equals sign", []string{"Bearer=" + writeToken}, 401},
		{"the token in quotes", []string{`Bearer "` + writeToken + `"`}, 401},
		{"the token with a NUL", []string{"Bearer " + writeToken + "\x00"}, 401},
		{"the token with a newline", []string{"Bearer " + writeToken + "\nX: y"}, 401},
		{"a token with non-ASCII letters", []string{"Bearer tëst-wrïte-token"}, 401},
		{"a 60 KB token", []string{"Bearer " + longToken}, 401},
		{"a 60 KB scheme", []string{longToken + " " + writeToken}, 401},
		{"the token twice in two headers", []string{"Bearer " + writeToken, "Bearer " + writeToken}, 401},
		{"an empty header, then the token", []string{"", "Bearer " + writeToken}, 401},
		{"the read token, then the write token", []string{"Bearer " + readToken, "Bearer " + writeToken}, 401},
		{"the read token", []string{"Bearer " + readToken}, 403},
	} {
		auth := http.Header{}
		if a.authorization != nil {
			auth["Authorization"] = a.authorization
		}
		add(hostileRequest{name: "POST with " + a.name, method: "POST", target: "/api/users",
			header: header(auth, "Content-Type", "application/json"), body: eve, status: a.status})
		add(hostileRequest{name: "DELETE with " + a.name, method: "DELETE", target: annPath, header: auth, status: a.status})
	}
	add(hostileRequest{name: "a token in the query instead of the header", method: "POST",
		target: "/api/users?access_token=" + writeToken, header: asJSON, body: eve, status: 401})

	// Methods (docs/api.md, "Routes"): after authentication, 501 for a method no route takes
	// (methods are case-sensitive), 405 with Allow for one this path does not take.
	for _, m := range []struct{ method, target string }{
		{"TRACE", "/api/users"}, {"TRACE", annPath}, {"get", "/api/users"}, {"get", annPath},
		{"post", "/api/users"}, {"Delete", annPath}, {"CONNECT", "/api/users"}, {"PROPFIND", annPath},
		{"MKCOL", "/api/users"}, {"M-SEARCH", annPath}, {"FOO", "/api/users"},
	} {
		add(hostileRequest{name: m.method + " " + m.target, method: m.method, target: m.target,
			header: writerJSON, body: eve, status: http.StatusNotImplemented})
	}
	for _, m := range []struct{ method, target string }{
		{"DELETE", "/api/users"}, {"PUT", "/api/users"}, {"PATCH", "/api/users"}, {"POST", annPath}, {"POST", "/api/users/abc"},
	} {
		add(hostileRequest{name: m.method + " " + m.target, method: m.method, target: m.target,
			header: writerJSON, body: eve, status: http.StatusMethodNotAllowed})
	}
	add(hostileRequest{name: "TRACE without a token", method: "TRACE", target: "/api/users", status: 401})

	// Paths (docs/api.md, "Routes"): a path not in the table, or an id not in canonical form, names
	// nothing (404, and DELETE too under /api/); most are written around Ann's id, 1.
	for _, path := range []string{
		"/api/users/0", "/api/users/01", "/api/users/+1", "/api/users/-1",
		annPath + ".0", annPath + "e0", "/api/users/0x1",
		"/api/users/%201", annPath + "%20", "/api/users/１", // her id in a full-width digit
		"/api/users/9223372036854775807", "/api/users/9223372036854775808",
		"/api/users/99999999999999999999999999999", "/api/users/" + strings.Repeat("9", 100000),
		"/api/users/%00", annPath + "%00", "/api/users/%0A", annPath + "%0D%0A",
		"/api/users/%2F", annPath + "%2F1", "/api/users%2F1", "/api%2Fusers",
		annPath + "/", "/api/users/", annPath + "/orders", "/api/users;id=1",
		annPath + ";x", "/api/products", "/api/getUsers", "/api/",
		"/api/" + strings.Repeat("a", 60<<10), "/api/users/" + strings.Repeat("a/", 20000),
		"/api", "/API/USERS", "/getUsers", "/%00", "/assets/..%2F..%2Fetc%2Fpasswd", "/api/users/%2e%2e",
	} {
		add(hostileRequest{name: "GET " + inputName(path), method: "GET", target: path, header: writer, status: 404})
		if isAPIPath(path) {
			add(hostileRequest{name: "DELETE " + inputName(path), method: "DELETE", target: path, header: writer, status: 404})
		}
	}
	// A path not in clean form is redirected (308) to its clean form, always a path on this server.
	for _, path := range []string{
		"/api/users/..", "/api/users/../users", "/api/users/./1", "/api/users//1", "/api//users", "//api/users",
		"/api/users/../../../etc/passwd", "///evil.example/api/users", annPath + "/..",
	} {
		add(hostileRequest{name: "GET " + inputName(path), method: "GET", target: path, header: writer, status: http.StatusPermanentRedirect})
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
		add(hostileRequest{name: "GET list ?" + inputName(q), method: "GET", target: "/api/users?" + q, header: writer, status: 400})
	}
	for _, q := range []string{"x=1", "access_token=" + writeToken, "&", "=", strings.Join(manyNames, "&")} {
		add(hostileRequest{name: "GET a user ?" + inputName(q), method: "GET", target: annPath + "?" + q, header: writer, status: 400})
		add(hostileRequest{name: "DELETE ?" + inputName(q), method: "DELETE", target: annPath + "?" + q, header: writer, status: 400})
		for _, w := range writes {
			add(hostileRequest{name: w.method + " ?" + inputName(q), method: w.method, target: w.path + "?" + q,
				header: writerJSON, body: eve, status: 400})
		}
	}

	// Conditions (docs/api.md, "Conditional requests"): a change whose If-Match fails changes
	// nothing, whatever the list holds.
	manyTags := strings.TrimSuffix(strings.Repeat(`"0123456789abcdef", `, 5000), ", ")
	for _, ifMatch := range []string{`"bogus"`, `W/"bogus"`, `"`, `"unterminated`, "garbage", manyTags, `"a", garbage, *`} {
		for _, method := range []string{"PUT", "PATCH"} {
			add(hostileRequest{name: method + " If-Match " + inputName(ifMatch), method: method, target: annPath,
				header: header(writerJSON, "If-Match", ifMatch), body: eve, status: 412})
		}
		add(hostileRequest{name: "DELETE If-Match " + inputName(ifMatch), method: "DELETE", target: annPath,
			header: header(writer, "If-Match", ifMatch), status: 412})
	}
	add(hostileRequest{name: "DELETE a missing user with If-Match *", method: "DELETE", target: missingPath,
		header: header(writer, "If-Match", "*"), status: 404})

	// Bodies on GET, HEAD, DELETE and OPTIONS are ignored (docs/api.md, "Request bodies"): they
	// cannot create or change anything.
	add(hostileRequest{name: "GET the list with a body", method: "GET", target: "/api/users", header: writerJSON, body: eve, status: 200})
	add(hostileRequest{name: "GET the list with a chunked 1 MiB + 1 body", method: "GET", target: "/api/users",
		header: writerJSON, body: padded, status: 200, prepare: chunked})
	add(hostileRequest{name: "HEAD a user with a body", method: "HEAD", target: annPath, header: writerJSON, body: eve, status: 200})
	add(hostileRequest{name: "DELETE a missing user with a body", method: "DELETE", target: missingPath,
		header: writerJSON, body: `{"id":1}`, status: 404})
	add(hostileRequest{name: "OPTIONS with a body and a bad token", method: "OPTIONS", target: "/api/users",
		header: header(nil, "Authorization", "Bearer nope", "Content-Type", "application/json"), body: eve, status: 204})

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
		add(hostileRequest{name: "GET a user with " + h.name + " " + inputName(h.value), method: "GET", target: annPath,
			header: header(writer, h.name, h.value), status: 200})
		add(hostileRequest{name: "POST an invalid user with " + h.name + " " + inputName(h.value), method: "POST",
			target: "/api/users", header: header(writerJSON, h.name, h.value), body: `{"name":""}`, status: 400})
	}
	return cases
}
