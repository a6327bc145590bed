package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The handlers of users.go, each through the whole service as newTestServer builds it: one
// request at a time, then many clients at once (docs/api.md, "Routes" and "The order of the
// checks"). TestEachStatus (users_test.go) shows one answer of each status; these tests show what
// each handler promises beyond it.

// A create stores the values trimmed and answers them with the new user's URI (RFC 9110 §9.3.3)
// and its ETag: the very answer a GET of that URI gives, so a client can send If-Match next
// without reading first.
func TestCreateAnswersWhatAReadWouldGive(t *testing.T) {
	ts := newTestServer(t)
	r := httptest.NewRequest("POST", "/api/users", strings.NewReader(`{"name":"  Ann Lee\t","email":" Ann@Example.com "}`))
	r.Header.Set("Authorization", "Bearer "+writeToken)
	r.Header.Set("Content-Type", "application/json")
	w := ts.serve(r)
	var created user
	if err := json.Unmarshal(w.Body.Bytes(), &created); w.Code != http.StatusCreated || err != nil {
		t.Fatalf("POST: %d %s, want 201 and a user", w.Code, w.Body)
	}
	if want := (user{ID: 1, Name: "Ann Lee", Email: "Ann@Example.com"}); created != want {
		t.Errorf("created %+v, want %+v: trimmed, case kept", created, want)
	}

	r = httptest.NewRequest("GET", w.Header().Get("Location"), nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	read := ts.serve(r)
	if read.Code != http.StatusOK || read.Body.String() != w.Body.String() {
		t.Errorf("GET %s: %d %s, want the body of the 201, %s", w.Header().Get("Location"), read.Code, read.Body, w.Body)
	}
	if tag := w.Header().Get("ETag"); tag == "" || tag != read.Header().Get("ETag") {
		t.Errorf("the 201's ETag is %q, the GET's %q: want the same", tag, read.Header().Get("ETag"))
	}
}

// PATCH answers the user as stored, with the ETag a GET would give and Content-Location (RFC 9110
// §8.7); the member it leaves out keeps its value.
func TestPatchAnswersTheStoredUserAndItsETag(t *testing.T) {
	ts := newTestServer(t)
	ts.create(t, "Ann", "ann@example.com")
	r := httptest.NewRequest("PATCH", "/api/users/1", strings.NewReader(`{"name":" Ann Lee "}`))
	r.Header.Set("Authorization", "Bearer "+writeToken)
	r.Header.Set("Content-Type", "application/merge-patch+json")
	w := ts.serve(r)
	var patched user
	if err := json.Unmarshal(w.Body.Bytes(), &patched); w.Code != http.StatusOK || err != nil {
		t.Fatalf("PATCH: %d %s, want 200 and a user", w.Code, w.Body)
	}
	if patched != (user{ID: 1, Name: "Ann Lee", Email: "ann@example.com"}) {
		t.Errorf("patched %+v, want the name changed and the email kept", patched)
	}
	r = httptest.NewRequest("GET", "/api/users/1", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	read := ts.serve(r)
	if tag := w.Header().Get("ETag"); tag == "" || tag != read.Header().Get("ETag") || w.Body.String() != read.Body.String() {
		t.Errorf("PATCH answered %s with ETag %q; GET answers %s with %q", w.Body, tag, read.Body, read.Header().Get("ETag"))
	}
	if got := w.Header().Get("Content-Location"); got != "/api/users/1" {
		t.Errorf("Content-Location %q, want /api/users/1", got)
	}
}

// PUT replaces a user that exists and never creates one: ids are the server's to give. A user may
// keep its own e-mail in another case, but not take another user's in any case (409).
func TestPutReplacesButNeverCreates(t *testing.T) {
	tests := []struct {
		name, target, body string
		status             int
		want               []user // the users afterwards
	}{
		{"a user that does not exist", "/api/users/3", `{"name":"Cy","email":"cy@example.com"}`, http.StatusNotFound,
			[]user{{1, "Ann", "ann@example.com"}, {2, "Bob", "bob@example.com"}}},
		{"its own e-mail in capitals", "/api/users/1", `{"name":"Ann","email":"ANN@example.com"}`, http.StatusOK,
			[]user{{1, "Ann", "ANN@example.com"}, {2, "Bob", "bob@example.com"}}},
		{"another user's e-mail in capitals", "/api/users/1", `{"name":"Ann","email":"BOB@example.com"}`, http.StatusConflict,
			[]user{{1, "Ann", "ann@example.com"}, {2, "Bob", "bob@example.com"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t)
			ts.create(t, "Ann", "ann@example.com")
			ts.create(t, "Bob", "bob@example.com")
			r := httptest.NewRequest("PUT", tt.target, strings.NewReader(tt.body))
			r.Header.Set("Authorization", "Bearer "+writeToken)
			r.Header.Set("Content-Type", "application/json")
			if w := ts.serve(r); w.Code != tt.status {
				t.Errorf("status %d %s, want %d", w.Code, w.Body, tt.status)
			}
			if got := allUsers(t, ts.store); !slices.Equal(got, tt.want) {
				t.Errorf("the users are %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("the id a PUT was refused is still the next one", func(t *testing.T) {
		ts := newTestServer(t)
		r := httptest.NewRequest("PUT", "/api/users/1", strings.NewReader(`{"name":"Ann","email":"ann@example.com"}`))
		r.Header.Set("Authorization", "Bearer "+writeToken)
		r.Header.Set("Content-Type", "application/json")
		if w := ts.serve(r); w.Code != http.StatusNotFound {
			t.Fatalf("PUT: %d %s, want 404", w.Code, w.Body)
		}
		if ann := ts.create(t, "Ann", "ann@example.com"); ann.ID != 1 {
			t.Errorf("the first create got id %d, want 1", ann.ID)
		}
	})
}

// DELETE answers 204 with no body; deleting again is 404, the state being the same (RFC 9110
// §9.2.2). The e-mail is free again at once, but the id is never given again.
func TestDeleteFreesTheEmailButNotTheID(t *testing.T) {
	ts := newTestServer(t)
	ts.create(t, "Ann", "ann@example.com")
	ts.create(t, "Bob", "bob@example.com")

	r := httptest.NewRequest("DELETE", "/api/users/2", nil)
	r.Header.Set("Authorization", "Bearer "+writeToken)
	if w := ts.serve(r); w.Code != http.StatusNoContent || w.Body.Len() != 0 {
		t.Errorf("DELETE: %d %q, want 204 and no body", w.Code, w.Body)
	}
	for _, method := range []string{"DELETE", "GET"} {
		r := httptest.NewRequest(method, "/api/users/2", nil)
		r.Header.Set("Authorization", "Bearer "+writeToken)
		wantError(t, ts.serve(r), http.StatusNotFound, "no user has this id")
	}
	if again := ts.create(t, "Bob", "bob@example.com"); again.ID != 3 {
		t.Errorf("Bob again got id %d, want 3: ids are never reused", again.ID)
	}
}

// OPTIONS needs no token, ignores a bad one, and names the methods of a user's URI, with the media
// types PATCH takes (RFC 5789 §3.1), whether or not that user exists; an id not in canonical form
// names nothing (404).
func TestOptionsOfAUser(t *testing.T) {
	ts := newTestServer(t)
	for _, authorization := range []string{"", "Bearer no-such-token"} {
		r := httptest.NewRequest("OPTIONS", "/api/users/7", nil)
		if authorization != "" {
			r.Header.Set("Authorization", authorization)
		}
		w := ts.serve(r)
		if w.Code != http.StatusNoContent || w.Header().Get("Allow") != "GET, HEAD, PUT, PATCH, DELETE, OPTIONS" ||
			w.Header().Get("Accept-Patch") != "application/json, application/merge-patch+json" {
			t.Errorf("Authorization %q: %d, Allow %q, Accept-Patch %q", authorization, w.Code, w.Header().Get("Allow"), w.Header().Get("Accept-Patch"))
		}
	}
	wantError(t, ts.serve(httptest.NewRequest("OPTIONS", "/api/users/07", nil)), http.StatusNotFound, "no user has this id")
}

// An id is a positive integer in canonical decimal, at most 2^63-1: one URI per user. Anything
// else names no user (docs/api.md, "Routes").
func TestIDIsCanonicalDecimal(t *testing.T) {
	for _, tt := range []struct {
		id   string
		want int64 // 0: not an id
	}{
		{"7", 7}, {"10", 10}, {"9223372036854775807", 9223372036854775807},
		{"07", 0}, {"+7", 0}, {"-7", 0}, {"0", 0}, {"7.0", 0}, {"7e0", 0}, {"0x7", 0}, {" 7", 0}, {"7 ", 0},
		{"", 0}, {"７", 0}, {"9223372036854775808", 0}, {"1_000", 0},
	} {
		t.Run(fmt.Sprintf("%q", tt.id), func(t *testing.T) {
			id, ok := parseCanonical(tt.id)
			if ok != (tt.want != 0) || ok && id != tt.want {
				t.Errorf("parseCanonical(%q) = %d, %v; want %d", tt.id, id, ok, tt.want)
			}
		})
	}
}

// Routing comes before the request, and the request before the stored state (docs/api.md, "The
// order of the checks"): a path that does not take the method is 405 before its id is read, an id
// not in canonical form 404 before the body is, and a body is judged 415, then 413, then 400,
// before the user is looked for. The list's query is judged before any body it carries, which is
// ignored. Nothing changes.
func TestChecksInTheirOrder(t *testing.T) {
	const asJSON = "application/json"
	huge := strings.Repeat("x", maxBodyBytes+1)
	tests := []struct {
		name, method, target, body, contentType string // "" sends no Content-Type
		status                                  int
	}{
		{"405 before the id", "POST", "/api/users/abc", `{"name":"Cy","email":"cy@example.com"}`, asJSON, http.StatusMethodNotAllowed},
		{"a bad id names nothing", "GET", "/api/users/abc", "", "", http.StatusNotFound},
		{"the id before 415", "PUT", "/api/users/01", `{}`, "text/plain", http.StatusNotFound},
		{"415 before a missing user", "PUT", "/api/users/9", `{}`, "text/plain", http.StatusUnsupportedMediaType},
		{"415 before 413", "POST", "/api/users", huge, "text/plain", http.StatusUnsupportedMediaType},
		{"413 before 400", "POST", "/api/users", huge, asJSON, http.StatusRequestEntityTooLarge},
		{"400 before a missing user", "PATCH", "/api/users/9", `{"name":""}`, asJSON, http.StatusBadRequest},
		{"a missing user once the body is good", "PATCH", "/api/users/9", `{"name":"Cy"}`, asJSON, http.StatusNotFound},
		{"the query, the body ignored", "GET", "/api/users?page=0", "not JSON", "", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t)
			ts.create(t, "Ann", "ann@example.com")
			r := httptest.NewRequest(tt.method, tt.target, strings.NewReader(tt.body))
			r.Header.Set("Authorization", "Bearer "+writeToken)
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			w := ts.serve(r)
			if w.Code != tt.status {
				t.Errorf("status %d %.200s, want %d", w.Code, w.Body, tt.status)
			}
			if w.Code == http.StatusMethodNotAllowed && w.Header().Get("Allow") != "GET, HEAD, PUT, PATCH, DELETE, OPTIONS" {
				t.Errorf("Allow %q, want the methods of a user", w.Header().Get("Allow"))
			}
			if users := allUsers(t, ts.store); len(users) != 1 || users[0] != (user{1, "Ann", "ann@example.com"}) {
				t.Errorf("the store holds %v, want Ann alone, as before", users)
			}
		})
	}
}

// The body limit is exact: 1 MiB is read and judged, one byte more is 413 and creates nothing
// (docs/api.md, "Request bodies").
func TestBodyLimitIsExactly1MiB(t *testing.T) {
	const cy = `{"name":"Cy","email":"cy@example.com"}`
	exactly := cy + strings.Repeat(" ", maxBodyBytes-len(cy)) // white space after the object is allowed
	for _, tt := range []struct {
		name   string
		body   string
		status int
		users  int // in the store afterwards
	}{
		{"1 MiB", exactly, http.StatusCreated, 1},
		{"1 MiB + 1", exactly + " ", http.StatusRequestEntityTooLarge, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t)
			r := httptest.NewRequest("POST", "/api/users", strings.NewReader(tt.body))
			r.Header.Set("Authorization", "Bearer "+writeToken)
			r.Header.Set("Content-Type", "application/json")
			if w := ts.serve(r); w.Code != tt.status {
				t.Errorf("status %d %s, want %d", w.Code, w.Body, tt.status)
			}
			if users := allUsers(t, ts.store); len(users) != tt.users {
				t.Errorf("the store holds %v, want %d users", users, tt.users)
			}
		})
	}
}

// Many clients creating, replacing, patching, deleting and listing at once, on a few e-mails that
// collide in any case: no id is given twice or reused, every list holds together (total equal to
// the users shown, ids ascending, no e-mail twice in any case), and so does the store at the end.
// Run it under -race (./test.sh does).
func TestManyClientsAtOnce(t *testing.T) {
	const clients, requestsEach = 6, 150
	ts := newTestServer(t)
	consistent := func(t *testing.T, w *httptest.ResponseRecorder) []user { // the list w holds, if it holds together
		t.Helper()
		var list struct {
			Data  []user
			Total int
		}
		if err := json.Unmarshal(w.Body.Bytes(), &list); w.Code != http.StatusOK || err != nil || list.Total != len(list.Data) {
			t.Errorf("the list: %d, total %d of %d users, %v", w.Code, list.Total, len(list.Data), err)
		}
		emails := map[string]bool{}
		for i, u := range list.Data {
			if i > 0 && u.ID <= list.Data[i-1].ID {
				t.Errorf("the list has id %d after id %d", u.ID, list.Data[i-1].ID)
			}
			if emails[strings.ToLower(u.Email)] {
				t.Errorf("the list has the e-mail %s twice", u.Email)
			}
			emails[strings.ToLower(u.Email)] = true
		}
		return list.Data
	}
	var mu sync.Mutex
	given := map[int64]bool{} // every id a 201 gave
	var wg sync.WaitGroup
	for c := 1; c <= clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			random := rand.New(rand.NewSource(int64(c))) // client c's requests are the same at every run
			for i := 0; i < requestsEach; i++ {
				email := fmt.Sprintf("user%d@example.com", random.Intn(20))
				if random.Intn(2) == 0 {
					email = strings.ToUpper(email) // the same address
				}
				body := fmt.Sprintf(`{"name":"client %d, request %d","email":%q}`, c, i, email)
				target := userPath(int64(random.Intn(40) + 1))
				method, token := "", writeToken
				var allowed []int
				switch random.Intn(6) {
				case 0, 1:
					method, target, allowed = "POST", "/api/users", []int{201, 409}
				case 2:
					method, allowed = "PUT", []int{200, 404, 409}
				case 3:
					method, body, allowed = "PATCH", fmt.Sprintf(`{"email":%q}`, email), []int{200, 404, 409}
				case 4:
					method, body, allowed = "DELETE", "", []int{204, 404}
				default:
					method, target, body, token, allowed = "GET", "/api/users", "", readToken, []int{200}
				}
				r := httptest.NewRequest(method, target, strings.NewReader(body))
				r.Header.Set("Authorization", "Bearer "+token)
				if body != "" {
					r.Header.Set("Content-Type", "application/json")
				}
				w := ts.serve(r)
				if !slices.Contains(allowed, w.Code) {
					t.Errorf("%s %s: %d %s", method, target, w.Code, w.Body)
					return
				}
				switch {
				case w.Code == http.StatusCreated:
					var created user
					json.Unmarshal(w.Body.Bytes(), &created)
					mu.Lock()
					if given[created.ID] {
						t.Errorf("id %d was given twice", created.ID)
					}
					given[created.ID] = true
					mu.Unlock()
				case method == "GET":
					consistent(t, w)
				}
			}
		}()
	}
	wg.Wait()

	r := httptest.NewRequest("GET", "/api/users", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	users := consistent(t, ts.serve(r))
	var maxID int64
	for id := range given {
		maxID = max(maxID, id)
	}
	for _, u := range users {
		if !given[u.ID] {
			t.Errorf("user %d is listed, but no client was given its id", u.ID)
		}
	}
	if len(given) < 20 {
		t.Errorf("only %d users were created: too few to prove anything", len(given))
	}
	if next := ts.create(t, "Last", "last@example.com"); next.ID != maxID+1 {
		t.Errorf("the next create got id %d, want %d: ids are never reused", next.ID, maxID+1)
	}
}
