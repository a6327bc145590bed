package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// The handlers of users.go, one at a time and under many clients at once.

// Each handler of /api/users/{id} parses its own id: called directly, without the mux or any
// wrapper before it, a handler given an id that is not a positive integer in canonical decimal, or
// no id at all, answers 404 "no user has this id" and changes nothing (docs/api.md, "Routes").
// The store holds ids that a careless parse would find: strconv.ParseInt alone reads "+1" and "01"
// as Ann's id 1, and stops at 9223372036854775807, the last user's, for "9223372036854775808"
// (with an error a handler might drop). An id that parses as 0 or less names no user in any
// store: the store never gives one.
func TestEachUserHandlerParsesItsOwnID(t *testing.T) {
	handlers := []struct {
		name    string
		handler func(a *api, w http.ResponseWriter, r *http.Request) error
		method  string
		body    string
	}{
		{"getUser", (*api).getUser, "GET", ""},
		{"replaceUser", (*api).replaceUser, "PUT", `{"name":"Ann","email":"ann@example.com"}`},
		{"patchUser", (*api).patchUser, "PATCH", `{"name":"Ann"}`},
		{"deleteUser", (*api).deleteUser, "DELETE", ""},
		{"userOptions", (*api).userOptions, "OPTIONS", ""},
	}
	ids := []struct {
		name  string
		id    string
		unset bool // no path value at all, as when the handler is mounted on a pattern without {id}
	}{
		{name: "unset", unset: true},
		{name: "abc", id: "abc"},
		{name: "empty", id: ""},
		{name: "zero", id: "0"},
		{name: "a leading zero", id: "01"},
		{name: "a sign", id: "+1"},
		{name: "negative", id: "-1"},
		{name: "past 2^63-1", id: "9223372036854775808"},
	}
	for _, h := range handlers {
		for _, id := range ids {
			t.Run(h.name+" "+id.name, func(t *testing.T) {
				path := newDataPath(t)
				err := os.WriteFile(path, []byte(`{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com"},
					{"id": 9223372036854775807, "name": "Max", "email": "max@example.com"}]}`), 0o600)
				if err != nil {
					t.Fatal(err)
				}
				store := openFileStore(t, path, osDisk{})
				before, version := store.all()
				// The api as newServer builds it, with only what these handlers use: the store, and
				// the log that writeError would write a 500's cause to.
				a := &api{store: store, log: newLogger("json", io.Discard)}

				r := httptest.NewRequest(h.method, "/api/users/x", strings.NewReader(h.body))
				r.Header.Set("Content-Type", "application/json")
				r = withRole(r, roleWrite) // every other check would let the request through
				if !id.unset {
					r.SetPathValue("id", id.id)
				}
				w := httptest.NewRecorder()
				a.handle(func(w http.ResponseWriter, r *http.Request) error { return h.handler(a, w, r) }).ServeHTTP(w, r)

				wantError(t, w, http.StatusNotFound, "no user has this id")
				wantHeaders(t, w.Header(), map[string]string{"ETag": "", "Allow": "", "Accept-Patch": ""})
				if after, versionAfter := store.all(); versionAfter != version || !slices.Equal(after, before) {
					t.Errorf("the store changed: %v, then %v", before, after)
				}
			})
		}
	}
}

// The body limit is exact: a body of 1 MiB is read and judged, one byte more is refused and
// changes nothing (docs/api.md, "Request bodies", rule 2).
func TestBodyLimitIsExactly1MiB(t *testing.T) {
	const eve = `{"name":"Eve","email":"eve@example.com"}`
	exactly := eve + strings.Repeat(" ", maxBodyBytes-len(eve)) // white space after the object is allowed
	for _, tt := range []struct {
		name   string
		body   string
		status int
		users  int // in the store afterwards
	}{
		{"1 MiB is read", exactly, http.StatusCreated, 1},
		{"1 MiB + 1 is refused", exactly + " ", http.StatusRequestEntityTooLarge, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t)
			r := httptest.NewRequest("POST", "/api/users", strings.NewReader(tt.body))
			r.Header.Set("Authorization", "Bearer "+writeToken)
			r.Header.Set("Content-Type", "application/json")
			wantStatus(t, ts.serve(r), tt.status)
			// The version counts the changes: a refused request used up no id either.
			if users, version := ts.store.all(); len(users) != tt.users || version != uint64(tt.users) {
				t.Errorf("the store holds %v at version %d, want %d users", users, version, tt.users)
			}
		})
	}
}

// Many clients creating, replacing, patching, deleting and listing at once leave a consistent
// store: ids unique and never reused, e-mails unique, total equal to the users present, and every
// answer the clients got borne out. Run it under -race (./test.sh does).
func TestManyClientsKeepTheStoreConsistent(t *testing.T) {
	const clients, requestsEach = 8, 250
	ts := newTestServer(t)
	t.Logf("client i draws its requests from rand.NewSource(i), for i from 1 to %d", clients)
	told := runClients(t, ts, clients, requestsEach)
	if t.Failed() {
		return
	}

	list := wantConsistentList(t, sendToHandler(ts, readToken, "GET", "/api/users", ""), 0)
	for _, u := range list.Data {
		if !told.created[u.ID] || told.deleted[u.ID] > 0 {
			t.Errorf("user %d is listed; created %v, deleted %d times", u.ID, told.created[u.ID], told.deleted[u.ID])
		}
		found := wantConsistentList(t, sendToHandler(ts, readToken, "GET", "/api/users?email="+strings.ToUpper(u.Email), ""), 0)
		if len(found.Data) != 1 || found.Data[0].ID != u.ID {
			t.Errorf("?email=%s found %v, want user %d", u.Email, found.Data, u.ID)
		}
	}
	for id := range told.created {
		listed := slices.ContainsFunc(list.Data, func(u user) bool { return u.ID == id })
		if !listed && told.deleted[id] == 0 {
			t.Errorf("user %d was created and never deleted, but is gone", id)
		}
	}
	for id, times := range told.deleted {
		if times > 1 {
			t.Errorf("user %d was deleted %d times", id, times)
		}
	}
	if len(told.created) < 20 {
		t.Errorf("only %d users were created: the load was too light to prove anything", len(told.created))
	}
	if ts.store.count() != list.Total {
		t.Errorf("the store counts %d users, the list %d", ts.store.count(), list.Total)
	}
	last := ts.create(t, "Last", "last@example.com")
	if want := told.maxID.Load() + 1; last.ID != want {
		t.Errorf("the create after the load got id %d, want %d: ids are never reused", last.ID, want)
	}
}

// clientsLedger is what the clients of runClients were told: every id created, the largest, and
// how many times each id was deleted.
type clientsLedger struct {
	mu      sync.Mutex
	created map[int64]bool
	deleted map[int64]int
	maxID   atomic.Int64
}

// runClients has clients create, replace, patch, delete, read and list users at once, on a small
// set of e-mails so that they collide, checks every answer as it comes, and returns what the
// clients were told. Client i draws its requests from rand.NewSource(i).
func runClients(t *testing.T, ts *testServer, clients, requestsEach int) *clientsLedger {
	told := &clientsLedger{created: map[int64]bool{}, deleted: map[int64]int{}}
	emailFor := func(r *rand.Rand) string {
		n := r.Intn(40)
		if r.Intn(2) == 0 {
			return fmt.Sprintf("User%d@Example.com", n) // the same address as user%d@example.com
		}
		return fmt.Sprintf("user%d@example.com", n)
	}
	want := func(w *httptest.ResponseRecorder, what string, statuses ...int) {
		if !slices.Contains(statuses, w.Code) {
			t.Errorf("%s: status %d, body %s", what, w.Code, w.Body)
		}
	}
	var wg sync.WaitGroup
	for seed := int64(1); seed <= int64(clients); seed++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewSource(seed))
			for i := 0; i < requestsEach && !t.Failed(); i++ {
				id := r.Int63n(told.maxID.Load()+3) + 1 // a user that may exist, or not yet
				target := userPath(id)
				userJSON := fmt.Sprintf(`{"name":"Client %d request %d","email":%q}`, seed, i, emailFor(r))
				switch op := r.Intn(20); {
				case op < 6:
					w := sendToHandler(ts, writeToken, "POST", "/api/users", userJSON)
					want(w, "POST", http.StatusCreated, http.StatusConflict)
					var created user
					if w.Code == http.StatusCreated && json.Unmarshal(w.Body.Bytes(), &created) == nil {
						told.mu.Lock()
						if told.created[created.ID] {
							t.Errorf("id %d was given twice", created.ID)
						}
						told.created[created.ID] = true
						told.mu.Unlock()
						for old := told.maxID.Load(); created.ID > old && !told.maxID.CompareAndSwap(old, created.ID); old = told.maxID.Load() {
						}
					}
				case op < 9:
					want(sendToHandler(ts, writeToken, "PUT", target, userJSON), "PUT "+target, 200, 404, 409)
				case op < 12:
					patch := fmt.Sprintf(`{"email":%q}`, emailFor(r))
					if r.Intn(2) == 0 {
						patch = fmt.Sprintf(`{"name":"Patched %d"}`, i)
					}
					want(sendToHandler(ts, writeToken, "PATCH", target, patch), "PATCH "+target, 200, 404, 409)
				case op < 14:
					w := sendToHandler(ts, writeToken, "DELETE", target, "")
					want(w, "DELETE "+target, http.StatusNoContent, http.StatusNotFound)
					if w.Code == http.StatusNoContent {
						told.mu.Lock()
						told.deleted[id]++
						told.mu.Unlock()
					}
				case op < 17:
					wantConsistentList(t, sendToHandler(ts, readToken, "GET", "/api/users", ""), 0)
				case op < 18:
					perPage := r.Intn(10) + 1
					target := fmt.Sprintf("/api/users?page=%d&per_page=%d", r.Intn(4)+1, perPage)
					wantConsistentList(t, sendToHandler(ts, readToken, "GET", target, ""), perPage)
				default:
					want(sendToHandler(ts, readToken, "GET", target, ""), "GET "+target, 200, 404)
				}
			}
		}()
	}
	wg.Wait()
	return told
}

// sendToHandler sends a request with this token, and a JSON body if there is one, straight to the
// handler: fast, so that the race detector sees many interleavings.
func sendToHandler(ts *testServer, token, method, target, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	return ts.serve(r)
}

// consistentList is a list's envelope, paged or not.
type consistentList struct {
	Data       []user `json:"data"`
	Total      int    `json:"total"`
	TotalPages int    `json:"total_pages"`
}

// wantConsistentList fails the test unless w is a list that holds together, however many writers
// are at work: total equal to the users shown (or, with perPage, consistent with them), ids
// ascending, and no e-mail twice.
func wantConsistentList(t *testing.T, w *httptest.ResponseRecorder, perPage int) consistentList {
	t.Helper()
	var list consistentList
	if err := json.Unmarshal(w.Body.Bytes(), &list); w.Code != http.StatusOK || err != nil {
		t.Errorf("list: status %d, body %s", w.Code, w.Body)
		return list
	}
	if perPage == 0 && list.Total != len(list.Data) {
		t.Errorf("list: total %d, but %d users", list.Total, len(list.Data))
	}
	if perPage > 0 && (len(list.Data) > perPage || len(list.Data) > list.Total || list.TotalPages != (list.Total+perPage-1)/perPage) {
		t.Errorf("page: %d users, per_page %d, total %d, total_pages %d", len(list.Data), perPage, list.Total, list.TotalPages)
	}
	emails := map[string]bool{}
	for i, u := range list.Data {
		if i > 0 && u.ID <= list.Data[i-1].ID {
			t.Errorf("list: id %d after id %d", u.ID, list.Data[i-1].ID)
		}
		if key := strings.ToLower(u.Email); emails[key] {
			t.Errorf("list: the e-mail %s twice", u.Email)
		}
		emails[strings.ToLower(u.Email)] = true
	}
	return list
}
