package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The rules of auth.go: bearer tokens (RFC 6750) and roles (docs/api.md, "Authentication"), proved
// on tokens.authenticate and requireRole.

// testTokens are the tokens of newTestServer: writeToken may write, readToken may only read.
func testTokens(t *testing.T) tokens {
	t.Helper()
	known, err := parseTokens(writeToken + ":write," + readToken + ":read")
	if err != nil {
		t.Fatal(err)
	}
	return known
}

// withAuthorization is a request with one Authorization header line for each of lines.
func withAuthorization(lines ...string) *http.Request {
	r := httptest.NewRequest("GET", "/api/users", nil)
	for _, line := range lines {
		r.Header.Add("Authorization", line)
	}
	return r
}

func TestBearerSchemeIsCaseInsensitiveAndTakesSeveralSpaces(t *testing.T) {
	known := testTokens(t)
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
		if got, err := known.authenticate(withAuthorization(tt.authorization)); err != nil || got != tt.want {
			t.Errorf("Authorization %q: role %v, error %v; want role %v", tt.authorization, got, err, tt.want)
		}
	}
}

// Without a bearer token the challenge names only the realm; with a token that is malformed or
// unknown it says error="invalid_token" (RFC 6750 §3.1). A malformed token is an unknown one, so
// the message never says which part was wrong.
func TestAuthorizationThatIsNotOneKnownBearerTokenIs401WithItsChallenge(t *testing.T) {
	type refusal struct{ challenge, message string }
	noToken := refusal{`Bearer realm="users"`, "this API needs a bearer token: send Authorization: Bearer <token>"}
	invalidToken := refusal{`Bearer realm="users", error="invalid_token"`, "the bearer token is malformed or unknown"}
	tests := []struct {
		name          string
		authorization []string // each is one Authorization header line
		want          refusal
	}{
		{"no Authorization header", nil, noToken},
		{"another scheme", []string{"Basic dGVzdDp0ZXN0"}, noToken},
		{"a blank header", []string{"   "}, noToken},
		{"Bearer run into the token", []string{"Bearer" + readToken}, noToken},
		{"Bearer without a token", []string{"Bearer"}, invalidToken},
		{"Bearer and a space but no token", []string{"Bearer "}, invalidToken},
		{"an unknown token", []string{"Bearer no-such-token"}, invalidToken},
		{"a token with characters outside b64token", []string{"Bearer tok!en"}, invalidToken},
		{"something after the token", []string{"Bearer " + readToken + " extra"}, invalidToken},
		{"a known token with a character more", []string{"Bearer " + readToken + "x"}, invalidToken},
		{"a known token but its last character", []string{"Bearer " + readToken[:len(readToken)-1]}, invalidToken},
		{"two Authorization headers", []string{"Bearer " + readToken, "Bearer " + readToken}, invalidToken},
		{"two Authorization headers, the first empty", []string{"", "Bearer " + readToken}, invalidToken},
	}
	known := testTokens(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			granted, err := known.authenticate(withAuthorization(tt.authorization...))
			e := wantAPIError(t, err, http.StatusUnauthorized, tt.want.message)
			wantHeader(t, e.header, "WWW-Authenticate", tt.want.challenge)
			if granted != roleNone {
				t.Errorf("a refused token was granted the role %v", granted)
			}
		})
	}
}

func TestTokensWithTheFullB64TokenAlphabetAreAccepted(t *testing.T) {
	token := "Az09-._~+/=="
	known, err := parseTokens(token + ":read")
	if err != nil {
		t.Fatal(err)
	}
	if granted, err := known.authenticate(withAuthorization("Bearer " + token)); err != nil || granted != roleRead {
		t.Errorf("role %v, error %v; want the read role", granted, err)
	}
}

// The write role covers the read role; a read token on a route that writes is 403, with a
// challenge that says error="insufficient_scope" (RFC 6750 §3.1). Routes that need no token let
// every request through.
func TestWriteTokenMayAlsoReadButAReadTokenOnAWriteRouteIs403(t *testing.T) {
	for _, tt := range []struct {
		granted, needed role
		refused         bool
	}{
		{roleWrite, roleWrite, false},
		{roleWrite, roleRead, false},
		{roleRead, roleRead, false},
		{roleRead, roleWrite, true},
		{roleWrite, roleNone, false},
		{roleNone, roleNone, false},
	} {
		err := requireRole(withRole(httptest.NewRequest("GET", "/api/users", nil), tt.granted), tt.needed)
		if !tt.refused {
			if err != nil {
				t.Errorf("role %v on a route that needs %v: %v, want it let through", tt.granted, tt.needed, err)
			}
			continue
		}
		e := wantAPIError(t, err, http.StatusForbidden, "this token may only read: changing users needs a token with the write role")
		wantHeader(t, e.header, "WWW-Authenticate", `Bearer realm="users", error="insufficient_scope"`)
	}
}
