package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A first test: create a user, then read it back, through the real handler. newTestServer builds
// the service with newServer, as the program does; httptest.NewRecorder records its answer.
func TestCreateThenRead(t *testing.T) {
	ts := newTestServer(t)

	r := httptest.NewRequest("POST", "/api/users", strings.NewReader(`{"name":"Ann","email":"ann@example.com"}`))
	r.Header.Set("Authorization", "Bearer "+writeToken)
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	ts.ServeHTTP(w, r)
	if w.Code != http.StatusCreated || w.Header().Get("Location") != "/api/users/1" {
		t.Fatalf("POST: %d, Location %q; want 201 and /api/users/1", w.Code, w.Header().Get("Location"))
	}

	r = httptest.NewRequest("GET", "/api/users/1", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	w = httptest.NewRecorder()
	ts.ServeHTTP(w, r)
	if want := `{"id":1,"name":"Ann","email":"ann@example.com"}`; w.Code != http.StatusOK || w.Body.String() != want {
		t.Errorf("GET: %d %s; want 200 %s", w.Code, w.Body, want)
	}
}

// annTag is the ETag of Ann as the service holds her: the first 32 hex digits of the SHA-256 of
// her representation, between quotes, as this shell line computes it:
//
//	printf '%s' '{"id":1,"name":"Ann","email":"ann@example.com"}' | sha256sum | cut -c1-32
const annTag = `"b1a12eb61a993fab452547343d42b3d6"`

// The answers of the API, a case for each status it sends. Each case starts from a fresh service
// holding Ann (/api/users/1) and Bob (/api/users/2), created through the API. The 500 of a disk
// that fails follows in a test of its own.
func TestEachStatus(t *testing.T) {
	tests := []struct {
		name       string
		method     string
		target     string
		token      string            // the bearer token; "" sends no Authorization
		header     map[string]string // more request header fields
		body       string
		status     int
		wantHeader map[string]string // "" for a field that must be absent
		wantBody   string
	}{
		{name: "200 list", method: "GET", target: "/api/users", token: readToken,
			status:     200,
			wantHeader: map[string]string{"Content-Type": "application/json", "Cache-Control": "private, no-cache", "Vary": "Authorization"},
			wantBody:   `{"data":[{"id":1,"name":"Ann","email":"ann@example.com"},{"id":2,"name":"Bob","email":"bob@example.com"}],"total":2}`},
		{name: "200 one user", method: "GET", target: "/api/users/1", token: readToken,
			status:     200,
			wantHeader: map[string]string{"ETag": annTag},
			wantBody:   `{"id":1,"name":"Ann","email":"ann@example.com"}`},
		{name: "200 PUT answers the user as stored, without an ETag", method: "PUT", target: "/api/users/1", token: writeToken,
			header: map[string]string{"Content-Type": "application/json"}, body: `{"name":" Ann Lee ","email":"ann@example.com"}`,
			status:     200,
			wantHeader: map[string]string{"Content-Location": "/api/users/1", "ETag": "", "Cache-Control": "no-store"},
			wantBody:   `{"id":1,"name":"Ann Lee","email":"ann@example.com"}`},
		{name: "200 PATCH changes what it names", method: "PATCH", target: "/api/users/2", token: writeToken,
			header: map[string]string{"Content-Type": "application/merge-patch+json"}, body: `{"email":"bob@example.org"}`,
			status:     200,
			wantHeader: map[string]string{"Content-Location": "/api/users/2"},
			wantBody:   `{"id":2,"name":"Bob","email":"bob@example.org"}`},
		{name: "201 POST names the new user", method: "POST", target: "/api/users", token: writeToken,
			header: map[string]string{"Content-Type": "application/json"}, body: `{"name":"Carol","email":"carol@example.com"}`,
			status:     201,
			wantHeader: map[string]string{"Location": "/api/users/3"},
			wantBody:   `{"id":3,"name":"Carol","email":"carol@example.com"}`},
		{name: "204 DELETE", method: "DELETE", target: "/api/users/2", token: writeToken,
			status:     204,
			wantHeader: map[string]string{"Content-Type": ""}},
		{name: "204 OPTIONS needs no token", method: "OPTIONS", target: "/api/users",
			status:     204,
			wantHeader: map[string]string{"Allow": "GET, HEAD, POST, OPTIONS", "Accept-Post": "application/json"}},
		{name: "304 the client's copy is current", method: "GET", target: "/api/users/1", token: readToken,
			header:     map[string]string{"If-None-Match": annTag},
			status:     304,
			wantHeader: map[string]string{"ETag": annTag, "Content-Type": ""}},
		{name: "400 field rules", method: "POST", target: "/api/users", token: writeToken,
			header: map[string]string{"Content-Type": "application/json"}, body: `{"name":"  ","email":"not an address"}`,
			status: 400,
			wantBody: `{"error":"name must not be empty; email must be a plain address such as ann@example.com",` +
				`"fields":{"email":"email must be a plain address such as ann@example.com","name":"name must not be empty"}}`},
		{name: "400 unknown query parameter", method: "GET", target: "/api/users?pgae=2", token: readToken,
			status:   400,
			wantBody: `{"error":"unknown query parameter \"pgae\": the list takes page, per_page, q, email and sort"}`},
		{name: "401 no token", method: "GET", target: "/api/users",
			status:     401,
			wantHeader: map[string]string{"WWW-Authenticate": `Bearer realm="users"`},
			wantBody:   `{"error":"this API needs a bearer token: send the header Authorization: Bearer TOKEN"}`},
		{name: "401 unknown token", method: "GET", target: "/api/users", token: "no-such-token",
			status:     401,
			wantHeader: map[string]string{"WWW-Authenticate": `Bearer realm="users", error="invalid_token"`},
			wantBody:   `{"error":"the bearer token is malformed or unknown"}`},
		{name: "403 read token writes", method: "DELETE", target: "/api/users/2", token: readToken,
			status:     403,
			wantHeader: map[string]string{"WWW-Authenticate": `Bearer realm="users", error="insufficient_scope"`},
			wantBody:   `{"error":"this token may only read: any other method needs a token with the write role"}`},
		{name: "404 no such user", method: "GET", target: "/api/users/3", token: readToken,
			status:   404,
			wantBody: `{"error":"no user has this id"}`},
		{name: "404 id not canonical", method: "GET", target: "/api/users/01", token: readToken,
			status:   404,
			wantBody: `{"error":"no user has this id"}`},
		{name: "404 no such path", method: "GET", target: "/api/products", token: readToken,
			status:   404,
			wantBody: `{"error":"there is nothing at this path: the users are at /api/users"}`},
		{name: "405 method the path does not take", method: "DELETE", target: "/api/users", token: writeToken,
			status:     405,
			wantHeader: map[string]string{"Allow": "GET, HEAD, POST, OPTIONS"},
			wantBody:   `{"error":"this path does not take the method \"DELETE\": it takes GET, HEAD, POST, OPTIONS"}`},
		{name: "409 e-mail taken, in any case", method: "POST", target: "/api/users", token: writeToken,
			header: map[string]string{"Content-Type": "application/json"}, body: `{"name":"Bobby","email":"BOB@example.com"}`,
			status:   409,
			wantBody: `{"error":"another user already has this email"}`},
		{name: "412 If-Match not current", method: "PUT", target: "/api/users/1", token: writeToken,
			header:   map[string]string{"Content-Type": "application/json", "If-Match": `"an old tag"`},
			body:     `{"name":"Ann Lee","email":"ann@example.com"}`,
			status:   412,
			wantBody: `{"error":"the resource has changed since you read it: If-Match does not match its current ETag"}`},
		{name: "412 If-Match without its quotes", method: "PATCH", target: "/api/users/1", token: writeToken,
			header:   map[string]string{"Content-Type": "application/json", "If-Match": strings.Trim(annTag, `"`)},
			body:     `{"name":"Ann Lee"}`,
			status:   412,
			wantBody: `{"error":"If-Match holds no strong ETag, so none can be current: send the ETag header's value as it is, with its quotes and without W/"}`},
		{name: "413 body over 1 MiB", method: "POST", target: "/api/users", token: writeToken,
			header: map[string]string{"Content-Type": "application/json"}, body: `{"name":"` + strings.Repeat("a", maxBodyBytes) + `"}`,
			status:   413,
			wantBody: `{"error":"the body is larger than 1 MiB (1048576 bytes)"}`},
		{name: "415 body not JSON", method: "POST", target: "/api/users", token: writeToken,
			header: map[string]string{"Content-Type": "text/plain"}, body: `name=Carol`,
			status:     415,
			wantHeader: map[string]string{"Accept-Post": "application/json"},
			wantBody:   `{"error":"send the body as JSON, with Content-Type: application/json"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t)
			ts.create(t, "Ann", "ann@example.com")
			ts.create(t, "Bob", "bob@example.com")

			r := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			if tc.token != "" {
				r.Header.Set("Authorization", "Bearer "+tc.token)
			}
			for name, value := range tc.header {
				r.Header.Set(name, value)
			}
			w := ts.serve(r)

			if w.Code != tc.status {
				t.Errorf("status %d, want %d", w.Code, tc.status)
			}
			if got := w.Header().Get("Content-Type"); tc.status >= 400 && got != "application/json" {
				t.Errorf("Content-Type %q, want application/json: every error is the JSON error body", got)
			}
			for name, want := range tc.wantHeader {
				if got := w.Header().Get(name); got != want {
					t.Errorf("%s: %q, want %q", name, got, want)
				}
			}
			if got := w.Body.String(); got != tc.wantBody {
				t.Errorf("body\n  %s\nwant\n  %s", got, tc.wantBody)
			}
		})
	}
}

// HEAD answers as GET does, without the body. A recorder would keep a body a handler wrote for
// HEAD, which net/http drops, so this test goes over a real connection: httptest.NewServer.
func TestHeadIsGetWithoutTheBody(t *testing.T) {
	ts := newTestServer(t)
	ts.create(t, "Ann", "ann@example.com")
	server := httptest.NewServer(ts)
	defer server.Close()

	answers := map[string]*http.Response{}
	for _, method := range []string{"GET", "HEAD"} {
		r, err := http.NewRequest(method, server.URL+"/api/users/1", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Authorization", "Bearer "+readToken)
		resp, err := server.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if method == "HEAD" && len(body) != 0 {
			t.Errorf("HEAD has a body: %q", body)
		}
		answers[method] = resp
	}
	for _, name := range []string{"Content-Type", "Content-Length", "ETag", "Cache-Control"} {
		if get, head := answers["GET"].Header.Get(name), answers["HEAD"].Header.Get(name); get != head || get == "" {
			t.Errorf("%s: GET %q, HEAD %q; want the same", name, get, head)
		}
	}
}

// Once id 2^63-1 has been given, no id is left: a create is 409, since the stored state, not the
// request, stands in the way. Here the data file says so with its next_id.
func TestNoIDLeftIs409(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(path, []byte(`{"next_id": 9223372036854775808, "users": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, "-data", path)

	r := httptest.NewRequest("POST", "/api/users", strings.NewReader(`{"name":"Ann","email":"ann@example.com"}`))
	r.Header.Set("Authorization", "Bearer "+writeToken)
	r.Header.Set("Content-Type", "application/json")
	wantError(t, ts.serve(r), http.StatusConflict, "no id is left to give: every id up to 9223372036854775807 has been used once")
}

// With -data, a person may edit the file while the server runs. A save that cannot be loaded
// refuses every write with 503 and Retry-After: 1, and changes nothing, until the person fixes
// the file; reads go on (docs/durability.md, "Editing it while the server runs").
func TestABrokenEditIs503AndChangesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	ts := newTestServer(t, "-data", path)
	ts.create(t, "Ann", "ann@example.com")
	if err := os.WriteFile(path+".new", []byte(`{"users": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil { // saved as vim and VS Code save
		t.Fatal(err)
	}

	r := httptest.NewRequest("DELETE", "/api/users/1", nil)
	r.Header.Set("Authorization", "Bearer "+writeToken)
	w := ts.serve(r)
	wantError(t, w, http.StatusServiceUnavailable, "the data file was edited by hand and the edit cannot be loaded yet: the server's log says why; nothing changed")
	if w.Header().Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q, want 1", w.Header().Get("Retry-After"))
	}
	r = httptest.NewRequest("GET", "/api/users/1", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	if w := ts.serve(r); w.Code != http.StatusOK {
		t.Errorf("GET while the edit cannot be loaded: %d %s, want Ann still", w.Code, w.Body)
	}
}

// A write the disk fails is 500, and nothing more is said to the client: the log has the cause.
// The store keeps what it had, and the next write tries again. Here the store keeps its users in
// a file, and the write fails because a folder stands where its temporary file must go.
func TestFailedWriteIs500AndTheNextTriesAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	ts := newTestServer(t, "-data", path)
	ts.create(t, "Ann", "ann@example.com")
	if err := os.Mkdir(path+".tmp", 0o700); err != nil {
		t.Fatal(err)
	}

	deleteAnn := func() *httptest.ResponseRecorder {
		r := httptest.NewRequest("DELETE", "/api/users/1", nil)
		r.Header.Set("Authorization", "Bearer "+writeToken)
		return ts.serve(r)
	}
	w := deleteAnn()
	if w.Code != http.StatusInternalServerError || w.Body.String() != `{"error":"internal server error"}` {
		t.Fatalf("DELETE on a failing disk: %d %s, want 500 and the bare error", w.Code, w.Body)
	}
	records := ts.log.records("request failed")
	if len(records) != 1 {
		t.Fatalf("the log says %v, want one record of the cause of the 500", records)
	}
	if cause, _ := records[0]["error"].(string); !strings.Contains(cause, "users.json.tmp") {
		t.Errorf("the log gives the cause %q, want the write that failed", cause)
	}
	if users := allUsers(t, ts.store); len(users) != 1 {
		t.Errorf("the users are %v, want Ann still, as before the failed write", users)
	}

	os.Remove(path + ".tmp")
	if w := deleteAnn(); w.Code != http.StatusNoContent {
		t.Errorf("DELETE once the disk works again: %d %s, want 204", w.Code, w.Body)
	}
}
