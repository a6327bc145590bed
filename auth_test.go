package main

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// The rules of auth.go (docs/api.md, "Authentication" and "The order of the checks"): the tokens of
// USERS_TOKENS, read by parseTokens; the bearer token of a request, read by tokens.authenticate as
// RFC 6750 §2.1 writes it; and permission by method, checked with it in front of the routes.

// A malformed USERS_TOKENS is refused whole, never half-read. The message names the entry by its
// position and never shows a token: the value is a secret. (Every token here holds "s3cr3t".)
func TestParseTokensRefusesAMalformedEntry(t *testing.T) {
	tests := []struct {
		name, value    string
		entry, problem string // what the message must name
	}{
		{"an empty entry at the end", "s3cr3t-w:write,", "entry 2", "empty"},
		{"an empty entry between two", "s3cr3t-w:write,,s3cr3t-r:read", "entry 2", "empty"},
		{"an empty token", "s3cr3t-w:write, :read", "entry 2", "empty token"},
		{"no role", "s3cr3t-w", "entry 1", "role"},
		{"an unknown role", "s3cr3t-w:admin", "entry 1", "role"},
		{"a role in capitals", "s3cr3t-w:Write", "entry 1", "role"},
		{"a space inside a token", "s3cr3t-w:write,s3cr3t r:read", "entry 2", "characters"},
		{"a letter outside ASCII", "s3cr3t-\u00e9:write", "entry 1", "characters"},
		{"= inside a token, not at its end", "s3cr3t=w:write", "entry 1", "characters"},
		{"the same token twice", "s3cr3t-w:write,s3cr3t-w:read", "entries 1 and 2", "same token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			known, err := parseTokens(tt.value)
			if err == nil || known != nil {
				t.Fatalf("parseTokens(%q) = %v, %v; want no tokens and an error", tt.value, known, err)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.entry) || !strings.Contains(msg, tt.problem) || strings.Contains(msg, "s3cr3t") {
				t.Errorf("the error %q: want it to name %s and say %q, and show no token", msg, tt.entry, tt.problem)
			}
		})
	}
}

// A known token gives its role. The scheme Bearer is matched in any case (RFC 9110 §11.1), one or
// more spaces separate it from the token, and a token may use every character of RFC 6750's
// b64token, padding included. White space around the entries of USERS_TOKENS is trimmed.
func TestBearerTokenGivesItsRole(t *testing.T) {
	const b64token = "Az09-._~+/=="
	known, err := parseTokens(" " + writeToken + ":write ,\t" + readToken + ":read, " + b64token + ":read\n")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, authorization string
		want                role
	}{
		{"the write token", "Bearer " + writeToken, roleWrite},
		{"the read token", "Bearer " + readToken, roleRead},
		{"lower case", "bearer " + readToken, roleRead},
		{"upper case", "BEARER " + writeToken, roleWrite},
		{"several spaces", "Bearer    " + writeToken, roleWrite},
		{"every b64token character", "Bearer " + b64token, roleRead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api/users", nil)
			r.Header.Set("Authorization", tt.authorization)
			if got, err := known.authenticate(r); err != nil || got != tt.want {
				t.Errorf("Authorization %q: role %v, error %v; want role %v", tt.authorization, got, err, tt.want)
			}
		})
	}
}

// A request without a usable token is 401 with an RFC 6750 §3 challenge: only the realm when it
// sent no bearer token (no header, a blank one, or another scheme: the scheme ends at the first
// space), error="invalid_token" when the token is empty, malformed or unknown, or comes in two
// headers. A malformed token is an unknown one, so the answer never says which part was wrong.
// The body is the JSON error that says which of the two it is. Here each is a POST that would
// create a user: the store stays empty.
func TestRefusedTokenIs401WithItsChallenge(t *testing.T) {
	const noToken, invalidToken = `Bearer realm="users"`, `Bearer realm="users", error="invalid_token"`
	message := map[string]string{
		noToken:      "this API needs a bearer token: send the header Authorization: Bearer TOKEN",
		invalidToken: "the bearer token is malformed or unknown",
	}
	tests := []struct {
		name          string
		authorization []string // each is one Authorization header line
		challenge     string
	}{
		{"no header", nil, noToken},
		{"a blank header", []string{"   "}, noToken},
		{"another scheme", []string{"Basic dXNlcjpwYXNz"}, noToken},
		{"a tab after Bearer", []string{"Bearer\t" + writeToken}, noToken},
		{"Bearer alone", []string{"Bearer"}, invalidToken},
		{"an unknown token", []string{"Bearer no-such-token"}, invalidToken},
		{"not a b64token", []string{"Bearer tok!en"}, invalidToken},
		{"something after the token", []string{"Bearer " + writeToken + " extra"}, invalidToken},
		{"one character more", []string{"Bearer " + writeToken + "x"}, invalidToken},
		{"one character less", []string{"Bearer " + writeToken[:len(writeToken)-1]}, invalidToken},
		{"two headers", []string{"Bearer " + writeToken, "Bearer " + writeToken}, invalidToken},
		{"two headers, the first empty", []string{"", "Bearer " + writeToken}, invalidToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t)
			r := httptest.NewRequest("POST", "/api/users", strings.NewReader(`{"name":"Ann","email":"ann@example.com"}`))
			r.Header.Set("Content-Type", "application/json")
			for _, line := range tt.authorization {
				r.Header.Add("Authorization", line)
			}
			w := ts.serve(r)
			wantError(t, w, http.StatusUnauthorized, message[tt.challenge])
			if got := w.Header().Get("WWW-Authenticate"); got != tt.challenge {
				t.Errorf("WWW-Authenticate %q, want %s", got, tt.challenge)
			}
			if users := allUsers(t, ts.store); len(users) != 0 {
				t.Errorf("a refused request created %v", users)
			}
		})
	}
}

// Every request under /api/ but OPTIONS is judged in this order, stopping at the first failure:
// the token (401), then permission by method (403: GET and HEAD need a read or write token, every
// other method a write token, whatever the path), then routing (404, 405). So a caller without
// permission learns nothing about what exists or which routes take what. OPTIONS needs no token
// and ignores any. A path that begins with /api/ is judged so before ServeMux redirects it; one
// that does not is redirected without a token. No answer here changes the store.
func TestTokenThenPermissionThenRouting(t *testing.T) {
	const redirect = 3 // any 3xx: the status of ServeMux's redirect depends on the Go version
	tests := []struct {
		method, target                     string
		anonymous, unknown, reader, writer int // the status for no token, an unknown one, the read token, the write token
	}{
		{"GET", "/api/users/1", 401, 401, 200, 200},
		{"HEAD", "/api/users", 401, 401, 200, 200},
		{"GET", "/api/nothing", 401, 401, 404, 404},
		{"POST", "/api/users", 401, 401, 403, 415},
		{"DELETE", "/api/users/999", 401, 401, 403, 404},
		{"DELETE", "/api/users", 401, 401, 403, 405},
		{"POST", "/api/nothing", 401, 401, 403, 404},
		{"FOO", "/api/users", 401, 401, 403, 405},
		{"OPTIONS", "/api/users/1", 204, 204, 204, 204},
		{"OPTIONS", "/api/nothing", 404, 404, 404, 404},
		{"DELETE", "/api//users/1", 401, 401, 403, redirect},
		{"GET", "//api/users", redirect, redirect, redirect, redirect},
	}
	ts := newTestServer(t)
	ann := ts.create(t, "Ann", "ann@example.com")
	for _, tt := range tests {
		for _, token := range []struct {
			name, bearer string
			want         int
		}{{"no token", "", tt.anonymous}, {"an unknown token", "no-such-token", tt.unknown}, {"the read token", readToken, tt.reader}, {"the write token", writeToken, tt.writer}} {
			t.Run(tt.method+" "+tt.target+" with "+token.name, func(t *testing.T) {
				r := httptest.NewRequest(tt.method, tt.target, nil)
				if token.bearer != "" {
					r.Header.Set("Authorization", "Bearer "+token.bearer)
				}
				w := ts.serve(r)
				if w.Code != token.want && !(token.want == redirect && w.Code/100 == redirect) {
					t.Errorf("status %d, want %d", w.Code, token.want)
				}
				if challenge := w.Header().Get("WWW-Authenticate"); w.Code == http.StatusForbidden && challenge != `Bearer realm="users", error="insufficient_scope"` {
					t.Errorf("a 403 with WWW-Authenticate %q, want the insufficient_scope challenge", challenge)
				}
				if users := allUsers(t, ts.store); !reflect.DeepEqual(users, []user{ann}) {
					t.Errorf("the store holds %v, want Ann alone, as before", users)
				}
			})
		}
	}
}

// The Authorization parser grants a role exactly when there is one header holding the scheme
// Bearer (in any case), one or more spaces and a known token, and nothing else; every other header
// is refused, asking for a token when no bearer token was sent at all. ./fuzz.sh runs it.
func FuzzAuthorization(f *testing.F) {
	for _, value := range []string{
		"Bearer " + writeToken, "bearer " + readToken, "Bearer", "Bearer ", "Bearer " + writeToken + " ",
		"Bearer\t" + writeToken, "Basic dXNlcjpwYXNz", writeToken, "", " ", "Bearer a=", "Bearer a=b", "Bearer t\u00ebst",
	} {
		f.Add(value, "", false)
		f.Add(value, "Bearer "+writeToken, true)
	}
	known, err := parseTokens(writeToken + ":write," + readToken + ":read")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, value, second string, twoHeaders bool) {
		r := httptest.NewRequest("GET", "/api/users", nil)
		r.Header["Authorization"] = []string{value} // as sent: Header.Set would tidy it
		if twoHeaders {
			r.Header["Authorization"] = append(r.Header["Authorization"], second)
		}
		granted, err := known.authenticate(r)

		scheme, rest, spaced := strings.Cut(value, " ")
		var want role // 0: none
		if !twoHeaders && strings.EqualFold(scheme, "Bearer") && spaced {
			want = map[string]role{writeToken: roleWrite, readToken: roleRead}[strings.TrimLeft(rest, " ")]
		}
		wantErr := errInvalidToken
		if !twoHeaders && (strings.TrimSpace(value) == "" || !strings.EqualFold(scheme, "Bearer")) {
			wantErr = errNoToken
		}
		switch {
		case granted != want:
			t.Fatalf("Authorization %q (a second header: %v) granted role %d, want %d", value, twoHeaders, granted, want)
		case want != 0 && err != nil:
			t.Fatalf("Authorization %q granted a role, and an error: %v", value, err)
		case want == 0 && err != error(wantErr):
			t.Fatalf("Authorization %q (a second header: %v): error %v, want %v", value, twoHeaders, err, wantErr)
		}
	})
}
