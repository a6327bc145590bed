package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The rules of auth.go: bearer tokens (RFC 6750) and roles (docs/api.md, "Authentication"), proved
// on parseTokens, tokens.authenticate and requireRole.

// authTestTokens are the tokens of newTestServer: writeToken may write, readToken may only read.
func authTestTokens(t *testing.T) tokens {
	t.Helper()
	known, err := parseTokens(writeToken + ":write," + readToken + ":read")
	if err != nil {
		t.Fatal(err)
	}
	return known
}

// The scheme Bearer is matched in any case (RFC 9110 §11.1), and one or more spaces may separate
// it from the token; the token gives its role.
func TestBearerSchemeIsCaseInsensitiveAndTakesSeveralSpaces(t *testing.T) {
	known := authTestTokens(t)
	for _, tt := range []struct {
		authorization string
		want          role
	}{
		{"Bearer " + readToken, roleRead},
		{"Bearer " + writeToken, roleWrite},
		{"bearer " + readToken, roleRead},
		{"BEARER " + writeToken, roleWrite},
		{"bEaReR " + readToken, roleRead},
		{"Bearer    " + writeToken, roleWrite},
	} {
		r := httptest.NewRequest("GET", "/api/users", nil)
		r.Header.Set("Authorization", tt.authorization)
		if got, err := known.authenticate(r); err != nil || got != tt.want {
			t.Errorf("Authorization %q: role %v, error %v; want role %v", tt.authorization, got, err, tt.want)
		}
	}
}

// Without a bearer token the challenge names only the realm; with a token that is malformed or
// unknown it says error="invalid_token" (RFC 6750 §3.1). A malformed token is an unknown one, so
// the message never says which part was wrong.
func TestAuthorizationThatIsNotOneKnownBearerTokenIs401WithItsChallenge(t *testing.T) {
	tests := []struct {
		name          string
		authorization []string // each is one Authorization header line
		want          *apiError
	}{
		{"no Authorization header", nil, errNoToken},
		{"another scheme", []string{"Basic dGVzdDp0ZXN0"}, errNoToken},
		{"a blank header", []string{"   "}, errNoToken},
		{"Bearer run into the token", []string{"Bearer" + readToken}, errNoToken},
		{"Bearer without a token", []string{"Bearer"}, errInvalidToken},
		{"Bearer and a space but no token", []string{"Bearer "}, errInvalidToken},
		{"an unknown token", []string{"Bearer no-such-token"}, errInvalidToken},
		{"a token with characters outside b64token", []string{"Bearer tok!en"}, errInvalidToken},
		{"something after the token", []string{"Bearer " + readToken + " extra"}, errInvalidToken},
		{"a known token with a character more", []string{"Bearer " + readToken + "x"}, errInvalidToken},
		{"a known token but its last character", []string{"Bearer " + readToken[:len(readToken)-1]}, errInvalidToken},
		{"two Authorization headers", []string{"Bearer " + readToken, "Bearer " + readToken}, errInvalidToken},
		{"two Authorization headers, the first empty", []string{"", "Bearer " + readToken}, errInvalidToken},
	}
	known := authTestTokens(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api/users", nil)
			for _, line := range tt.authorization {
				r.Header.Add("Authorization", line)
			}
			granted, err := known.authenticate(r)
			if err != tt.want {
				t.Errorf("error %#v, want %#v", err, tt.want)
			}
			if granted != 0 {
				t.Errorf("a refused token was granted the role %v", granted)
			}
		})
	}
	// What each refusal says, and its challenge.
	for _, tt := range []struct {
		refusal            *apiError
		message, challenge string
	}{
		{errNoToken, "this API needs a bearer token: send Authorization: Bearer <token>", `Bearer realm="users"`},
		{errInvalidToken, "the bearer token is malformed or unknown", `Bearer realm="users", error="invalid_token"`},
	} {
		if tt.refusal.status != 401 || tt.refusal.message != tt.message {
			t.Errorf("answered %d %q, want 401 %q", tt.refusal.status, tt.refusal.message, tt.message)
		}
		wantHeaders(t, tt.refusal.header, map[string]string{"WWW-Authenticate": tt.challenge})
	}
}

// A token may use every character of RFC 6750's b64token, padding included.
func TestTokensWithTheFullB64TokenAlphabetAreAccepted(t *testing.T) {
	token := "Az09-._~+/=="
	known, err := parseTokens(token + ":read")
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/api/users", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	if granted, err := known.authenticate(r); err != nil || granted != roleRead {
		t.Errorf("role %v, error %v; want the read role", granted, err)
	}
}

// A read token on a route that writes is 403, with a challenge that says
// error="insufficient_scope" (RFC 6750 §3.1); the write token passes. The write role covers the
// read role. A request no authentication has seen (a handler served without guardAPI) is 401.
func TestWriteTokenMayAlsoReadButAReadTokenOnAWriteRouteIs403(t *testing.T) {
	for _, tt := range []struct {
		name    string
		granted role // 0: a request that went through no authentication
		needed  role
		want    error
	}{
		{"the write role on a write route", roleWrite, roleWrite, nil},
		{"the write role on a read route", roleWrite, roleRead, nil},
		{"the read role on a read route", roleRead, roleRead, nil},
		{"the read role on a write route", roleRead, roleWrite, errReadOnly},
		{"no role at all on a write route", 0, roleWrite, errNoToken},
		{"no role at all on a read route", 0, roleRead, errNoToken},
	} {
		r := httptest.NewRequest("DELETE", "/api/users/1", nil)
		if tt.granted != 0 {
			r = withRole(r, tt.granted)
		}
		if err := requireRole(r, tt.needed); err != tt.want {
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.want)
		}
	}
	if errReadOnly.status != 403 || errReadOnly.message != "this token may only read: changing users needs a token with the write role" {
		t.Errorf("a read token on a write route is answered %d %q", errReadOnly.status, errReadOnly.message)
	}
	wantHeaders(t, errReadOnly.header, map[string]string{"WWW-Authenticate": `Bearer realm="users", error="insufficient_scope"`})

	// Through the whole service: the write token reads the list and a user.
	ts := newTestServer(t)
	ann := ts.create(t, "Ann", "ann@example.com")
	for _, target := range []string{"/api/users", userPath(ann.ID)} {
		r := httptest.NewRequest("GET", target, nil)
		r.Header.Set("Authorization", "Bearer "+writeToken)
		if w := ts.serve(r); w.Code != http.StatusOK {
			t.Errorf("GET %s with the write token: status %d, want 200; body %s", target, w.Code, w.Body)
		}
	}
}

// The Authorization parser grants a role exactly when there is one header holding the scheme
// Bearer (in any case), one or more spaces and a configured token, and nothing else; every other
// header is a 401 with the right challenge, which never repeats what was sent.
func FuzzAuthorization(f *testing.F) {
	for _, value := range []string{
		"Bearer " + writeToken, "bearer " + readToken, "BEARER    " + writeToken, "Bearer", "Bearer ", "Bearer  ",
		"Bearer " + writeToken + " ", "Bearer " + writeToken + "x", "Bearer\t" + writeToken, "Basic dXNlcjpwYXNz",
		"Token " + writeToken, writeToken, "", " ", "Bearer a=", "Bearer ==", "Bearer a=b", "Bearer tëst",
		"Bearer " + writeToken + "\x00", "Bearer " + strings.Repeat("~", 300),
	} {
		f.Add(value, "", false)
		f.Add(value, "Bearer "+writeToken, true)
	}
	tokenSet, err := parseTokens(writeToken + ":write," + readToken + ":read")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, value, second string, twoHeaders bool) {
		r := &http.Request{Header: http.Header{"Authorization": {value}}}
		if twoHeaders {
			r.Header["Authorization"] = append(r.Header["Authorization"], second)
		}
		granted, err := tokenSet.authenticate(r)

		var want role // 0: none
		scheme, rest, spaced := strings.Cut(value, " ")
		if !twoHeaders && strings.EqualFold(scheme, "bearer") && spaced {
			want = map[string]role{writeToken: roleWrite, readToken: roleRead}[strings.TrimLeft(rest, " ")]
		}
		if granted != want {
			t.Fatalf("Authorization %q (a second header: %v) granted role %d, want %d", value, twoHeaders, granted, want)
		}
		if want != 0 {
			if err != nil {
				t.Fatalf("granted a role, and an error: %v", err)
			}
			return
		}
		// No token or another scheme asks for a token; a bad token, or more than one header, says
		// it is invalid (docs/api.md, "Authentication", RFC 6750 §3). Both are fixed answers:
		// nothing sent is repeated.
		e, problem := fuzzClientAnswer(err, http.StatusUnauthorized)
		if problem != nil {
			t.Fatal(problem)
		}
		wantRefusal := errInvalidToken
		if !twoHeaders && (strings.TrimSpace(value) == "" || !strings.EqualFold(scheme, "bearer")) {
			wantRefusal = errNoToken
		}
		if e != wantRefusal {
			t.Fatalf("Authorization %q (a second header: %v): %q with %v, want %q with %v",
				value, twoHeaders, e.message, e.header, wantRefusal.message, wantRefusal.header)
		}
	})
}
