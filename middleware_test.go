package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// The rules of middleware.go, what every request goes through before its route (docs/api.md,
// "Responses"; README, "Configuration" and "What it withstands"): the request id, nosniff, Vary
// and Cache-Control, the access log, panics and -delay. Each is shown through the service as
// newTestServer builds it, so each request crosses the whole chain that newServer (users.go) puts
// together. CORS, the chain's second link, has its own file, cors_test.go.

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
			if varies := slices.Contains(w.Header().Values("Vary"), "Authorization"); varies != underAPI {
				t.Errorf("Vary %q: names Authorization %v, want %v", w.Header().Values("Vary"), varies, underAPI)
			}
			if got := w.Header().Get("Cache-Control"); underAPI && got != tt.cacheControl {
				t.Errorf("Cache-Control %q, want %q", got, tt.cacheControl)
			}
		})
	}
}

// The access log has one record per request (README, "Configuration"): method, path (never the
// query: RFC 6750 §2.3 lets clients put a token there), status, the bytes of the body sent (none
// for HEAD, whose body net/http drops), duration_ms as a number, and the request id.
func TestAccessLogRecordsEachRequest(t *testing.T) {
	ts := newTestServer(t)
	ts.create(t, "Ann", "ann@example.com")
	for _, method := range []string{"GET", "HEAD"} {
		r := httptest.NewRequest(method, "/api/users?q=ann", nil)
		r.Header.Set("Authorization", "Bearer "+readToken)
		r.Header.Set("X-Request-Id", "trace-"+method)
		w := ts.serve(r)
		var logged []map[string]any
		for _, record := range ts.log.records("request") {
			if record["request_id"] == "trace-"+method {
				logged = append(logged, record)
			}
		}
		if len(logged) != 1 {
			t.Fatalf("%s: %d access log records of the request, want 1: %v", method, len(logged), logged)
		}
		bytes := float64(w.Body.Len()) // JSON numbers are float64 once decoded
		if method == "HEAD" {
			bytes = 0
		}
		want := map[string]any{"method": method, "path": "/api/users", "status": float64(200), "bytes": bytes}
		for key, value := range want {
			if logged[0][key] != value {
				t.Errorf("%s: %s=%v, want %v", method, key, logged[0][key], value)
			}
		}
		if _, ok := logged[0]["duration_ms"].(float64); !ok {
			t.Errorf("%s: duration_ms=%v, want a number of milliseconds", method, logged[0]["duration_ms"])
		}
	}
	if strings.Contains(ts.log.String(), "q=ann") {
		t.Errorf("the log shows the query:\n%s", ts.log)
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
// of its own, in either format, and in JSON it is the path, whole.
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
			if lines := strings.Count(ts.log.String(), "\n"); lines != 1 {
				t.Errorf("%s: one request logged %d lines, want 1:\n%s", format, lines, ts.log)
			}
			if records := ts.log.records("request"); format == "json" && (len(records) != 1 || records[0]["path"] != r.URL.Path) {
				t.Errorf("the access log has %v, want one record of the path %q", records, r.URL.Path)
			}
		}
	}
}

// panicking panics with its value when a handler reads it, as a request body, or writes the body
// of its answer to it, as the ResponseWriter of a recorder.
type panicking struct {
	*httptest.ResponseRecorder
	value any
}

func (p panicking) Read([]byte) (int, error)  { panic(p.value) }
func (p panicking) Write([]byte) (int, error) { panic(p.value) }

// A panic in a handler costs its own request only (README, "What it withstands"). Before the
// answer has begun it is the JSON 500 that says nothing more; after, the status is on its way, so
// the request ends with the panic http.ErrAbortHandler, on which net/http cuts the connection
// rather than leave it looking complete, and logs nothing. A handler may panic so itself before
// its answer. A panic is logged once with its stack and the request's id; the access log never
// claims a status that was not sent.
//
// No route panics, so the test makes the service's own handlers panic from outside, through the
// whole chain that newTestServer builds: createUser reads a body that panics, before any answer;
// listUsers writes its answer to a recorder whose Write panics, once the status is sent. A stub
// handler inside a hand-built api would test a chain the program never runs.
func TestPanicIsAJSON500OrCutsTheConnection(t *testing.T) {
	tests := []struct {
		name        string
		value       any  // the value of the panic
		inBody      bool // the request's body panics, before the answer; else the writer, after it began
		cut         bool // the request ends with http.ErrAbortHandler, rather than a 500
		logged      int  // the status the access log shows; 0: "request got no answer"
		panicLogged bool // false for http.ErrAbortHandler: a cut on purpose, not a bug
	}{
		{"a panic before the answer", "the store is on fire", true, false, http.StatusInternalServerError, true},
		{"a panic after the answer began", "half an answer", false, true, http.StatusOK, true},
		{"a cut before the answer", http.ErrAbortHandler, true, true, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t)
			recorder := httptest.NewRecorder()
			var w http.ResponseWriter = recorder
			r := httptest.NewRequest("GET", "/api/users", nil)
			if tt.inBody {
				r = httptest.NewRequest("POST", "/api/users", panicking{value: tt.value})
				r.Header.Set("Content-Type", "application/json")
			} else {
				w = panicking{recorder, tt.value}
			}
			r.Header.Set("Authorization", "Bearer "+writeToken)
			var recovered any
			func() {
				defer func() { recovered = recover() }() // what net/http's own recover would see
				ts.ServeHTTP(w, r)
			}()

			id := recorder.Header().Get("X-Request-Id")
			switch {
			case tt.cut && recovered != http.ErrAbortHandler:
				t.Errorf("the request ended with %v, want the panic http.ErrAbortHandler, to cut the connection", recovered)
			case !tt.cut && recovered != nil:
				t.Fatalf("the panic %v left the service, want a 500", recovered)
			case !tt.cut:
				wantError(t, recorder, http.StatusInternalServerError, "internal server error")
			}

			panics := ts.log.records("panic in handler")
			if !tt.panicLogged && len(panics) != 0 {
				t.Errorf("logged as a panic: %v", panics)
			}
			if tt.panicLogged && len(panics) != 1 {
				t.Fatalf("the panic is logged %d times, want once: %v", len(panics), panics)
			} else if tt.panicLogged {
				if stack, _ := panics[0]["stack"].(string); panics[0]["panic"] != tt.value ||
					panics[0]["request_id"] != id || !strings.Contains(stack, "middleware_test.go") {
					t.Errorf("the panic is logged as %v, want its value, the request id %q and its stack", panics[0], id)
				}
			}
			answered, unanswered := ts.log.records("request"), ts.log.records("request got no answer")
			switch {
			case tt.logged != 0 && (len(answered) != 1 || answered[0]["status"] != float64(tt.logged)):
				t.Errorf("the access log has %v, want one record of the status %d", answered, tt.logged)
			case tt.logged == 0 && (len(answered) != 0 || len(unanswered) != 1):
				t.Errorf("the access log has %v and %v, want one record of a request that got no answer", answered, unanswered)
			}
		})
	}
}

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
	gone, leave := context.WithCancel(context.Background())
	leave()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, "-delay", "10s", "-cors-origin", "http://localhost:3000") // the longest delay
			r := httptest.NewRequest(tt.method, tt.target, nil).WithContext(gone)
			r.Header.Set("Authorization", "Bearer "+readToken)
			for name, value := range tt.header {
				r.Header.Set(name, value)
			}
			w := ts.serve(r)
			answered, unanswered := ts.log.records("request"), ts.log.records("request got no answer")
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
// once it has read the body, but through the handlers' own limit: a body of 2 MiB, of a length not
// declared, is read no further than 1 MiB and a byte. The request comes from a client already
// gone, so nothing waits. What the handler reads after the wait, from readAhead, is the same bytes
// and then the same error as without -delay: so the answer is the same 413.
func TestDelayReadsABodyNoFurtherThanTheLimit(t *testing.T) {
	const size = 2 << 20
	ts := newTestServer(t, "-delay", "10s")
	gone, leave := context.WithCancel(context.Background())
	leave()
	body := &io.LimitedReader{R: strings.NewReader(strings.Repeat("a", size)), N: size} // N: the bytes not read
	r := httptest.NewRequest("POST", "/api/users", body).WithContext(gone)
	r.ContentLength = -1 // not declared, as for a chunked body: only the limit stops the read
	r.Header.Set("Authorization", "Bearer "+writeToken)
	r.Header.Set("Content-Type", "application/json")
	ts.serve(r)
	if read := size - body.N; read == 0 || read > maxBodyBytes+1 {
		t.Errorf("%d bytes read before the wait, want some and at most %d", read, maxBodyBytes+1)
	}

	again := readAhead(httptest.NewRecorder(), io.NopCloser(strings.NewReader(strings.Repeat("a", size))))
	read, err := io.ReadAll(again)
	if tooLarge := (*http.MaxBytesError)(nil); len(read) != maxBodyBytes || !errors.As(err, &tooLarge) {
		t.Errorf("after the read ahead the handler reads %d bytes and %v, want %d and the *http.MaxBytesError of the limit", len(read), err, maxBodyBytes)
	}
}

// A client that leaves during -delay ends its wait: the request is never carried out, so the
// store is as it was, and the log records it as a request that got no answer. Here over a real
// connection, closed once the server has read the request, as when a page is closed: for a
// request with a body too. The test waits on no clock: httptest.Server's Close returns once the
// request has ended, at once when the wait ended with the client, after the 10 s otherwise.
func TestDelayEndsWhenTheClientLeaves(t *testing.T) {
	for _, tt := range []struct{ name, method, body string }{
		{"GET", "GET", ""},
		{"POST with a body", "POST", `{"name":"Ann","email":"ann@example.com"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, "-delay", "10s")
			server := httptest.NewUnstartedServer(ts)
			requestRead := make(chan struct{})
			server.Config.ConnState = func(_ net.Conn, state http.ConnState) {
				if state == http.StateActive { // the request is read: its handler runs, into the delay
					close(requestRead)
				}
			}
			server.Start()
			conn, err := net.Dial("tcp", server.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(conn, "%s /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
				"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", tt.method, writeToken, len(tt.body), tt.body)
			<-requestRead
			conn.Close()
			server.Close()

			if answered := ts.log.records("request"); len(answered) != 0 {
				t.Fatalf("the wait went on after the client left: the request was carried out, %v", answered)
			}
			if unanswered := ts.log.records("request got no answer"); len(unanswered) != 1 {
				t.Errorf("the log has %v, want one record of a request that got no answer:\n%s", unanswered, ts.log)
			}
			if users := allUsers(t, ts.store); len(users) != 0 {
				t.Errorf("the store holds %v, want it as it was", users)
			}
		})
	}
}
