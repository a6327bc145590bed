package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The rules of auth.go: bearer tokens (RFC 6750) and roles (docs/api.md, "Authentication").

func TestWriteTokenMayAlsoRead(t *testing.T) {
	ts := withAnnAndBob(t)
	wantStatus(t, ts.do("GET", "/api/users", "", asWriter...), http.StatusOK)
	wantStatus(t, ts.do("GET", "/api/users/1", "", asWriter...), http.StatusOK)
}

func TestAuthenticationChallenges(t *testing.T) {
	const (
		plain        = `Bearer realm="users"`
		invalidToken = `Bearer realm="users", error="invalid_token"`
	)
	tests := []struct {
		name          string
		authorization []string // each is one Authorization header line
		challenge     string
	}{
		{"no Authorization header", nil, plain},
		{"another scheme", []string{"Basic dGVzdDp0ZXN0"}, plain},
		{"a blank header", []string{"   "}, plain},
		{"Bearer without a token", []string{"Bearer"}, invalidToken},
		{"Bearer and a space but no token", []string{"Bearer "}, invalidToken},
		{"an unknown token", []string{"Bearer no-such-token"}, invalidToken},
		{"a token with characters outside b64token", []string{"Bearer tok!en"}, invalidToken},
		{"something after the token", []string{"Bearer " + readToken + " extra"}, invalidToken},
		{"a known token in a prefix of what is sent", []string{"Bearer " + readToken + "x"}, invalidToken},
		{"two Authorization headers", []string{"Bearer " + readToken, "Bearer " + readToken}, invalidToken},
		{"two Authorization headers, the first empty", []string{"", "Bearer " + readToken}, invalidToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := withAnnAndBob(t)
			var headers []string
			for _, value := range tt.authorization {
				headers = append(headers, "Authorization", value)
			}
			w := ts.do("GET", "/api/users", "", headers...)
			message, _ := wantError(t, w, http.StatusUnauthorized)
			wantHeader(t, w.Header(), "WWW-Authenticate", tt.challenge)
			if strings.Contains(message, readToken) || strings.Contains(message, "no-such-token") {
				t.Errorf("the message %q repeats the token", message)
			}
		})
	}
}

func TestBearerSchemeIsCaseInsensitiveAndTakesSeveralSpaces(t *testing.T) {
	ts := withAnnAndBob(t)
	for _, value := range []string{"Bearer " + readToken, "bearer " + readToken, "BEARER " + readToken, "Bearer    " + readToken} {
		if w := ts.do("GET", "/api/users", "", "Authorization", value); w.Code != http.StatusOK {
			t.Errorf("Authorization %q: status %d, want 200", value, w.Code)
		}
	}
}

func TestTokensWithTheFullB64TokenAlphabetAreAccepted(t *testing.T) {
	ts := newTestServer(t)
	token := "Az09-._~+/=="
	tokenSet, err := parseTokens(token + ":read")
	if err != nil {
		t.Fatal(err)
	}
	ts.tokens = tokenSet
	ts.build()
	wantStatus(t, ts.do("GET", "/api/users", "", "Authorization", "Bearer "+token), http.StatusOK)
}

func TestReadTokenOnAWriteRouteIs403InsufficientScope(t *testing.T) {
	tests := []struct{ method, path, body string }{
		{"POST", "/api/users", userJSON("Carol", "carol@example.com")},
		{"PUT", "/api/users/1", userJSON("Ann", "ann@example.com")},
		{"PATCH", "/api/users/1", `{"name":"Ann"}`},
		{"DELETE", "/api/users/1", ""},
		{"DELETE", "/api/users/999", ""}, // not 404: a caller without permission learns nothing
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			ts := withAnnAndBob(t)
			before, _ := ts.list(t, "")
			w := ts.do(tt.method, tt.path, tt.body, join(asReader, asJSON)...)
			wantError(t, w, http.StatusForbidden)
			wantHeader(t, w.Header(), "WWW-Authenticate", `Bearer realm="users", error="insufficient_scope"`)
			if after, _ := ts.list(t, ""); fmt.Sprint(after.Data) != fmt.Sprint(before.Data) {
				t.Errorf("a refused write changed the store: %v", after.Data)
			}
		})
	}
}
