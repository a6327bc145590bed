package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The rules of middleware.go, what every request goes through before its route (docs/api.md,
// "Responses" and "Browsers (CORS)"; README, "Configuration" and "What it withstands"): the request
// id, nosniff, Vary and Cache-Control, the access log, panics, CORS and -delay.

// Every answer carries X-Content-Type-Options: nosniff and an X-Request-Id, which the access log
// shows too: the client's own when it is 1 to 64 characters of A-Z a-z 0-9 . _ -, otherwise a
// fresh one, new for every request. The cases cover every kind of path and answer.
func TestEveryAnswerCarriesNosniffAndARequestID(t *testing.T) {
	sixtyFour := strings.Repeat("a", 64)
	tests := []struct {
		name, method, target string
		sent                 []string // the X-Request-Id header lines sent
		echoed               bool
	}{
		{"letters, digits, dot, underscore, dash", "GET", "/api/users", []string{"Abc-123_x.Z"}, true},
		{"64 characters", "GET", "/healthz", []string{sixtyFour}, true},
		{"65 characters", "GET", "/", []string{sixtyFour + "a"}, false},
		{"a space", "GET", "/nothing", []string{"abc def"}, false},
		{"a colon", "OPTIONS", "/api/users", []string{"trace:1"}, false},
		{"a newline", "GET", "/api/users", []string{"a\nlevel=ERROR"}, false},
		{"a letter outside ASCII", "GET", "/assets/app.css", []string{"caf\u00e9"}, false},
		{"empty", "GET", "/openapi.json", []string{""}, false},
		{"none", "DELETE", "/api/users/1", nil, false},
	}
	ts := newTestServer(t)
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.target, nil)
			for _, id := range tt.sent {
				r.Header.Add("X-Request-Id", id)
			}
			w := ts.serve(r)
			id := w.Header().Get("X-Request-Id")
			switch {
			case tt.echoed && id != tt.sent[0]:
				t.Errorf("X-Request-Id %q, want the client's %q", id, tt.sent[0])
			case !tt.echoed && (id == "" || len(tt.sent) > 0 && id == tt.sent[0] || seen[id]):
				t.Errorf("X-Request-Id %q, want a fresh one of the server's", id)
			}
			seen[id] = true
			if got := w.Header().Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("%d answer with X-Content-Type-Options %q, want nosniff", w.Code, got)
			}
			if records := ts.log.records("request"); len(records) == 0 || records[len(records)-1]["request_id"] != id {
				t.Errorf("the access log has %v, want its last record to show the id %q", records, id)
			}
		})
	}
}

// Every answer under /api/, OPTIONS and errors included, carries Vary: Authorization (what it
// says depends on who asks) and Cache-Control: no-store; only the 200s and 304s of GET and HEAD
// may be kept, by a private cache that asks first. Other paths are not bound by this.
func TestAPIAnswersVaryByAuthorizationAndAreNotStored(t *testing.T) {
	tests := []struct {
		name, method, target, token string
		header                      map[string]string
		status                      int
		cacheControl                string // "" for a path this rule does not bind
	}{
		{"200 GET", "GET", "/api/users/1", readToken, nil, 200, "private, no-cache"},
		{"304 GET", "GET", "/api/users/1", readToken, map[string]string{"If-None-Match": "*"}, 304, "private, no-cache"},
		{"201 POST", "POST", "/api/users", writeToken, map[string]string{"Content-Type": "application/json"}, 201, "no-store"},
		{"204 OPTIONS", "OPTIONS", "/api/users", "", nil, 204, "no-store"},
		{"400 query", "GET", "/api/users?page=0", readToken, nil, 400, "no-store"},
		{"401", "GET", "/api/users/1", "", nil, 401, "no-store"},
		{"403", "DELETE", "/api/users/1", readToken, nil, 403, "no-store"},
		{"404 path", "GET", "/api/nothing", readToken, nil, 404, "no-store"},
		{"405", "DELETE", "/api/users", writeToken, nil, 405, "no-store"},
		{"412 GET", "GET", "/api/users/1", readToken, map[string]string{"If-Match": `"old"`}, 412, "no-store"},
		{"/healthz", "GET", "/healthz", "", nil, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t)
			ts.create(t, "Ann", "ann@example.com")
			r := httptest.NewRequest(tt.method, tt.target, strings.NewReader(`{"name":"Bob","email":"bob@example.com"}`))
			if tt.token != "" {
				r.Header.Set("Authorization", "Bearer "+tt.token)
			}
			for name, value := range tt.header {
				r.Header.Set(name, value)
			}
			w := ts.serve(r)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			underAPI := tt.cacheControl != ""
			if varies := listed(w.Header().Values("Vary"), "Authorization"); varies != underAPI {
				t.Errorf("Vary %q: names Authorization %v, want %v", w.Header().Values("Vary"), varies, underAPI)
			}
			if got := w.Header().Get("Cache-Control"); underAPI && got != tt.cacheControl {
				t.Errorf("Cache-Control %q, want %q", got, tt.cacheControl)
			}
		})
	}
}

// The access log has one record per request (README, "Configuration"), in either format: method,
// path (never the query: RFC 6750 §2.3 lets clients put a token there), status, the bytes of the
// body sent (none for HEAD, whose body net/http drops), duration_ms as a number, and the request id.
func TestAccessLogRecordsEachRequest(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			ts := newTestServer(t, "-log-format", format)
			ts.create(t, "Ann", "ann@example.com")
			for _, method := range []string{"GET", "HEAD"} {
				r := httptest.NewRequest(method, "/api/users?q=ann", nil)
				r.Header.Set("Authorization", "Bearer "+readToken)
				r.Header.Set("X-Request-Id", "trace-"+method)
				w := ts.serve(r)
				lines := strings.Split(strings.TrimSpace(ts.log.String()), "\n")
				record := logRecord(t, format, lines[len(lines)-1])
				bytes := strconv.Itoa(w.Body.Len())
				if method == "HEAD" {
					bytes = "0"
				}
				want := map[string]string{"msg": "request", "method": method, "path": "/api/users", "status": "200", "bytes": bytes, "request_id": "trace-" + method}
				for key, value := range want {
					if record[key] != value {
						t.Errorf("%s: %s=%q, want %q", method, key, record[key], value)
					}
				}
				if _, err := strconv.ParseFloat(record["duration_ms"], 64); err != nil {
					t.Errorf("%s: duration_ms=%q, want a number of milliseconds", method, record["duration_ms"])
				}
			}
			if strings.Contains(ts.log.String(), "q=ann") {
				t.Errorf("the log shows the query:\n%s", ts.log)
			}
		})
	}
}

// Tokens never reach a log record, an error message or a header of an answer (docs/api.md,
// "Authentication"), wherever a client puts them, in either log format: the Authorization header,
// the query (RFC 6750 §2.3), even one that cannot be parsed, or If-Match.
func TestTokensNeverReachTheLogOrAnAnswer(t *testing.T) {
	const unknownToken = "unknown-s3cr3t-0123456789"
	tests := []struct {
		name, method, target, authorization string
		header                              map[string]string
		status                              int
	}{
		{"the write token", "GET", "/api/users", writeToken, nil, 200},
		{"the read token on a write", "DELETE", "/api/users/1", readToken, nil, 403},
		{"an unknown token", "GET", "/api/users", unknownToken, nil, 401},
		{"a token in the query alone", "GET", "/api/users?access_token=" + writeToken, "", nil, 401},
		{"a token in the query of the list", "GET", "/api/users?access_token=" + readToken, writeToken, nil, 400},
		{"a token in a query that cannot be parsed", "GET", "/api/users?access_token=" + readToken + ";", writeToken, nil, 400},
		{"a token in the query of a user", "GET", "/api/users/1?access_token=" + readToken, writeToken, nil, 200},
		{"a token in If-Match", "DELETE", "/api/users/1", writeToken, map[string]string{"If-Match": `"` + readToken + `"`}, 412},
		{"a token on OPTIONS", "OPTIONS", "/api/users/1", writeToken, nil, 204},
	}
	for _, format := range []string{"json", "text"} {
		for _, tt := range tests {
			t.Run(format+" "+tt.name, func(t *testing.T) {
				ts := newTestServer(t, "-log-format", format)
				ts.create(t, "Ann", "ann@example.com")
				r := httptest.NewRequest(tt.method, tt.target, nil)
				if tt.authorization != "" {
					r.Header.Set("Authorization", "Bearer "+tt.authorization)
				}
				for name, value := range tt.header {
					r.Header.Set(name, value)
				}
				w := ts.serve(r)
				if w.Code != tt.status {
					t.Errorf("status %d, want %d: %s", w.Code, tt.status, w.Body)
				}
				answer := fmt.Sprint(w.Header()) + w.Body.String()
				for _, secret := range []string{writeToken, readToken, unknownToken} {
					if strings.Contains(answer, secret) || strings.Contains(ts.log.String(), secret) {
						t.Errorf("a token is shown:\n%s\n%s", answer, ts.log)
					}
				}
			})
		}
	}
}

// Request values are logged as data: a path holding a newline or quotes cannot start a log line
// of its own or pass for another field. One request, one line, in either format.
func TestRequestValuesCannotForgeLogLines(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		for _, target := range []string{
			"/api/users/1%0Atime=2000-01-01%20level=ERROR%20msg=forged",
			`/api/users/%22%20status=200%20x=%22`,
			`/api/%22,%22level%22:%22ERROR`,
		} {
			ts := newTestServer(t, "-log-format", format)
			r := httptest.NewRequest("GET", target, nil)
			r.Header.Set("Authorization", "Bearer "+readToken)
			ts.serve(r)
			line := ts.log.String()
			if strings.Count(line, "\n") != 1 || logRecord(t, format, line)["path"] != r.URL.Path {
				t.Errorf("%s: the request logged %q, want one line with its path", format, line)
			}
		}
	}
}

// A panic in a handler costs its own request only (README, "What it withstands"). Before the
// answer has begun it is the JSON 500 that says nothing more; after, the status is on its way,
// so the connection is cut rather than left to look complete (http.ErrAbortHandler), and a
// handler may cut it so itself. A panic is logged once with its stack and the request's id, and
// net/http does not log it again; the access log never claims a status that was not sent; the
// server goes on. The handlers here panic inside observe, as the service's own would.
func TestPanicIsAJSON500OrCutsTheConnection(t *testing.T) {
	tests := []struct {
		name    string
		handler func(w http.ResponseWriter)
		cut     bool   // the connection is cut, rather than answered 500
		logged  int    // the status the access log shows; 0: "request got no answer"
		value   string // the panic logged; "" for none: http.ErrAbortHandler cuts on purpose
	}{
		{"a panic before the answer", func(w http.ResponseWriter) {
			panic("the store is on fire")
		}, false, http.StatusInternalServerError, "the store is on fire"},
		{"a panic after part of the body", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"data":[`)
			http.NewResponseController(w).Flush()
			panic("half an answer")
		}, true, http.StatusOK, "half an answer"},
		{"a cut before the answer is logged as no answer", func(w http.ResponseWriter) {
			panic(http.ErrAbortHandler)
		}, true, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			appLog, serverLog := &logBuffer{}, &logBuffer{}
			a := &api{log: newLogger("json", appLog), requestIDPrefix: "test-"} // what observe uses of the service
			server := httptest.NewUnstartedServer(a.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/panic" {
					tt.handler(w)
				}
				io.WriteString(w, "fine")
			})))
			server.Config.ErrorLog = log.New(serverLog, "", 0)
			server.Start()
			defer server.Close()

			resp, err := server.Client().Get(server.URL + "/panic")
			var body []byte
			if err == nil {
				body, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			switch {
			case tt.cut && err == nil:
				t.Errorf("the client read a whole answer, %d %s; want the connection cut", resp.StatusCode, body)
			case !tt.cut && err != nil:
				t.Fatal(err)
			case !tt.cut && (resp.StatusCode != 500 || resp.Header.Get("Content-Type") != "application/json" ||
				string(body) != `{"error":"internal server error"}` || resp.Header.Get("X-Request-Id") == ""):
				t.Errorf("%d %v %s; want the JSON 500, with a request id", resp.StatusCode, resp.Header, body)
			}

			panics := appLog.records("panic in handler")
			if tt.value == "" && len(panics) != 0 {
				t.Errorf("logged as a panic: %v", panics)
			}
			if tt.value != "" && len(panics) != 1 {
				t.Errorf("the panic is logged %d times, want once: %v", len(panics), panics)
			} else if tt.value != "" {
				if stack, _ := panics[0]["stack"].(string); panics[0]["panic"] != tt.value ||
					panics[0]["request_id"] == nil || !strings.Contains(stack, "middleware_test.go") {
					t.Errorf("the panic is logged as %v, want its value, the request's id and its stack", panics[0])
				}
			}
			answered, unanswered := appLog.records("request"), appLog.records("request got no answer")
			switch {
			case tt.logged != 0 && (len(answered) != 1 || answered[0]["status"] != float64(tt.logged)):
				t.Errorf("the access log has %v, want one record of the status %d", answered, tt.logged)
			case tt.logged == 0 && (len(answered) != 0 || len(unanswered) != 1):
				t.Errorf("the access log has %v and %v, want one record of a request that got no answer", answered, unanswered)
			}
			if strings.Contains(serverLog.String(), "panic") {
				t.Errorf("net/http logged the panic too:\n%s", serverLog)
			}
			next, _ := http.NewRequest("GET", server.URL+"/next", nil)
			if resp, body := roundTrip(t, server.Client(), next); resp.StatusCode != http.StatusOK {
				t.Errorf("the next request got %d %s, want 200", resp.StatusCode, body)
			}
		})
	}
}

// exposedHeaders are the headers a page must be able to read: every one docs/api.md tells a client
// to act on.
var exposedHeaders = []string{"Location", "Content-Location", "ETag", "Link", "WWW-Authenticate", "X-Request-Id", "Allow", "Accept-Post", "Accept-Patch", "Retry-After"}

// -delay holds back every answer under /api/, for demos of loading states, but a preflight's
// (README, "Configuration"); answers elsewhere are not held. Each request here comes from a
// client that has already gone (its context is done), so the test needs no clock: a request held
// back waits for its client, which ended its wait, and is never answered, and the log says so
// with no status; any other is answered at once.
func TestDelaySlowsEveryAPIAnswerButPreflights(t *testing.T) {
	tests := []struct {
		name, method, target string
		header               map[string]string
		status               int // the answer; 0: held back, so never answered
	}{
		{"a GET under /api/", "GET", "/api/users", nil, 0},
		{"an unknown path under /api/", "GET", "/api/nothing", nil, 0},
		{"a refusal: a read token's POST, 403", "POST", "/api/users", nil, 0},
		{"OPTIONS that is not a preflight", "OPTIONS", "/api/users", nil, 0},
		{"a preflight", "OPTIONS", "/api/users", map[string]string{"Origin": "http://localhost:3000", "Access-Control-Request-Method": "GET"}, 204},
		{"a preflight from an origin not listed", "OPTIONS", "/api/users", map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"}, 204},
		{"/healthz", "GET", "/healthz", nil, 200},
		{"the explorer page", "GET", "/", nil, 200},
	}
	ts := newTestServer(t, "-delay", "10s", "-cors-origin", "http://localhost:3000") // the longest delay
	gone, leave := context.WithCancel(context.Background())
	leave()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.target, nil).WithContext(gone)
			r.Header.Set("Authorization", "Bearer "+readToken)
			for name, value := range tt.header {
				r.Header.Set(name, value)
			}
			w := ts.serve(r)
			id := w.Header().Get("X-Request-Id")
			answered, unanswered := recordsOf(ts.log.records("request"), id), recordsOf(ts.log.records("request got no answer"), id)
			switch {
			case tt.status != 0 && (w.Code != tt.status || len(answered) != 1):
				t.Errorf("%d, logged as %v; want %d at once", w.Code, answered, tt.status)
			case tt.status == 0 && (w.Body.Len() != 0 || len(answered) != 0 || len(unanswered) != 1 || unanswered[0]["status"] != nil):
				t.Errorf("answered %q, logged as %v and %v; want no answer, and a record without a status", w.Body, answered, unanswered)
			}
		})
	}
}

// Under -delay the body is read before the wait, since net/http notices a client that left only
// once it has read the body, but through the handlers' own limit: a body of 2 MiB, of a length
// not declared, is read no further than 1 MiB and a byte, and answered 413 as without -delay.
func TestDelayReadsABodyNoFurtherThanTheLimit(t *testing.T) {
	ts := newTestServer(t, "-delay", "1ms")
	body := &countedBody{Reader: strings.NewReader(strings.Repeat("a", 2<<20))}
	r := httptest.NewRequest("POST", "/api/users", body)
	r.ContentLength = -1 // not declared, as for a chunked body: only the limit stops the read
	r.Header.Set("Authorization", "Bearer "+writeToken)
	r.Header.Set("Content-Type", "application/json")
	if w := ts.serve(r); w.Code != http.StatusRequestEntityTooLarge || body.read > maxBodyBytes+1 {
		t.Errorf("%d with %d bytes read, want 413 and at most %d read", w.Code, body.read, maxBodyBytes+1)
	}
}

// countedBody is a request body that counts the bytes read from it.
type countedBody struct {
	io.Reader
	read int
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	b.read += n
	return n, err
}

// A client that leaves during -delay ends its wait: the request is never carried out, so the
// store is as it was, and the log records it as a request that got no answer. Here over a real
// connection, closed once the request is sent, as when a page is closed: for a request with a
// body too.
func TestDelayEndsWhenTheClientLeaves(t *testing.T) {
	ts := newTestServer(t, "-delay", "10s")
	server := httptest.NewServer(ts)
	defer server.Close()
	for _, tt := range []struct{ name, id, method, body string }{
		{"GET", "leaves-1", "GET", ""},
		{"POST with a body", "leaves-2", "POST", `{"name":"Ann","email":"ann@example.com"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", server.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(conn, "%s /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nX-Request-Id: %s\r\n"+
				"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", tt.method, writeToken, tt.id, len(tt.body), tt.body)
			conn.Close()

			deadline, poll := time.After(20*time.Second), time.NewTicker(time.Millisecond)
			defer poll.Stop()
			for {
				answered, unanswered := recordsOf(ts.log.records("request"), tt.id), recordsOf(ts.log.records("request got no answer"), tt.id)
				if len(answered) > 0 {
					t.Fatalf("the wait went on after the client left: the request was carried out, %v; the store holds %v", answered[0], allUsers(t, ts.store))
				}
				if len(unanswered) > 0 {
					break
				}
				select {
				case <-poll.C: // the log is read again at each tick, until it has the request
				case <-deadline:
					t.Fatalf("no record of the request 20s after its client left:\n%s", ts.log)
				}
			}
			if users := allUsers(t, ts.store); len(users) != 0 {
				t.Errorf("the store holds %v, want it as it was", users)
			}
		})
	}
}

// listed reports whether a header field's values, each a comma-separated list, name name (in any
// case, as header names compare).
func listed(values []string, name string) bool {
	for _, value := range values {
		for _, item := range strings.Split(value, ",") {
			if strings.EqualFold(strings.TrimSpace(item), name) {
				return true
			}
		}
	}
	return false
}

// wantListed fails the test unless the header field field lists every one of names.
func wantListed(t *testing.T, h http.Header, field string, names ...string) {
	t.Helper()
	for _, name := range names {
		if !listed(h.Values(field), name) {
			t.Errorf("%s %q does not name %s", field, h.Values(field), name)
		}
	}
}

// recordsOf returns the log records of the request with this id.
func recordsOf(records []map[string]any, requestID string) []map[string]any {
	var found []map[string]any
	for _, record := range records {
		if record["request_id"] == requestID {
			found = append(found, record)
		}
	}
	return found
}

// logRecord reads one line of the log, in log/slog's JSON or text format, as its fields. A text
// line is key=value pairs separated by spaces, a value Go-quoted when it holds a space, a quote or
// an equals sign.
func logRecord(t *testing.T, format, line string) map[string]string {
	t.Helper()
	record := map[string]string{}
	if format == "json" {
		var fields map[string]any
		if err := json.Unmarshal([]byte(line), &fields); err != nil {
			t.Fatalf("not one JSON record: %v\n%s", err, line)
		}
		for key, value := range fields {
			record[key] = fmt.Sprint(value)
		}
		return record
	}
	for rest := strings.TrimSuffix(line, "\n"); rest != ""; rest = strings.TrimPrefix(rest, " ") {
		key, value, found := strings.Cut(rest, "=")
		if !found || strings.ContainsAny(key, ` "`) {
			t.Fatalf("no key=value at %q in the line\n%s", rest, line)
		}
		if quoted, err := strconv.QuotedPrefix(value); err == nil {
			rest = value[len(quoted):]
			value, _ = strconv.Unquote(quoted)
		} else {
			value, rest, _ = strings.Cut(value, " ")
		}
		record[key] = value
	}
	return record
}
