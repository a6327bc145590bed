package main

// Hardening (README, "What it withstands"). A reference server gets copied into places where
// anyone can reach it, so these tests prove that it keeps working whatever it is sent:
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
// What needs a real connection runs the whole program (startProgram, or startWith with shorter
// time-outs); the rest goes through the handler. The fuzz targets look for what these tables did
// not think of. The helpers this file declares have "hardening" in their names.

import (
	"bufio"
	"bytes"
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
	"path/filepath"
	"regexp"
	"runtime"
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

// hardeningOverHTTP sends requests to a running program.
func hardeningOverHTTP(t testing.TB, baseURL string) hardeningClient {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	t.Cleanup(client.CloseIdleConnections)
	return func(method, target, body string, header http.Header) (int, []byte) {
		request, err := http.NewRequest(method, baseURL+target, strings.NewReader(body))
		if err != nil {
			t.Error(err)
			return 0, nil
		}
		request.Header = hardeningHeaders(header)
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

// hardeningEventually polls until done reports true, and fails the test if it has not within the
// time given.
func hardeningEventually(t testing.TB, within time.Duration, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		<-tick.C
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
// A real connection: what net/http itself does with hostile bytes, and slow, stuck and greedy
// clients.

// hardeningSendRaw sends bytes as they are and reads the first answer, with its body.
func hardeningSendRaw(t testing.TB, addr, request string) (*http.Response, []byte) {
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
	return response, body
}

// hardeningAddr is the host:port of a running program.
func hardeningAddr(p *program) string {
	return strings.TrimPrefix(p.url, "http://")
}

// Bytes that net/http rejects before any handler runs get its own answer (docs/api.md,
// "Responses", exempts those from the JSON body; its only 5xx are 501 for an unknown transfer
// coding and 505 for an unknown version); whatever reaches the handler gets the JSON error body.
// None changes the store.
func TestHostileBytesOnTheWireGetA4xx(t *testing.T) {
	auth := "Authorization: Bearer " + writeToken + "\r\n"
	post := "POST /api/users HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json\r\n"
	eve := `{"name":"Eve","email":"eve@example.com"}`
	cases := []struct {
		name    string
		request string // {ann} stands for the path of Ann, whom the service holds
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
		{"GET with the asterisk-form target", "GET * HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", hardeningAnyClientError, true},
		{"DELETE with the asterisk-form target", "DELETE * HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", hardeningAnyClientError, true},
		{"PRI * over HTTP 1.1", "PRI * HTTP/1.1\r\nHost: x\r\n\r\n", hardeningAnyClientError, true},
		{"CONNECT with the authority-form target", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n" + auth + "\r\n", hardeningAnyClientError, true},
		{"an absolute URI with no path", "GET http://x HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", hardeningRedirect, false},
		{"a lower-case method", "get /api/users HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 501, true},
		{"TRACE", "TRACE /api/users HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 501, true},
		{"an absolute URI naming another host", "DELETE http://evil.example{ann}?x HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 400, true},
		{"Content-Length and Transfer-Encoding", post + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, false},
		{"two different Content-Lengths", post + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n{}", 400, false},
		{"a negative Content-Length", post + "Content-Length: -1\r\n\r\n", 400, false},
		{"an unknown transfer coding", post + "Transfer-Encoding: gzip\r\n\r\n", 501, false},
		{"a malformed chunk size", post + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", 400, true},
		{"a chunk longer than it says", post + "Transfer-Encoding: chunked\r\n\r\n2\r\n" + eve + "\r\n0\r\n\r\n", 400, true},
		{"a chunked valid user followed by garbage", post + "Transfer-Encoding: chunked\r\n\r\n" +
			strconv.FormatInt(int64(len(eve)+1), 16) + "\r\n" + eve + "x\r\n0\r\n\r\n", 400, true},
		{"a declared length of 1 MiB + 1", post + "Content-Length: 1048577\r\n\r\n" + eve, 413, true},
		{"a declared length of 2^63-1", post + "Content-Length: 9223372036854775807\r\n\r\n" + eve, 413, true},
		{"a declared length beyond int64", post + "Content-Length: 99999999999999999999\r\n\r\n", 400, false},
		{"Expect 100-continue with 10 MiB", post + "Content-Length: 10485760\r\nExpect: 100-continue\r\n\r\n", 413, true},
		{"an unknown Expect", post + "Content-Length: 2\r\nExpect: 200-ok\r\n\r\n{}", 417, false},
		{"a body the length does not cover", post + "Content-Length: 2\r\n\r\n" + eve, 400, true},
	}
	// One program, holding Ann, Bob and Cy, takes the cases in turn, as in the battery above.
	p := startProgram(t, testEnv)
	send := hardeningOverHTTP(t, p.url)
	ann, _, cy := send.seed(t)
	before, nextID := send.snapshot(t), cy.ID+1
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			answer, body := hardeningSendRaw(t, hardeningAddr(p), strings.ReplaceAll(c.request, "{ann}", userPath(ann.ID)))
			switch c.want {
			case hardeningAnyClientError:
				if answer.StatusCode < 400 || answer.StatusCode > 499 {
					t.Fatalf("status %d, want a 4xx", answer.StatusCode)
				}
			case hardeningRedirect:
				if answer.StatusCode != http.StatusPermanentRedirect {
					t.Fatalf("status %d, want a redirect", answer.StatusCode)
				}
			default:
				if answer.StatusCode != c.want {
					t.Fatalf("status %d, want %d; body %.300s", answer.StatusCode, c.want, body)
				}
			}
			if c.json {
				hardeningWantErrorBody(t, answer.Header, body)
			}
			nextID = send.requireUnchanged(t, before, nextID)
		})
	}
}

// hardeningStartWith runs the program with the test tokens and these flags, after change has set
// what the test needs in its configuration: shorter time-outs, say.
func hardeningStartWith(t *testing.T, change func(*config), flags ...string) *program {
	t.Helper()
	cfg := testConfig(t, flags...)
	change(cfg)
	return startWith(t, cfg)
}

// A flood of clients that send their headers a byte at a time is cut off at the read-header
// time-out, while every other client is served as fast as ever (README, "What it withstands").
func TestSlowHeaderFloodIsCutOffWithoutSlowingOthers(t *testing.T) {
	if testing.Short() {
		t.Skip("a time-out test: it waits for the read-header time-out")
	}
	const (
		flood             = 200
		readHeaderTimeout = 500 * time.Millisecond
	)
	p := hardeningStartWith(t, func(cfg *config) {
		cfg.timeouts.readHeader, cfg.timeouts.read, cfg.timeouts.write = readHeaderTimeout, time.Second, 2*time.Second
	})
	send := hardeningOverHTTP(t, p.url)
	ann, _, _ := send.seed(t)

	slow := make([]net.Conn, flood)
	for i := range slow {
		conn, err := net.Dial("tcp", hardeningAddr(p))
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		defer conn.Close()
		slow[i] = conn
	}
	start := time.Now()
	// Each slow client sends one byte of a request every 50 ms: never the whole header in time.
	partial := "GET /api/users HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + writeToken + "\r\nX-Slow: "
	stopFeeding := make(chan struct{})
	var feeding sync.WaitGroup
	feeding.Add(1)
	go func() {
		defer feeding.Done()
		ticker := time.NewTicker(50 * time.Millisecond)
		defer ticker.Stop()
		for i := 0; ; i++ {
			for _, conn := range slow {
				conn.SetWriteDeadline(time.Now().Add(25 * time.Millisecond))
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

	// Meanwhile, other clients are served, each on a new connection, every 20 ms.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	var slowest time.Duration
	pace := time.NewTicker(20 * time.Millisecond)
	defer pace.Stop()
	for ; time.Since(start) < readHeaderTimeout+250*time.Millisecond; <-pace.C {
		began := time.Now()
		request, _ := http.NewRequest("GET", p.url+userPath(ann.ID), nil)
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
	}

	waiting.Wait()
	for i, after := range closedAfter {
		if after < 0 {
			t.Fatalf("slow connection %d was still open %v after the read-header time-out", i, 4*time.Second)
		}
	}
	t.Run("others not held up, the slow cut off at the time-out", func(t *testing.T) {
		if testing.Short() {
			t.Skip("wall-clock bounds")
		}
		// Held up by the flood, a client would wait for the time-out; a loaded test machine is far
		// faster.
		if slowest > readHeaderTimeout*3/4 {
			t.Errorf("a client during the flood waited %v: the flood held it up", slowest)
		}
		for i, after := range closedAfter {
			if after < readHeaderTimeout-100*time.Millisecond {
				t.Fatalf("slow connection %d was closed after %v, before the read-header time-out", i, after)
			}
		}
	})
}

// A client that sends its body a byte at a time is cut off at the read time-out: it gets a 400
// with the JSON error body, and nothing changes.
func TestSlowBodyIsCutOffAtTheReadTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("a time-out test: it waits for the read time-out")
	}
	const readTimeout = 300 * time.Millisecond
	p := hardeningStartWith(t, func(cfg *config) {
		cfg.timeouts.readHeader, cfg.timeouts.read, cfg.timeouts.write = readTimeout, readTimeout, 4*time.Second
	})
	send := hardeningOverHTTP(t, p.url)
	_, _, cy := send.seed(t)
	before := send.snapshot(t)

	conn, err := net.Dial("tcp", hardeningAddr(p))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	eve := `{"name":"Eve","email":"eve@example.com"}`
	fmt.Fprintf(conn, "POST /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", writeToken, len(eve))
	stopFeeding := make(chan struct{})
	defer close(stopFeeding)
	go func() {
		drip := time.NewTicker(50 * time.Millisecond) // a byte every 50 ms: 2 s for the whole body
		defer drip.Stop()
		for i := 0; i < len(eve); i++ {
			select {
			case <-stopFeeding:
				return
			case <-drip.C:
			}
			if _, err := conn.Write([]byte{eve[i]}); err != nil {
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
	body, _ := io.ReadAll(response.Body)
	if response.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want 400 for a body that did not arrive in time; body %s", response.StatusCode, body)
	}
	hardeningWantErrorBody(t, response.Header, body)
	t.Run("cut off at the read time-out", func(t *testing.T) {
		if testing.Short() {
			t.Skip("a wall-clock bound")
		}
		if elapsed < readTimeout-100*time.Millisecond || elapsed > readTimeout+3*time.Second {
			t.Fatalf("the slow body was cut off after %v, want about the read time-out, %v", elapsed, readTimeout)
		}
	})
	send.requireUnchanged(t, before, cy.ID+1)
}

// A client that asks for big answers and never reads them holds only its own connection: while
// the server is stuck writing to it, every other request, writes included, is served at once.
// (The list is written without holding the store's lock: README, "What it withstands".)
func TestClientThatNeverReadsBlocksNoOne(t *testing.T) {
	// A data file of 10,000 users, whose list is about 600 KB.
	document := fileDocument{NextID: 10001}
	for i := 1; i <= 10000; i++ {
		document.Users = append(document.Users, user{ID: int64(i), Name: fmt.Sprintf("User %d", i), Email: fmt.Sprintf("user%d@example.com", i)})
	}
	data, err := json.Marshal(document)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	first := document.Users

	const writeTimeout = 6 * time.Second // what a request held up behind the stuck writer would wait
	p := hardeningStartWith(t, func(cfg *config) { cfg.timeouts.write = writeTimeout }, "-data", file, "-log-format", "json")

	stuck, err := net.Dial("tcp", hardeningAddr(p))
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
	answeredStuck := func() int {
		n := 0
		for _, record := range p.stderr.records(t, "request") {
			if id, _ := record["request_id"].(string); strings.HasPrefix(id, "stuck-") {
				n++
			}
		}
		return n
	}
	// Nothing shows a write that blocks, but the log shows the answers written: once their count
	// has stopped growing for 100 ms, the server is stuck writing to that connection.
	last, still := -1, 0
	hardeningEventually(t, 10*time.Second, "the answers to the client that does not read to stop", func() bool {
		n := answeredStuck()
		if n > 0 && n == last {
			still++
		} else {
			still = 0
		}
		last = n
		return still >= 10
	})

	client := &http.Client{Timeout: 5 * time.Second}
	writerJSON := hardeningHeaders(hardeningWriter, hardeningJSON)
	var slowest time.Duration
	for _, c := range []struct {
		method, target, body string
		header               http.Header
		want                 int
	}{
		{"POST", "/api/users", `{"name":"Eve","email":"eve@example.com"}`, writerJSON, 201},
		{"PUT", userPath(first[0].ID), `{"name":"Ann","email":"ann@example.com"}`, writerJSON, 200},
		{"PATCH", userPath(first[1].ID), `{"name":"Bob"}`, writerJSON, 200},
		{"DELETE", userPath(first[2].ID), "", hardeningWriter, 204},
		{"GET", "/api/users", "", hardeningReader, 200},
		{"GET", "/api/users?page=3&per_page=5", "", hardeningReader, 200},
		{"GET", userPath(first[0].ID), "", hardeningReader, 200},
	} {
		began := time.Now()
		request, _ := http.NewRequest(c.method, p.url+c.target, strings.NewReader(c.body))
		request.Header = hardeningHeaders(c.header)
		response, err := client.Do(request)
		if err != nil {
			t.Fatalf("%s %s while a client is stuck: %v", c.method, c.target, err)
		}
		io.Copy(io.Discard, response.Body)
		response.Body.Close()
		if response.StatusCode != c.want {
			t.Fatalf("%s %s while a client is stuck: status %d, want %d", c.method, c.target, response.StatusCode, c.want)
		}
		slowest = max(slowest, time.Since(began))
	}
	if answered := answeredStuck(); answered >= pipelined {
		t.Fatalf("all %d answers to the stuck client were written: the test did not get it stuck", answered)
	}
	t.Run("at once", func(t *testing.T) {
		if testing.Short() {
			t.Skip("a wall-clock bound")
		}
		if slowest > writeTimeout/2 {
			t.Fatalf("a request waited %v behind a client that does not read", slowest)
		}
	})
}

// Bodies past 1 MiB are refused as soon as that is known, whatever their size and however they
// are sent, without the server holding them: it reads at most a bounded prefix, answers at once,
// and its memory stays flat.
func TestBigBodiesAreRefusedAtOnceWithFlatMemory(t *testing.T) {
	p := startProgram(t, testEnv)
	send := hardeningOverHTTP(t, p.url)
	_, _, cy := send.seed(t)
	before := send.snapshot(t)
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

			status, sent := hardeningStreamBody(t, hardeningAddr(p), c.size, c.declared)

			elapsed := time.Since(began)
			runtime.ReadMemStats(&memory)
			if status != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413", status)
			}
			if c.size > 32<<20 && sent > 32<<20 {
				t.Fatalf("the client could send %d MiB before the 413: the server kept reading", sent>>20)
			}
			t.Run("at once, with flat memory", func(t *testing.T) {
				if testing.Short() {
					t.Skip("wall-clock and memory bounds")
				}
				if elapsed > 5*time.Second {
					t.Errorf("the 413 took %v", elapsed)
				}
				if allocated := memory.TotalAlloc - allocatedBefore; allocated > 48<<20 {
					t.Errorf("refusing the body allocated %d MiB", allocated>>20)
				}
			})
		})
	}
	send.requireUnchanged(t, before, cy.ID+1)
}

// hardeningStreamBody sends a POST with a body of size bytes, generated as it goes, and reads the
// answer while it sends. It returns the status and how many bytes of body the client got to send.
func hardeningStreamBody(t *testing.T, addr string, size int64, declared bool) (status int, sent int64) {
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
	body, _ := io.ReadAll(response.Body)
	if response.StatusCode >= 400 {
		hardeningWantErrorBody(t, response.Header, body)
	}
	conn.Close()
	<-sending
	return response.StatusCode, sent
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

// The same with -data, over HTTP, through the whole program: the writes take turns, each in the
// journal before it is answered, and what the clients were last shown is what a restart finds.
func TestConcurrentClientsKeepTheJournalledStoreConsistent(t *testing.T) {
	file := filepath.Join(t.TempDir(), "users.jsonl")
	p := startProgram(t, testEnv, "-data", file)
	send := hardeningOverHTTP(t, p.url)
	ledger := hardeningRunLoad(t, send, 8, 60)
	final := hardeningCheckAfterLoad(t, send, ledger)
	if err := p.stop(); err != nil {
		t.Fatalf("the program stopped with %v", err)
	}

	restarted := startProgram(t, testEnv, "-data", file)
	if _, body := hardeningOverHTTP(t, restarted.url)("GET", "/api/users", "", hardeningReader); string(body) != final {
		t.Fatalf("after a restart the store is\n%s\nbut the clients were last shown\n%s", body, final)
	}
}

// ---------------------------------------------------------------------------------------------
// Stopping, as SIGTERM or SIGINT stops the program: startProgram's stop ends start's context.

// SIGTERM with a request in flight: new connections are refused at once, the request finishes
// with its answer, and start returns nil (exit status 0) only then. The request here is an upload
// still arriving when SIGTERM comes.
func TestShutdownLetsRequestsInFlightFinishAndRefusesNewOnes(t *testing.T) {
	p := startProgram(t, testEnv)
	conn, err := net.Dial("tcp", hardeningAddr(p))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	eve := `{"name":"Eve","email":"eve@example.com"}`
	fmt.Fprintf(conn, "POST /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Content-Length: %d\r\nExpect: 100-continue\r\n\r\n%s", writeToken, len(eve), eve[:10])
	answers := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if proceed, err := http.ReadResponse(answers, nil); err != nil || proceed.StatusCode != http.StatusContinue {
		t.Fatalf("want 100 Continue, which says the handler reads the body: %v", err)
	}

	stopped := make(chan error, 1)
	go func() { stopped <- p.stop() }()
	hardeningEventually(t, 2*time.Second, "new connections refused after SIGTERM", func() bool {
		probe, err := net.DialTimeout("tcp", hardeningAddr(p), 100*time.Millisecond)
		if err == nil {
			probe.Close()
		}
		return err != nil
	})
	// The upload is unfinished, so the program must not stop: give it time to do so wrongly.
	select {
	case err := <-stopped:
		t.Fatalf("the program stopped with %v while a request was in flight", err)
	case <-time.After(100 * time.Millisecond):
	}

	io.WriteString(conn, eve[10:])
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	response, err := http.ReadResponse(answers, nil)
	if err != nil {
		t.Fatalf("the request in flight got no answer: %v", err)
	}
	if response.StatusCode != http.StatusCreated {
		t.Fatalf("the request in flight got status %d, want 201", response.StatusCode)
	}
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("the program stopped with %v, want nil (exit status 0)", err)
		}
	case <-time.After(11 * time.Second):
		t.Fatal("the program did not stop within its 10 s bound after its last request")
	}
}

// -delay may be as long as the shutdown bound, or longer. A request that arrives just before
// SIGTERM must still be answered, and start must still return nil (exit status 0) within its
// bound: a stopping server has no reason to wait out a delay that exists only for demos.
func TestShutdownDoesNotWaitOutTheLongestDelay(t *testing.T) {
	const bound = time.Second // far shorter than the delay
	p := hardeningStartWith(t, func(cfg *config) { cfg.timeouts.shutdown = bound }, "-delay", "10s")
	conn, err := net.Dial("tcp", hardeningAddr(p))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", readToken)
	// Nothing the server sends can show that a request is in its -delay: the delay's point is that
	// nothing comes. 20 ms lets the server read the request first.
	time.Sleep(20 * time.Millisecond)

	if err := p.stop(); err != nil {
		t.Fatalf("the program stopped with %q: with -delay 10s a request in flight outlasts the %v shutdown bound "+
			"(and main would exit 1, cutting the request off)", err, bound)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	response, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || response.StatusCode != http.StatusOK {
		t.Fatalf("the request in flight got %v, %v; want 200", response, err)
	}
}

// SIGTERM while many clients are busy: every answer given is a success, never a 5xx; start returns
// nil within its bound; and with -data, every create that was answered 201 is there after a
// restart.
func TestShutdownUnderLoadExitsCleanly(t *testing.T) {
	for _, storage := range []struct{ name, dataFile string }{
		{"in memory", ""},
		{"with -data", filepath.Join(t.TempDir(), "users.jsonl")},
	} {
		t.Run(storage.name, func(t *testing.T) {
			flags := []string{"-delay", "100ms"}
			if storage.dataFile != "" {
				flags = append(flags, "-data", storage.dataFile)
			}
			p := startProgram(t, testEnv, flags...)
			const workers = 16
			client := &http.Client{Timeout: 5 * time.Second}
			var answered, refusedAfterStop atomic.Int64
			var stopped atomic.Bool
			busy := make(chan struct{}) // closed once the clients have had as many answers as they are
			var busyOnce sync.Once
			var acknowledged sync.Map // id of every 201
			var wg sync.WaitGroup
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for i := 0; ; i++ {
						method, body := "GET", ""
						if i%2 == 0 {
							method, body = "POST", fmt.Sprintf(`{"name":"W%d","email":"w%d.%d@example.com"}`, w, w, i)
						}
						request, _ := http.NewRequest(method, p.url+"/api/users", strings.NewReader(body))
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
						if answered.Add(1) == workers {
							busyOnce.Do(func() { close(busy) })
						}
					}
				}(w)
			}
			select {
			case <-busy:
			case <-time.After(10 * time.Second):
				t.Errorf("only %d requests were answered in 10 s: the load did not happen", answered.Load())
			}
			stopped.Store(true)
			if err := p.stop(); err != nil {
				t.Fatalf("the program stopped with %v, want nil", err)
			}
			wg.Wait()
			if refusedAfterStop.Load() != workers {
				t.Fatalf("%d of %d clients were refused after the stop", refusedAfterStop.Load(), workers)
			}
			if storage.dataFile == "" {
				return
			}
			restarted := startProgram(t, testEnv, "-data", storage.dataFile)
			status, body := hardeningOverHTTP(t, restarted.url)("GET", "/api/users", "", hardeningReader)
			list, _ := hardeningCheckList(t, status, body, 0)
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
			ts := serverOn(t, store, testConfig(t))
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

// The same, for the program as it runs: nothing it logs, from its start to its stop, holds a
// token, even net/http's own error log; and a generated token is shown only in the start-up notice.
func TestTokensNeverReachTheLogOfTheRunningServer(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			p := startProgram(t, testEnv, "-log-format", format)
			send := hardeningOverHTTP(t, p.url)
			ann := send.create(t, "Ann", "ann@example.com")
			for _, c := range hardeningTokenRequests(ann) {
				if status, _ := send(c.method, c.target, c.body, c.header); status != c.want {
					t.Errorf("%s: status %d, want %d", c.name, status, c.want)
				}
			}
			hardeningSendRaw(t, hardeningAddr(p),
				"GET /api/users?access_token="+writeToken+" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+writeToken+"\r\nX-A: a\x00\r\n\r\n")
			if err := p.stop(); err != nil {
				t.Fatal(err)
			}
			for _, secret := range hardeningSecrets {
				if strings.Contains(p.stderr.String(), secret) {
					t.Fatalf("the log holds a token:\n%s", p.stderr)
				}
			}
		})
	}
	t.Run("generated tokens", func(t *testing.T) {
		p := startProgram(t, func(string) string { return "" }) // no USERS_TOKENS: the program makes two
		notice := p.stderr.String()
		tokens := regexp.MustCompile(`(?m)^  (write|read) token: +([0-9a-f]{32})$`).FindAllStringSubmatch(notice, -1)
		if len(tokens) != 2 {
			t.Fatalf("no generated tokens in the notice:\n%s", notice)
		}
		send := hardeningOverHTTP(t, p.url)
		for _, token := range tokens {
			header := http.Header{"Authorization": {"Bearer " + token[2]}}
			if status, _ := send("GET", "/api/users?access_token="+token[2], "", header); status != 400 {
				t.Fatalf("the %s token: status %d, want 400 for the unknown query parameter", token[1], status)
			}
		}
		if err := p.stop(); err != nil {
			t.Fatal(err)
		}
		for _, token := range tokens {
			if before, after := strings.Count(notice, token[2]), strings.Count(p.stderr.String(), token[2]); after != before {
				t.Fatalf("the %s token is printed %d times after requests, %d times in the notice alone", token[1], after, before)
			}
		}
	})
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
