package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// What the API answers, a case for each status it sends, through httptest and the real handler.
// Each case starts from a fresh service holding Ann and Bob, created through the API. In a case,
// {ann} and {bob} stand for their ids, {next} for the id the next create gets, and {annTag} for
// the ETag that Ann's create answered with.
func TestTheAPIAnswersEachStatus(t *testing.T) {
	jsonBody := map[string]string{"Content-Type": "application/json"}
	tests := []struct {
		name       string
		diskFails  bool // the service keeps its users in a journal, and its disk fails from the start of the case
		method     string
		target     string
		token      string
		header     map[string]string // more request header fields
		body       string
		status     int
		wantHeader map[string]string // "" for a field that must be absent
		wantBody   string
	}{
		{name: "200 for the list", method: "GET", target: "/api/users", token: readToken,
			status:     200,
			wantHeader: map[string]string{"Content-Type": "application/json", "Cache-Control": "private, no-cache", "Vary": "Authorization"},
			wantBody:   `{"data":[{"id":{ann},"name":"Ann","email":"ann@example.com"},{"id":{bob},"name":"Bob","email":"bob@example.com"}],"total":2}`},
		{name: "200 for a user, with the ETag its create gave", method: "GET", target: "/api/users/{ann}", token: readToken,
			status:     200,
			wantHeader: map[string]string{"ETag": "{annTag}", "Cache-Control": "private, no-cache"},
			wantBody:   `{"id":{ann},"name":"Ann","email":"ann@example.com"}`},
		{name: "200 for a PUT, with the user as stored", method: "PUT", target: "/api/users/{ann}", token: writeToken,
			header: jsonBody, body: `{"name":" Ann Lee ","email":"ann@example.com"}`,
			status:     200,
			wantHeader: map[string]string{"Content-Location": "/api/users/{ann}", "Cache-Control": "no-store"},
			wantBody:   `{"id":{ann},"name":"Ann Lee","email":"ann@example.com"}`},
		{name: "200 for a PATCH, which changes only what it names", method: "PATCH", target: "/api/users/{bob}", token: writeToken,
			header: map[string]string{"Content-Type": "application/merge-patch+json"}, body: `{"email":"bob@example.org"}`,
			status:     200,
			wantHeader: map[string]string{"Content-Location": "/api/users/{bob}"},
			wantBody:   `{"id":{bob},"name":"Bob","email":"bob@example.org"}`},
		{name: "201 for a POST, naming the new user's URI", method: "POST", target: "/api/users", token: writeToken,
			header: jsonBody, body: `{"name":"Carol","email":"carol@example.com"}`,
			status:     201,
			wantHeader: map[string]string{"Location": "/api/users/{next}", "Cache-Control": "no-store"},
			wantBody:   `{"id":{next},"name":"Carol","email":"carol@example.com"}`},
		{name: "204 for a DELETE", method: "DELETE", target: "/api/users/{bob}", token: writeToken,
			status:     204,
			wantHeader: map[string]string{"Content-Type": ""}},
		{name: "204 for OPTIONS, with no token", method: "OPTIONS", target: "/api/users",
			status:     204,
			wantHeader: map[string]string{"Allow": "GET, HEAD, POST, OPTIONS", "Accept-Post": "application/json"}},
		{name: "304 when the client's copy is current", method: "GET", target: "/api/users/{ann}", token: readToken,
			header:     map[string]string{"If-None-Match": "{annTag}"},
			status:     304,
			wantHeader: map[string]string{"ETag": "{annTag}", "Content-Type": ""}},
		{name: "400 for a body that breaks the field rules", method: "POST", target: "/api/users", token: writeToken,
			header: jsonBody, body: `{"name":"  ","email":"not an address"}`,
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
		{name: "403 for a read token on a write route", method: "DELETE", target: "/api/users/{bob}", token: readToken,
			status:     403,
			wantHeader: map[string]string{"WWW-Authenticate": `Bearer realm="users", error="insufficient_scope"`},
			wantBody:   `{"error":"this token may only read: changing users needs a token with the write role"}`},
		{name: "404 for a user that does not exist", method: "GET", target: "/api/users/{next}", token: readToken,
			status:   404,
			wantBody: `{"error":"no user has this id"}`},
		{name: "404 for an id not in canonical form", method: "GET", target: "/api/users/0{ann}", token: readToken,
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
			header: jsonBody, body: `{"name":"Bobby","email":"BOB@example.com"}`,
			status:   409,
			wantBody: `{"error":"another user already has this email"}`},
		{name: "412 when If-Match is not the current ETag", method: "PUT", target: "/api/users/{ann}", token: writeToken,
			header:   map[string]string{"Content-Type": "application/json", "If-Match": `"0000000000000000"`},
			body:     `{"name":"Ann Lee","email":"ann@example.com"}`,
			status:   412,
			wantBody: `{"error":"the resource has changed since you read it: If-Match does not match its current ETag"}`},
		{name: "413 for a body over 1 MiB", method: "POST", target: "/api/users", token: writeToken,
			header: jsonBody, body: `{"name":"` + strings.Repeat("a", maxBodyBytes) + `"}`,
			status:   413,
			wantBody: `{"error":"the body is larger than 1 MiB (1048576 bytes)"}`},
		{name: "415 for a body that is not JSON, naming what POST takes", method: "POST", target: "/api/users", token: writeToken,
			header: map[string]string{"Content-Type": "text/plain"}, body: `name=Carol`,
			status:     415,
			wantHeader: map[string]string{"Accept-Post": "application/json"},
			wantBody:   `{"error":"send the body as JSON, with Content-Type: application/json"}`},
		{name: "500 when the disk fails, and nothing more said", diskFails: true, method: "DELETE", target: "/api/users/{bob}", token: writeToken,
			status:     500,
			wantHeader: map[string]string{"Cache-Control": "no-store"},
			wantBody:   `{"error":"internal server error"}`},
	}
	// Every case has the same shape, so one loop sends them all.
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			disk := &failingDisk{step: stepSync}
			ts := serverOn(t, openFileStore(t, newDataPath(t), disk), testConfig(t))
			ann, annTag := ts.create(t, "Ann", "ann@example.com")
			bob, _ := ts.create(t, "Bob", "bob@example.com")
			if tc.diskFails {
				disk.failing.Store(true)
			}
			fill := strings.NewReplacer("{ann}", fmt.Sprint(ann.ID), "{bob}", fmt.Sprint(bob.ID),
				"{next}", fmt.Sprint(bob.ID+1), "{annTag}", annTag).Replace
			r := httptest.NewRequest(tc.method, fill(tc.target), strings.NewReader(tc.body))
			if tc.token != "" {
				r.Header.Set("Authorization", "Bearer "+tc.token)
			}
			for name, value := range tc.header {
				r.Header.Set(name, fill(value))
			}
			w := ts.serve(r)
			wantStatus(t, w, tc.status)
			for name, value := range tc.wantHeader {
				wantHeaders(t, w.Header(), map[string]string{name: fill(value)})
			}
			wantBody(t, w, fill(tc.wantBody))
		})
	}
}

// Once a write has failed on the disk, /healthz answers 503, so that a script or an orchestrator
// sees that the server can no longer write; reads go on.
func TestHealthIs503OnceAWriteHasFailed(t *testing.T) {
	disk := &failingDisk{step: stepSync}
	ts := serverOn(t, openFileStore(t, newDataPath(t), disk), testConfig(t))
	ann, _ := ts.create(t, "Ann", "ann@example.com")
	health := ts.serve(httptest.NewRequest("GET", "/healthz", nil))
	wantStatus(t, health, http.StatusOK)
	wantBody(t, health, `{"status":"ok"}`)

	disk.failing.Store(true)
	r := httptest.NewRequest("DELETE", userPath(ann.ID), nil)
	r.Header.Set("Authorization", "Bearer "+writeToken)
	wantStatus(t, ts.serve(r), http.StatusInternalServerError)

	health = ts.serve(httptest.NewRequest("GET", "/healthz", nil))
	wantStatus(t, health, http.StatusServiceUnavailable)
	wantBody(t, health, `{"status":"data file not writable"}`)
	if users := ts.users(t); len(users) != 1 || users[0] != ann {
		t.Errorf("the users are %v, want Ann alone, as before the failed write", users)
	}
}
