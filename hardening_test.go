package main

// Hardening (README, "What it withstands"), through the handler. A reference server gets copied
// into places where anyone can reach it, so these tests prove that it keeps working whatever it
// is sent:
//
//   - every hostile or careless request gets a clear 4xx with the JSON error body, never a 5xx and
//     never a 2xx, and leaves the store exactly as it was;
//   - many clients writing at once keep ids and e-mails unique and total equal to the users present;
//   - a panic costs one request, and is logged with its stack;
//   - tokens never reach a log line or an answer, and request values cannot forge log lines.
//
// What needs a real connection (hostile bytes on the wire, slow, stuck and flooding clients, big
// bodies, SIGTERM under load) is the battery's: blackbox/hardening_test.go drives the built
// program. The fuzz targets look for what these tables did not think of. The helpers this file
// declares have "hardening" in their names.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"
)

// ---------------------------------------------------------------------------------------------
// Requests, and the clients that send them.

// A hardeningRequest is one request a hostile or careless client might send, and the status it
// must get.
type hardeningRequest struct {
	name    string
	method  string
	target  string
	header  http.Header // each value is sent, so a field may come twice
	body    string
	want    int                 // the status; hardeningRedirect for a path the mux cleans
	prepare func(*http.Request) // for what headers cannot say: a chunked body, a declared length
}

const (
	// hardeningRedirect stands for the redirect the service sends to a path not in clean form:
	// 308 with Location a path on this server (docs/api.md, "Routes").
	hardeningRedirect = 3
	// hardeningAnyClientError stands for any 4xx, where docs/api.md leaves the choice open.
	hardeningAnyClientError = 4
)

// The header fields the tables combine with hardeningHeaders.
var (
	hardeningWriter = http.Header{"Authorization": {"Bearer " + writeToken}}
	hardeningReader = http.Header{"Authorization": {"Bearer " + readToken}}
	hardeningJSON   = http.Header{"Content-Type": {"application/json"}}
)

// hardeningHeaders returns the fields of every header given, in one: a field in two of them is
// sent twice.
func hardeningHeaders(headers ...http.Header) http.Header {
	all := http.Header{}
	for _, h := range headers {
		for name, values := range h {
			for _, value := range values {
				all.Add(name, value)
			}
		}
	}
	return all
}

// hardeningServe sends a request through the service's handler.
func hardeningServe(ts *testServer, c hardeningRequest) *httptest.ResponseRecorder {
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
	return ts.serve(r)
}

// A hardeningClient sends one request, through the handler or over HTTP, and returns the status
// and body of the answer.
type hardeningClient func(method, target, body string, header http.Header) (status int, answer []byte)

// hardeningThroughHandler sends requests straight to the handler: fast, so the race detector sees
// many interleavings.
func hardeningThroughHandler(ts *testServer) hardeningClient {
	return func(method, target, body string, header http.Header) (int, []byte) {
		w := hardeningServe(ts, hardeningRequest{method: method, target: target, body: body, header: header})
		return w.Code, w.Body.Bytes()
	}
}

// create adds a user, and fails the test unless it is created.
func (send hardeningClient) create(t testing.TB, name, email string) user {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"name": name, "email": email})
	status, answer := send("POST", "/api/users", string(body), hardeningHeaders(hardeningWriter, hardeningJSON))
	var created user
	if status != http.StatusCreated || json.Unmarshal(answer, &created) != nil {
		t.Fatalf("creating %s: status %d, body %s", email, status, answer)
	}
	return created
}

// seed adds Ann, Bob and Cy, so that hostile requests aim at something real.
func (send hardeningClient) seed(t testing.TB) (ann, bob, cy user) {
	t.Helper()
	return send.create(t, "Ann", "ann@example.com"), send.create(t, "Bob", "bob@example.com"), send.create(t, "Cy", "cy@example.com")
}

// snapshot is the whole collection as a writer sees it.
func (send hardeningClient) snapshot(t testing.TB) string {
	t.Helper()
	status, answer := send("GET", "/api/users", "", hardeningWriter)
	if status != http.StatusOK {
		t.Fatalf("GET /api/users: status %d, body %s", status, answer)
	}
	return string(answer)
}

// requireUnchanged fails unless the collection is what it was, and a user created now gets
// nextID, as a refused request must not even use up an id. It deletes that user again, so that
// the collection stays as it was, and returns the id the next user will get.
func (send hardeningClient) requireUnchanged(t testing.TB, before string, nextID int64) int64 {
	t.Helper()
	if after := send.snapshot(t); after != before {
		t.Fatalf("the store changed:\nbefore %s\nafter  %s", before, after)
	}
	probe := send.create(t, "Probe", "probe@example.com")
	if probe.ID != nextID {
		t.Errorf("the next user created got id %d, want %d: a refused request used up an id", probe.ID, nextID)
	}
	if status, answer := send("DELETE", userPath(probe.ID), "", hardeningWriter); status != http.StatusNoContent {
		t.Fatalf("deleting the probe user: status %d, body %s", status, answer)
	}
	return probe.ID + 1
}

// newHardeningService is the service on an empty store in memory, logging in this format, and a
// client that sends it requests through its handler.
func newHardeningService(t testing.TB, logFormat string) (*testServer, hardeningClient) {
	t.Helper()
	ts := newTestServer(t, "-log-format", logFormat)
	return ts, hardeningThroughHandler(ts)
}

var hardeningEchoableID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// hardeningWantErrorBody fails the test unless an answer is the JSON error body, with a message
// that stays short whatever was sent.
func hardeningWantErrorBody(t testing.TB, header http.Header, answer []byte) {
	t.Helper()
	if ct := header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json; body %.300s", ct, answer)
	}
	var body errorBody
	if err := json.Unmarshal(answer, &body); err != nil || body.Error == "" {
		t.Fatalf("body %.300q is not the JSON error body", answer)
	}
	if len(body.Error) > 400 {
		t.Fatalf("the error message is %d bytes long: messages must stay short whatever was sent", len(body.Error))
	}
}

// hardeningCheckAnswer checks what every answer must be: the expected status, never a 5xx, the
// JSON error body on every failure, and the headers every response carries.
func hardeningCheckAnswer(t *testing.T, c hardeningRequest, w *httptest.ResponseRecorder) {
	t.Helper()
	switch {
	case c.want == hardeningRedirect:
		if w.Code != http.StatusPermanentRedirect {
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
		hardeningWantErrorBody(t, w.Header(), w.Body.Bytes())
	}
	if got := w.Header().Get("X-Content-Type-Options"); got != "nosniff" {
		t.Fatalf("X-Content-Type-Options %q, want nosniff", got)
	}
	if id := w.Header().Get("X-Request-Id"); !hardeningEchoableID.MatchString(id) {
		t.Fatalf("X-Request-Id %q: a request id must be 1 to 64 characters of A-Z a-z 0-9 . _ -", id)
	}
}

// ---------------------------------------------------------------------------------------------
// Hostile requests, through the handler.

// Every hostile or careless request of the battery gets its 4xx with the JSON error body, or the
// status docs/api.md gives it, and leaves the store and the next id as they were.
func TestHostileRequestsGetA4xxAndLeaveTheStoreAsItWas(t *testing.T) {
	// One service, holding Ann, Bob and Cy, takes the cases in turn: after each, the collection is
	// as it was and the next id is still free (requireUnchanged), so every case meets the same
	// three users.
	ts, send := newHardeningService(t, "json")
	ann, _, cy := send.seed(t)
	before, nextID := send.snapshot(t), cy.ID+1
	cases := hardeningBattery(ann)
	if len(cases) < 500 {
		t.Fatalf("only %d hostile requests: the battery has shrunk", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hardeningCheckAnswer(t, c, hardeningServe(ts, c))
			nextID = send.requireUnchanged(t, before, nextID)
		})
	}
}

// hardeningBattery is the battery aimed at Ann, of a service holding Ann, Bob and Cy: every kind of
// input README's "What it withstands" names, each with the status docs/api.md gives it.
func hardeningBattery(ann user) []hardeningRequest {
	var cases []hardeningRequest
	add := func(c hardeningRequest) {
		c.name = strings.ReplaceAll(c.name, "/", "∕") // t.Run takes "/" to separate subtests: a path shows as a∕b
		cases = append(cases, c)
	}
	writer, reader, asJSON := hardeningWriter, hardeningReader, hardeningJSON
	writerJSON := hardeningHeaders(writer, asJSON)
	with := func(name, value string) http.Header { return http.Header{name: {value}} }
	annPath, id := userPath(ann.ID), strconv.FormatInt(ann.ID, 10)
	missingPath := userPath(ann.ID + 1000) // no user has it: the service holds three
	eve := `{"name":"Eve","email":"eve@example.com"}`
	// inputName names a long input in a test name by its start and length.
	inputName := func(s string) string {
		if len(s) <= 40 {
			return s
		}
		return fmt.Sprintf("%s...(%d bytes)", s[:30], len(s))
	}
	onEveryWriteWithQuery := func(query, name, body string, header http.Header, want int) {
		for _, target := range []struct{ method, path string }{
			{"POST", "/api/users"}, {"PUT", annPath}, {"PATCH", annPath},
		} {
			add(hardeningRequest{name: target.method + " " + name, method: target.method, target: target.path + query,
				header: header, body: body, want: want})
		}
	}
	onEveryWrite := func(name, body string, header http.Header, want int) {
		onEveryWriteWithQuery("", name, body, header, want)
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
		{"another id", fmt.Sprintf(`{"id":%d,"name":"Eve","email":"eve@example.com"}`, ann.ID+1)},
		{"a negative id", `{"id":-1,"name":"Eve","email":"eve@example.com"}`},
		{"a null id", `{"id":null,"name":"Eve","email":"eve@example.com"}`},
		{"the id as a string", `{"id":"` + id + `","name":"Eve","email":"eve@example.com"}`},
		{"the id as 1e999", `{"id":1e999,"name":"Eve","email":"eve@example.com"}`},
		{"the id twice", `{"id":` + id + `,"id":` + id + `,"name":"Eve","email":"eve@example.com"}`},
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
		header := writer
		if ct.value != "" {
			header = hardeningHeaders(writer, with("Content-Type", ct.value))
		}
		onEveryWrite(ct.name, eve, header, http.StatusUnsupportedMediaType)
	}
	onEveryWrite("a gzip Content-Encoding", eve, hardeningHeaders(writerJSON, with("Content-Encoding", "gzip")), http.StatusUnsupportedMediaType)
	onEveryWrite("an identity Content-Encoding", eve, hardeningHeaders(writerJSON, with("Content-Encoding", "identity")), http.StatusUnsupportedMediaType)
	mergePatch := hardeningHeaders(writer, with("Content-Type", "application/merge-patch+json"))
	add(hardeningRequest{name: "POST a merge patch", method: "POST", target: "/api/users", header: mergePatch, body: eve,
		want: http.StatusUnsupportedMediaType}) // merge patches are for PATCH only
	add(hardeningRequest{name: "PUT a merge patch", method: "PUT", target: annPath, header: mergePatch, body: eve,
		want: http.StatusUnsupportedMediaType})
	// Media type comes first of the request checks: a bad type with a bad body is still 415.
	onEveryWrite("a bad type and a bad body", "\xff", hardeningHeaders(writer, with("Content-Type", "text/plain")), http.StatusUnsupportedMediaType)

	// Size (docs/api.md, "Request bodies", rule 2): one byte past 1 MiB is 413, whatever it holds,
	// however it is sent.
	padded := eve + strings.Repeat(" ", maxBodyBytes+1-len(eve))
	onEveryWrite("a valid user padded to 1 MiB + 1", padded, writerJSON, http.StatusRequestEntityTooLarge)
	onEveryWrite("1 MiB + 1 of garbage", strings.Repeat("\xff", maxBodyBytes+1), writerJSON, http.StatusRequestEntityTooLarge)
	for _, target := range []struct{ method, path string }{{"POST", "/api/users"}, {"PUT", annPath}, {"PATCH", annPath}} {
		add(hardeningRequest{name: target.method + " a chunked body of 1 MiB + 1", method: target.method, target: target.path,
			header: writerJSON, body: padded, want: http.StatusRequestEntityTooLarge,
			prepare: func(r *http.Request) { r.ContentLength, r.TransferEncoding = -1, []string{"chunked"} }})
		add(hardeningRequest{name: target.method + " a declared length of 10 GiB", method: target.method, target: target.path,
			header: writerJSON, body: eve, want: http.StatusRequestEntityTooLarge,
			prepare: func(r *http.Request) { r.ContentLength = 10 << 30 }})
		add(hardeningRequest{name: target.method + " a body that fails to arrive", method: target.method, target: target.path,
			header: writerJSON, want: http.StatusBadRequest,
			prepare: func(r *http.Request) {
				cut := iotest.ErrReader(errors.New("connection reset by peer"))
				r.Body, r.ContentLength = io.NopCloser(io.MultiReader(strings.NewReader(`{"name":`), cut)), -1
			}})
	}

	// Authentication comes first (docs/api.md, "The order of the checks" and "Authentication").
	// Sent with a valid create: a hole would add a user.
	longToken := strings.Repeat("a", 60<<10)
	authorization := func(values ...string) http.Header { return http.Header{"Authorization": values} }
	for _, a := range []struct {
		name   string
		header http.Header
		want   int
	}{
		{"no Authorization", nil, 401},
		{"an empty Authorization", authorization(""), 401},
		{"Bearer alone", authorization("Bearer"), 401},
		{"Bearer and spaces", authorization("Bearer    "), 401},
		{"Basic", authorization("Basic dGVzdC13cml0ZS10b2tlbjo="), 401},
		{"the token without a scheme", authorization(writeToken), 401},
		{"the token after Token", authorization("Token " + writeToken), 401},
		{"the token then more", authorization("Bearer " + writeToken + " " + writeToken), 401},
		{"the token with a comma", authorization("Bearer " + writeToken + ","), 401},
		{"the token with a character more", authorization("Bearer " + writeToken + "x"), 401},
		{"the token with a character less", authorization("Bearer " + writeToken[:len(writeToken)-1]), 401},
		{"the token with padding", authorization("Bearer " + writeToken + "="), 401},
		{"the token in capitals", authorization("Bearer " + strings.ToUpper(writeToken)), 401},
		{"the token after a tab", authorization("Bearer\t" + writeToken), 401},
		{"the token after an equals sign", authorization("Bearer=" + writeToken), 401},
		{"the token in quotes", authorization(`Bearer "` + writeToken + `"`), 401},
		{"the token with a NUL", authorization("Bearer " + writeToken + "\x00"), 401},
		{"the token with a newline", authorization("Bearer " + writeToken + "\nX: y"), 401},
		{"a token with non-ASCII letters", authorization("Bearer tëst-wrïte-token"), 401},
		{"a 60 KB token", authorization("Bearer " + longToken), 401},
		{"a 60 KB scheme", authorization(longToken + " " + writeToken), 401},
		{"the token twice in two headers", authorization("Bearer "+writeToken, "Bearer "+writeToken), 401},
		{"an empty header, then the token", authorization("", "Bearer "+writeToken), 401},
		{"the read token, then the write token", authorization("Bearer "+readToken, "Bearer "+writeToken), 401},
		{"the read token", reader, 403},
	} {
		add(hardeningRequest{name: "POST with " + a.name, method: "POST", target: "/api/users",
			header: hardeningHeaders(a.header, asJSON), body: eve, want: a.want})
		add(hardeningRequest{name: "DELETE with " + a.name, method: "DELETE", target: annPath,
			header: a.header, want: a.want})
	}
	add(hardeningRequest{name: "a token in the query instead of the header", method: "POST",
		target: "/api/users?access_token=" + writeToken, header: asJSON, body: eve, want: 401})

	// Methods (docs/api.md, "Routes"): after authentication, 501 for a method no route takes
	// (methods are case-sensitive), 405 with Allow for one this path does not take.
	for _, m := range []struct{ method, target string }{
		{"TRACE", "/api/users"}, {"TRACE", annPath}, {"get", "/api/users"}, {"get", annPath},
		{"post", "/api/users"}, {"Delete", annPath}, {"CONNECT", "/api/users"}, {"PROPFIND", annPath},
		{"MKCOL", "/api/users"}, {"M-SEARCH", annPath}, {"FOO", "/api/users"},
	} {
		add(hardeningRequest{name: m.method + " " + m.target, method: m.method, target: m.target,
			header: writerJSON, body: eve, want: http.StatusNotImplemented})
	}
	for _, m := range []struct{ method, target string }{
		{"DELETE", "/api/users"}, {"PUT", "/api/users"}, {"PATCH", "/api/users"}, {"POST", annPath}, {"POST", "/api/users/abc"},
	} {
		add(hardeningRequest{name: m.method + " " + m.target, method: m.method, target: m.target,
			header: writerJSON, body: eve, want: http.StatusMethodNotAllowed})
	}
	add(hardeningRequest{name: "TRACE without a token", method: "TRACE", target: "/api/users", want: 401})

	// Paths (docs/api.md, "Routes"): a path not in the table, or an id not in canonical form, names
	// nothing; most are written around Ann's id.
	fullWidth := strings.Map(func(r rune) rune { return r - '0' + '０' }, id) // her id in full-width digits
	for _, p := range []struct {
		path string
		want int
	}{
		{"/api/users/0", 404}, {"/api/users/0" + id, 404}, {"/api/users/+" + id, 404}, {"/api/users/-" + id, 404},
		{annPath + ".0", 404}, {annPath + "e0", 404}, {"/api/users/0x" + strconv.FormatInt(ann.ID, 16), 404},
		{"/api/users/%20" + id, 404}, {annPath + "%20", 404}, {"/api/users/" + fullWidth, 404},
		{"/api/users/9223372036854775807", 404}, {"/api/users/9223372036854775808", 404},
		{"/api/users/99999999999999999999999999999", 404}, {"/api/users/" + strings.Repeat("9", 100000), 404},
		{"/api/users/%00", 404}, {annPath + "%00", 404}, {"/api/users/%0A", 404}, {annPath + "%0D%0A", 404},
		{"/api/users/%2F", 404}, {annPath + "%2F" + id, 404}, {"/api/users%2F" + id, 404}, {"/api%2Fusers", 404},
		{annPath + "/", 404}, {"/api/users/", 404}, {annPath + "/orders", 404}, {"/api/users;id=" + id, 404},
		{annPath + ";x", 404}, {"/api/products", 404}, {"/api/getUsers", 404}, {"/api/", 404},
		{"/api/" + strings.Repeat("a", 60<<10), 404}, {"/api/users/" + strings.Repeat("a/", 20000), 404},
		{"/api", 404}, {"/API/USERS", 404}, {"/getUsers", 404}, {"/%00", 404}, {"/assets/..%2F..%2Fetc%2Fpasswd", 404},
		{"/api/users/..", hardeningRedirect}, {"/api/users/../users", hardeningRedirect}, {"/api/users/./" + id, hardeningRedirect},
		{"/api/users//" + id, hardeningRedirect}, {"/api//users", hardeningRedirect}, {"//api/users", hardeningRedirect},
		{"/api/users/../../../etc/passwd", hardeningRedirect}, {"///evil.example/api/users", hardeningRedirect},
		{"/api/users/%2e%2e", 404}, {annPath + "/..", hardeningRedirect},
	} {
		add(hardeningRequest{name: "GET " + inputName(p.path), method: "GET", target: p.path, header: writer, want: p.want})
		if p.want == 404 && isAPIPath(p.path) {
			add(hardeningRequest{name: "DELETE " + inputName(p.path), method: "DELETE", target: p.path, header: writer, want: 404})
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
		add(hardeningRequest{name: "GET list ?" + inputName(q), method: "GET", target: "/api/users?" + q, header: writer, want: 400})
	}
	for _, q := range []string{"x=1", "access_token=" + writeToken, "&", "=", strings.Join(manyNames, "&")} {
		add(hardeningRequest{name: "GET a user ?" + inputName(q), method: "GET", target: annPath + "?" + q, header: writer, want: 400})
		add(hardeningRequest{name: "DELETE ?" + inputName(q), method: "DELETE", target: annPath + "?" + q, header: writer, want: 400})
		onEveryWriteWithQuery("?"+q, "?"+inputName(q), eve, writerJSON, http.StatusBadRequest)
	}

	// Conditions (docs/api.md, "Conditional requests"): a change whose If-Match fails changes
	// nothing, whatever the list holds.
	manyTags := strings.TrimSuffix(strings.Repeat(`"0123456789abcdef", `, 5000), ", ")
	for _, ifMatch := range []string{`"bogus"`, `W/"bogus"`, `"`, `"unterminated`, "garbage", manyTags, `"a", garbage, *`} {
		for _, method := range []string{"PUT", "PATCH"} {
			add(hardeningRequest{name: method + " If-Match " + inputName(ifMatch), method: method, target: annPath,
				header: hardeningHeaders(writerJSON, with("If-Match", ifMatch)), body: eve, want: http.StatusPreconditionFailed})
		}
		add(hardeningRequest{name: "DELETE If-Match " + inputName(ifMatch), method: "DELETE", target: annPath,
			header: hardeningHeaders(writer, with("If-Match", ifMatch)), want: http.StatusPreconditionFailed})
	}
	add(hardeningRequest{name: "DELETE a missing user with If-Match *", method: "DELETE", target: missingPath,
		header: hardeningHeaders(writer, with("If-Match", "*")), want: 404})

	// Bodies on GET and DELETE are ignored (docs/api.md, "Request bodies"): they cannot create or
	// change anything.
	add(hardeningRequest{name: "GET the list with a body", method: "GET", target: "/api/users",
		header: writerJSON, body: eve, want: 200})
	add(hardeningRequest{name: "GET the list with a chunked 1 MiB + 1 body", method: "GET", target: "/api/users",
		header: writerJSON, body: padded, want: 200,
		prepare: func(r *http.Request) { r.ContentLength, r.TransferEncoding = -1, []string{"chunked"} }})
	add(hardeningRequest{name: "HEAD a user with a body", method: "HEAD", target: annPath,
		header: writerJSON, body: eve, want: 200})
	add(hardeningRequest{name: "DELETE a missing user with a body", method: "DELETE", target: missingPath,
		header: writerJSON, body: `{"id":` + id + `}`, want: 404})
	add(hardeningRequest{name: "OPTIONS with a body and a bad token", method: "OPTIONS", target: "/api/users",
		header: http.Header{"Authorization": {"Bearer nope"}, "Content-Type": {"application/json"}}, body: eve, want: 204})

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
		add(hardeningRequest{name: "GET a user with " + h.name + " " + inputName(h.value), method: "GET", target: annPath,
			header: hardeningHeaders(writer, with(h.name, h.value)), want: 200})
		add(hardeningRequest{name: "POST an invalid user with " + h.name + " " + inputName(h.value), method: "POST",
			target: "/api/users", header: hardeningHeaders(writerJSON, with(h.name, h.value)), body: `{"name":""}`, want: 400})
	}
	return cases
}

// The boundary of the body limit is exact: 1 MiB is read and judged, one byte more is refused
// and changes nothing (docs/api.md, "Request bodies", rule 2).
func TestBodyLimitIsExactlyOneMebibyte(t *testing.T) {
	_, send := newHardeningService(t, "json")
	send.seed(t)
	eve := `{"name":"Eve","email":"eve@example.com"}`
	exactly := eve + strings.Repeat(" ", maxBodyBytes-len(eve))
	writerJSON := hardeningHeaders(hardeningWriter, hardeningJSON)
	status, answer := send("POST", "/api/users", exactly, writerJSON)
	var created user
	if status != http.StatusCreated || json.Unmarshal(answer, &created) != nil {
		t.Fatalf("a body of exactly 1 MiB: status %d, want 201; body %s", status, answer)
	}
	before := send.snapshot(t)
	if status, answer := send("POST", "/api/users", exactly+" ", writerJSON); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body of 1 MiB + 1: status %d, want 413; body %s", status, answer)
	}
	send.requireUnchanged(t, before, created.ID+1)
}

// ---------------------------------------------------------------------------------------------
// Many clients at once.

// hardeningList is a list's envelope, paged or not.
type hardeningList struct {
	Data       []user `json:"data"`
	Total      int    `json:"total"`
	Page       int    `json:"page"`
	PerPage    int    `json:"per_page"`
	TotalPages int    `json:"total_pages"`
}

// hardeningCheckList checks what every list must show, however many writers are at work: total
// equal to the users shown (or, paged, consistent with them), ids ascending, and no e-mail twice.
func hardeningCheckList(t *testing.T, status int, body []byte, perPage int) (hardeningList, bool) {
	t.Helper()
	var list hardeningList
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

// hardeningLedger is what the clients were told: every id created, and every id deleted.
type hardeningLedger struct {
	mu      sync.Mutex
	created map[int64]bool
	deleted map[int64]int
	maxID   atomic.Int64
}

// hardeningRunLoad has workers create, replace, patch, delete, read and list users at once, on a
// small set of e-mails so that they collide, and checks every answer as it comes. It returns the
// ledger.
func hardeningRunLoad(t *testing.T, send hardeningClient, workers, opsEach int) *hardeningLedger {
	ledger := &hardeningLedger{created: map[int64]bool{}, deleted: map[int64]int{}}
	writerJSON := hardeningHeaders(hardeningWriter, hardeningJSON)
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
				id := r.Int63n(ledger.maxID.Load()+3) + 1 // a user that may exist, or not yet
				target := userPath(id)
				userJSON := fmt.Sprintf(`{"name":"Worker %d op %d","email":%q}`, seed, i, emailFor(r))
				switch op := r.Intn(20); {
				case op < 6:
					status, body := send("POST", "/api/users", userJSON, writerJSON)
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
					if status, body := send("PUT", target, userJSON, writerJSON); status != 200 && status != 404 && status != 409 {
						t.Errorf("PUT %s: status %d, body %s", target, status, body)
					}
				case op < 12:
					patch := fmt.Sprintf(`{"email":%q}`, emailFor(r))
					if r.Intn(2) == 0 {
						patch = fmt.Sprintf(`{"name":"Patched %d"}`, i)
					}
					if status, body := send("PATCH", target, patch, writerJSON); status != 200 && status != 404 && status != 409 {
						t.Errorf("PATCH %s: status %d, body %s", target, status, body)
					}
				case op < 14:
					status, body := send("DELETE", target, "", hardeningWriter)
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
					status, body := send("GET", "/api/users", "", hardeningReader)
					hardeningCheckList(t, status, body, 0)
				case op < 18:
					perPage := r.Intn(10) + 1
					status, body := send("GET", fmt.Sprintf("/api/users?page=%d&per_page=%d", r.Intn(4)+1, perPage), "", hardeningReader)
					hardeningCheckList(t, status, body, perPage)
				default:
					if status, body := send("GET", target, "", hardeningReader); status != 200 && status != 404 {
						t.Errorf("GET %s: status %d, body %s", target, status, body)
					}
				}
			}
		}(int64(w + 1))
	}
	wg.Wait()
	return ledger
}

// hardeningCheckAfterLoad checks the store once the clients are done: exactly the users created
// and not deleted are there, each deleted once, each e-mail once, and the next id follows the
// last given. It returns the list as the clients were last shown it.
func hardeningCheckAfterLoad(t *testing.T, send hardeningClient, ledger *hardeningLedger) string {
	t.Helper()
	status, body := send("GET", "/api/users", "", hardeningReader)
	list, ok := hardeningCheckList(t, status, body, 0)
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
		status, body := send("GET", "/api/users?email="+strings.ToUpper(u.Email), "", hardeningReader)
		if found, _ := hardeningCheckList(t, status, body, 0); len(found.Data) != 1 || found.Data[0].ID != u.ID {
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
	status, body = send("POST", "/api/users", `{"name":"Last","email":"last@example.com"}`, hardeningHeaders(hardeningWriter, hardeningJSON))
	var last user
	if status != http.StatusCreated || json.Unmarshal(body, &last) != nil || last.ID != ledger.maxID.Load()+1 {
		t.Errorf("the create after the load: status %d, body %s; want id %d", status, body, ledger.maxID.Load()+1)
	}
	_, body = send("GET", "/api/users", "", hardeningReader)
	return string(body)
}

// Many clients creating, replacing, patching, deleting and listing at once leave a consistent
// store: ids unique and never reused, e-mails unique, total equal to the users present. Run it
// under -race (./test.sh does).
func TestConcurrentClientsKeepTheStoreConsistent(t *testing.T) {
	ts := newTestServer(t)
	send := hardeningThroughHandler(ts)
	ledger := hardeningRunLoad(t, send, 8, 250)
	hardeningCheckAfterLoad(t, send, ledger)
}

// ---------------------------------------------------------------------------------------------
// Panics.

// A panic before the answer has begun is a JSON 500, logged with its stack; a panic after it has
// begun cuts the connection, since the status is already on its way; either way the server goes
// on, and net/http does not log the panic a second time (README, "What it withstands").
func TestPanicInAHandlerIsAJSON500AndTheServerGoesOn(t *testing.T) {
	panics := []struct {
		path    string
		panic   string
		handler http.HandlerFunc
		cut     bool // the connection is cut, rather than answered 500
	}{
		{"/before-the-answer", "panic before the answer", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "/half/made") // for an answer never given: must not leak into the 500
			panic("panic before the answer")
		}, false},
		{"/after-the-status", "panic after the status", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			panic("panic after the status")
		}, true},
		{"/after-part-of-the-body", "panic after part of the body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"data":[`)
			http.NewResponseController(w).Flush()
			panic("panic after part of the body")
		}, true},
	}
	ts, send := newHardeningService(t, "json")
	ann, _, _ := send.seed(t)
	requestsBefore := len(ts.log.records(t, "request"))
	// The handlers that panic get the service's own middleware, logging where the service does, as
	// newServer builds it; every other path goes to the service.
	a := &api{log: newLogger("json", ts.log), requestIDPrefix: "panic-"}
	mux := http.NewServeMux()
	for _, p := range panics {
		mux.Handle(p.path, a.observe(p.handler))
	}
	mux.Handle("/", ts)
	server := httptest.NewUnstartedServer(mux)
	serverLog := &logBuffer{}
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
		if response, body, err := get(userPath(ann.ID)); err != nil || response.StatusCode != 200 {
			t.Fatalf("after the panics: %v, body %s", err, body)
		}
	}

	logged := ts.log.records(t, "panic in handler")
	for _, p := range panics {
		n := 0
		for _, record := range logged {
			if record["panic"] == p.panic {
				n++
			}
		}
		if n != rounds {
			t.Errorf("the panic at %s is logged %d times, want %d", p.path, n, rounds)
		}
	}
	namesTheHandler := false
	for _, record := range logged {
		stack, _ := record["stack"].(string)
		if !strings.HasPrefix(stack, "goroutine ") {
			t.Errorf("a panic is logged without its stack: %v", record)
		}
		namesTheHandler = namesTheHandler || strings.Contains(stack, "hardening_test.go")
	}
	if len(logged) != rounds*len(panics) || !namesTheHandler {
		t.Errorf("%d stacks logged for %d panics, or none names the handler that panicked", len(logged), rounds*len(panics))
	}
	if n, want := len(ts.log.records(t, "request"))-requestsBefore, rounds*(len(panics)+1); n != want {
		t.Errorf("%d access log records for %d requests", n, want)
	}
	if strings.Contains(serverLog.String(), "panic") {
		t.Errorf("net/http logged a panic a second time:\n%s", serverLog)
	}
}

// A panic deep in the real handler stack, on the journal's write, and a failure the API did not
// foresee are both the JSON 500, with no trace of the half-made answer; the detail goes only to
// the log. Reads go on; writes are refused until a restart, as /healthz says (README, "Durability
// with -data").
func TestFailuresInsideTheStackAreAJSON500(t *testing.T) {
	for _, c := range []struct {
		name   string
		panics bool
		logged string
	}{
		{"a panic", true, "the disk panicked at write"},
		{"an unforeseen error", false, errDiskFailed.Error()},
	} {
		t.Run(c.name, func(t *testing.T) {
			disk := &failingDisk{step: stepWrite, panics: c.panics}
			store := openFileStore(t, newDataPath(t), disk)
			ts := newTestServerOn(t, store)
			send := hardeningThroughHandler(ts)
			ann, _, _ := send.seed(t)
			disk.failing.Store(true)

			r := httptest.NewRequest("POST", "/api/users", strings.NewReader(`{"name":"Eve","email":"eve@example.com"}`))
			r.Header.Set("Authorization", "Bearer "+writeToken)
			r.Header.Set("Content-Type", "application/json")
			w := ts.serve(r)
			wantError(t, w, http.StatusInternalServerError, "internal server error")
			wantHeaders(t, w.Header(), map[string]string{"Location": "", "ETag": "", "Cache-Control": "no-store"})
			if !strings.Contains(ts.log.String(), c.logged) {
				t.Fatalf("the log does not hold the detail:\n%s", ts.log)
			}

			if status, body := send("GET", userPath(ann.ID), "", hardeningReader); status != 200 {
				t.Fatalf("a read after the failure: status %d, body %s", status, body)
			}
			w = ts.serve(httptest.NewRequest("GET", "/healthz", nil))
			wantStatus(t, w, http.StatusServiceUnavailable)
			wantBody(t, w, `{"status":"data file not writable"}`)
		})
	}
}

// ---------------------------------------------------------------------------------------------
// Logs.

// hardeningSecrets are the tokens no log line and no answer may hold.
var hardeningSecrets = []string{writeToken, readToken, "unknown-secret-token-0123456789"}

// hardeningTokenRequests are requests with tokens in every place a client might put them, at a
// service that holds Ann.
func hardeningTokenRequests(ann user) []hardeningRequest {
	annPath := userPath(ann.ID)
	writerJSON := hardeningHeaders(hardeningWriter, hardeningJSON)
	writer := hardeningWriter
	return []hardeningRequest{
		{name: "the write token", method: "GET", target: "/api/users", header: writer, want: 200},
		{name: "the read token", method: "GET", target: annPath, header: hardeningReader, want: 200},
		{name: "the read token on a write", method: "POST", target: "/api/users", header: hardeningHeaders(hardeningReader, hardeningJSON),
			body: `{"name":"Eve","email":"eve@example.com"}`, want: 403},
		{name: "an unknown token", method: "GET", target: "/api/users", header: http.Header{"Authorization": {"Bearer " + hardeningSecrets[2]}}, want: 401},
		{name: "the token twice", method: "GET", target: "/api/users", header: hardeningHeaders(writer, writer), want: 401},
		{name: "the token after another scheme", method: "GET", target: "/api/users", header: http.Header{"Authorization": {"Token " + writeToken}}, want: 401},
		{name: "the token in the query alone", method: "GET", target: "/api/users?access_token=" + writeToken, want: 401},
		{name: "the token in the query of the list", method: "GET", target: "/api/users?access_token=" + writeToken, header: writer, want: 400},
		{name: "the token in the query of a user", method: "GET", target: annPath + "?access_token=" + readToken, header: writer, want: 400},
		{name: "the token in the query of a create", method: "POST", target: "/api/users?access_token=" + writeToken, header: writerJSON,
			body: `{"name":"Eve","email":"eve@example.com"}`, want: 400},
		{name: "the token as a query value to sort", method: "GET", target: "/api/users?sort=" + writeToken, header: writer, want: 400},
		{name: "the token as a page", method: "GET", target: "/api/users?page=" + writeToken, header: writer, want: 400},
		{name: "the token in If-Match", method: "DELETE", target: annPath, header: hardeningHeaders(writer, http.Header{"If-Match": {`"` + writeToken + `"`}}), want: 412},
		{name: "the token on a 404", method: "GET", target: "/api/nothing", header: writer, want: 404},
		{name: "the token on a 405", method: "DELETE", target: "/api/users", header: writer, want: 405},
		{name: "the token on a 501", method: "TRACE", target: "/api/users", header: writer, want: 501},
		{name: "the token on OPTIONS", method: "OPTIONS", target: annPath, header: writer, want: 204},
		{name: "the token on /healthz", method: "GET", target: "/healthz", header: writer, want: 200},
	}
}

// Tokens never reach a log line, an error message, or any answer (docs/api.md, "Authentication"),
// in either log format; each request is one line.
func TestTokensNeverReachTheLogOrAnAnswer(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			ts, send := newHardeningService(t, format)
			ann, _, _ := send.seed(t)
			for _, c := range hardeningTokenRequests(ann) {
				linesBefore := strings.Count(ts.log.String(), "\n")
				w := hardeningServe(ts, c)
				if w.Code != c.want {
					t.Errorf("%s: status %d, want %d", c.name, w.Code, c.want)
				}
				for _, secret := range hardeningSecrets {
					if strings.Contains(w.Body.String(), secret) {
						t.Errorf("%s: the answer's body holds a token: %s", c.name, w.Body)
					}
					for name, values := range w.Header() {
						if strings.Contains(strings.Join(values, ", "), secret) {
							t.Errorf("%s: the answer's %s holds a token: %q", c.name, name, values)
						}
					}
				}
				if lines := strings.Count(ts.log.String(), "\n") - linesBefore; lines != 1 {
					t.Errorf("%s: %d log lines, want 1", c.name, lines)
				}
			}
			for _, secret := range hardeningSecrets {
				if strings.Contains(ts.log.String(), secret) {
					t.Fatalf("the log holds a token:\n%s", ts.log)
				}
			}
		})
	}
}

// Request values are logged as data: a path, header or id holding a newline, quotes or escape
// codes cannot start a log line of its own or pass for another field. One request, one line.
func TestRequestValuesCannotForgeLogLines(t *testing.T) {
	forged := []hardeningRequest{
		{name: "a newline in the path", target: "/api/users/1%0Atime=2000-01-01%20level=ERROR%20msg=forged"},
		{name: "a carriage return in the path", target: "/api/users/1%0D%0Alevel=ERROR"},
		{name: "quotes in the path", target: `/api/users/%22%20status=200%20x=%22`},
		{name: "a JSON break-out in the path", target: `/api/users/%22,%22level%22:%22ERROR`},
		{name: "an escape code in the path", target: "/api/users/%1B%5B31mred"},
		{name: "a line separator in the path", target: "/api/users/1%E2%80%A8level=ERROR"},
		{name: "a NUL in the path", target: "/api/%00level=ERROR"},
		{name: "invalid UTF-8 in the path", target: "/api/users/%FF%FE"},
		{name: "a newline in X-Request-Id", target: "/api/users", header: http.Header{"X-Request-Id": {"a\nlevel=ERROR msg=forged"}}},
		{name: "quotes in X-Request-Id", target: "/api/users", header: http.Header{"X-Request-Id": {`a" level="ERROR`}}},
		{name: "an unknown method", method: "FORGED", target: "/api/users"},
		{name: "a newline in a field name", method: "POST", target: "/api/users", header: hardeningJSON,
			body: `{"x\nlevel=ERROR":1}`},
		{name: "a newline in a query name", target: "/api/users?x%0Alevel=ERROR=1"},
	}
	// parseTextLine reads a line of slog's text format: key=value pairs separated by spaces, where
	// a value is either Go-quoted or has no space, quote or equals sign in it.
	parseTextLine := func(line string) (keys []string, values map[string]string, err error) {
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
	// JSON handler does (strings.ToValidUTF8 would replace a run of them with one).
	replaceInvalidBytes := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r) // utf8.RuneError is U+FFFD
			i += size
		}
		return b.String()
	}
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			ts, send := newHardeningService(t, format)
			send.seed(t)
			for _, c := range forged {
				if c.method == "" {
					c.method = "GET"
				}
				c.header = hardeningHeaders(c.header, hardeningWriter)
				before := ts.log.String()
				w := hardeningServe(ts, c)
				if w.Code >= 500 && w.Code != http.StatusNotImplemented {
					t.Errorf("%s: status %d", c.name, w.Code)
				}
				line := strings.TrimPrefix(ts.log.String(), before)
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
				keys, values, err := parseTextLine(line)
				if err != nil {
					t.Errorf("%s: %v in the line %s", c.name, err, line)
					continue
				}
				if !slices.Equal(keys, []string{"time", "level", "msg", "method", "path", "status", "bytes", "duration_ms", "request_id"}) ||
					values["level"] != "INFO" || values["msg"] != "request" || values["method"] != c.method ||
					values["path"] != wantPath || values["request_id"] != requestID {
					t.Errorf("%s: the line reads as %q = %q", c.name, keys, values)
				}
			}
		})
	}
}
