package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A disk is what a case's service keeps its users on.
type disk int

const (
	noDisk     disk = iota // in memory only, as without -data
	failedDisk             // a journal whose file fails every write from now on
)

// What the API answers, a case for each status it sends, through httptest and the real handler.
// Each case starts from a fresh service holding Ann and Bob, created through the API.
func TestTheAPIAnswersEachStatus(t *testing.T) {
	type apiCase struct {
		name       string
		disk       disk
		method     string
		target     string
		token      string
		header     map[string]string // more request header fields
		body       string
		status     int
		wantHeader map[string]string // "" for a field that must be absent
		wantBody   string
	}
	// cases are the cases, given the users each fresh service holds and the ETag of Ann.
	cases := func(ann, bob user, annTag string) []apiCase {
		annPath, bobPath := userPath(ann.ID), userPath(bob.ID)
		annJSON := fmt.Sprintf(`{"id":%d,"name":"Ann","email":"ann@example.com"}`, ann.ID)
		bobJSON := fmt.Sprintf(`{"id":%d,"name":"Bob","email":"bob@example.com"}`, bob.ID)
		json := map[string]string{"Content-Type": "application/json"}
		return []apiCase{
			{name: "200 for the list", method: "GET", target: "/api/users", token: readToken,
				status:     200,
				wantHeader: map[string]string{"Content-Type": "application/json", "Cache-Control": "private, no-cache", "Vary": "Authorization"},
				wantBody:   `{"data":[` + annJSON + `,` + bobJSON + `],"total":2}`},
			{name: "200 for a user, with the ETag its create gave", method: "GET", target: annPath, token: readToken,
				status:     200,
				wantHeader: map[string]string{"ETag": annTag, "Cache-Control": "private, no-cache"},
				wantBody:   annJSON},
			{name: "200 for a PUT, with the user as stored", method: "PUT", target: annPath, token: writeToken,
				header: json, body: `{"name":" Ann Lee ","email":"ann@example.com"}`,
				status:     200,
				wantHeader: map[string]string{"Content-Location": annPath, "Cache-Control": "no-store"},
				wantBody:   fmt.Sprintf(`{"id":%d,"name":"Ann Lee","email":"ann@example.com"}`, ann.ID)},
			{name: "200 for a PATCH, which changes only what it names", method: "PATCH", target: bobPath, token: writeToken,
				header: map[string]string{"Content-Type": "application/merge-patch+json"}, body: `{"email":"bob@example.org"}`,
				status:     200,
				wantHeader: map[string]string{"Content-Location": bobPath},
				wantBody:   fmt.Sprintf(`{"id":%d,"name":"Bob","email":"bob@example.org"}`, bob.ID)},
			{name: "201 for a POST, naming the new user's URI", method: "POST", target: "/api/users", token: writeToken,
				header: json, body: `{"name":"Carol","email":"carol@example.com"}`,
				status:     201,
				wantHeader: map[string]string{"Location": userPath(bob.ID + 1), "Cache-Control": "no-store"},
				wantBody:   fmt.Sprintf(`{"id":%d,"name":"Carol","email":"carol@example.com"}`, bob.ID+1)},
			{name: "204 for a DELETE", method: "DELETE", target: bobPath, token: writeToken,
				status:     204,
				wantHeader: map[string]string{"Content-Type": ""}},
			{name: "204 for OPTIONS, with no token", method: "OPTIONS", target: "/api/users",
				status:     204,
				wantHeader: map[string]string{"Allow": "GET, HEAD, POST, OPTIONS", "Accept-Post": "application/json"}},
			{name: "304 when the client's copy is current", method: "GET", target: annPath, token: readToken,
				header:     map[string]string{"If-None-Match": annTag},
				status:     304,
				wantHeader: map[string]string{"ETag": annTag, "Content-Type": ""}},
			{name: "400 for a body that breaks the field rules", method: "POST", target: "/api/users", token: writeToken,
				header: json, body: `{"name":"  ","email":"not an address"}`,
				status:   400,
				wantBody: `{"error":"name must not be empty; email must be a plain address such as ann@example.com","fields":{"name":"name must not be empty","email":"email must be a plain address such as ann@example.com"}}`},
			{name: "400 for a query parameter the list does not take", method: "GET", target: "/api/users?pgae=2", token: readToken,
				status:   400,
				wantBody: `{"error":"unknown query parameter \"pgae\": the list takes page, per_page, q, email and sort"}`},
			{name: "401 without a token", method: "GET", target: "/api/users",
				status:     401,
				wantHeader: map[string]string{"WWW-Authenticate": `Bearer realm="users"`},
				wantBody:   `{"error":"this API needs a bearer token: send Authorization: Bearer <token>"}`},
			{name: "401 for an unknown token", method: "GET", target: "/api/users", token: "no-such-token",
				status:     401,
				wantHeader: map[string]string{"WWW-Authenticate": `Bearer realm="users", error="invalid_token"`},
				wantBody:   `{"error":"the bearer token is malformed or unknown"}`},
			{name: "403 for a read token on a write route", method: "DELETE", target: bobPath, token: readToken,
				status:     403,
				wantHeader: map[string]string{"WWW-Authenticate": `Bearer realm="users", error="insufficient_scope"`},
				wantBody:   `{"error":"this token may only read: changing users needs a token with the write role"}`},
			{name: "404 for a user that does not exist", method: "GET", target: userPath(bob.ID + 100), token: readToken,
				status:   404,
				wantBody: `{"error":"no user has this id"}`},
			{name: "404 for an id not in canonical form", method: "GET", target: "/api/users/0" + fmt.Sprint(ann.ID), token: readToken,
				status:   404,
				wantBody: `{"error":"no user has this id"}`},
			{name: "404 for a path not in the routes", method: "GET", target: "/api/products", token: readToken,
				status:   404,
				wantBody: `{"error":"there is nothing at this path: the users are at /api/users"}`},
			{name: "405 for a method the path does not take", method: "DELETE", target: "/api/users", token: writeToken,
				status:     405,
				wantHeader: map[string]string{"Allow": "GET, HEAD, POST, OPTIONS"},
				wantBody:   `{"error":"this path does not take the method \"DELETE\": it takes GET, HEAD, POST, OPTIONS"}`},
			{name: "409 for an e-mail another user has, in any case", method: "POST", target: "/api/users", token: writeToken,
				header: json, body: `{"name":"Bobby","email":"BOB@example.com"}`,
				status:   409,
				wantBody: `{"error":"another user already has this email"}`},
			{name: "412 when If-Match is not the current ETag", method: "PUT", target: annPath, token: writeToken,
				header:   map[string]string{"Content-Type": "application/json", "If-Match": `"0000000000000000"`},
				body:     `{"name":"Ann Lee","email":"ann@example.com"}`,
				status:   412,
				wantBody: `{"error":"the resource has changed since you read it: If-Match does not match its current ETag"}`},
			{name: "413 for a body over 1 MiB", method: "POST", target: "/api/users", token: writeToken,
				header: json, body: `{"name":"` + strings.Repeat("a", maxBodyBytes) + `"}`,
				status:   413,
				wantBody: `{"error":"the body is larger than 1 MiB (1048576 bytes)"}`},
			{name: "415 for a body that is not JSON, naming what POST takes", method: "POST", target: "/api/users", token: writeToken,
				header: map[string]string{"Content-Type": "text/plain"}, body: `name=Carol`,
				status:     415,
				wantHeader: map[string]string{"Accept-Post": "application/json"},
				wantBody:   `{"error":"send the body as JSON, with Content-Type: application/json"}`},
			{name: "500 when the disk fails, and nothing more said", disk: failedDisk, method: "DELETE", target: bobPath, token: writeToken,
				status:     500,
				wantHeader: map[string]string{"Cache-Control": "no-store"},
				wantBody:   `{"error":"internal server error"}`},
		}
	}

	// Every case has the same shape, so one loop sends them all. The zero users give the names.
	for i, tc := range cases(user{}, user{}, "") {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t)
			if tc.disk == failedDisk {
				store, _ := openJournal(t, newJournalPath(t), 1<<20)
				ts = serverOn(t, store, testConfig(t))
			}
			ann, annTag := ts.create(t, "Ann", "ann@example.com")
			bob, _ := ts.create(t, "Bob", "bob@example.com")
			if tc.disk == failedDisk {
				ts.store.journal.file.Close() // every later write to the file fails
			}
			tc := cases(ann, bob, annTag)[i] // the case with this service's own ids and tags
			r := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			if tc.token != "" {
				r.Header.Set("Authorization", "Bearer "+tc.token)
			}
			for name, value := range tc.header {
				r.Header.Set(name, value)
			}
			w := ts.serve(r)
			wantStatus(t, w, tc.status)
			wantHeaders(t, w.Header(), tc.wantHeader)
			wantBody(t, w, tc.wantBody)
		})
	}
}

// A 500 tells the client nothing more; the log has the cause, with the request's id.
func TestA500LogsItsCause(t *testing.T) {
	store, _ := openJournal(t, newJournalPath(t), 1<<20)
	ts := serverOn(t, store, testConfig(t))
	ann, _ := ts.create(t, "Ann", "ann@example.com")
	store.journal.file.Close() // every later write to the file fails, as on a disk that has failed

	r := httptest.NewRequest("DELETE", userPath(ann.ID), nil)
	r.Header.Set("Authorization", "Bearer "+writeToken)
	r.Header.Set("X-Request-Id", "the-failed-delete")
	w := ts.serve(r)

	wantError(t, w, http.StatusInternalServerError, "internal server error")
	failed := ts.log.records(t, "request failed")
	if len(failed) != 1 || failed[0]["request_id"] != "the-failed-delete" || !strings.Contains(fmt.Sprint(failed[0]["error"]), "file already closed") {
		t.Errorf("the log has %v, want one record of the failed request with its id and cause", failed)
	}
}
