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
	"math/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
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
