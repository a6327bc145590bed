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
	"fmt"
	"io"
	"log"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
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
	want    int                 // the status
	prepare func(*http.Request) // for what headers cannot say: a chunked body, a declared length
}

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
