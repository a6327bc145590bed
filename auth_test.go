package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The rules of auth.go: bearer tokens (RFC 6750) and roles (docs/api.md, "Authentication"), proved
// on tokens.authenticate and requireRole.

// authTokens are the tokens given in USERS_TOKENS, read by parseTokens.
func authTokens(t testing.TB, usersTokens string) tokens {
	t.Helper()
	known, err := parseTokens(usersTokens)
	if err != nil {
		t.Fatal(err)
	}
	return known
}

// The scheme Bearer is matched in any case (RFC 9110 §11.1), one or more spaces separate it from
// the token, and the token may use every character of RFC 6750's b64token, padding included. A
// known token gives its role.
func TestBearerTokenGivesItsRole(t *testing.T) {
	const b64token = "Az09-._~+/=="
	known := authTokens(t, writeToken+":write,"+readToken+":read,"+b64token+":read")
	tests := []struct {
		name          string
		authorization string
		want          role
	}{
		{"read token", "Bearer " + readToken, roleRead},
		{"write token", "Bearer " + writeToken, roleWrite},
		{"lower case", "bearer " + readToken, roleRead},
		{"upper case", "BEARER " + writeToken, roleWrite},
		{"mixed case", "bEaReR " + readToken, roleRead},
		{"several spaces", "Bearer    " + writeToken, roleWrite},
		{"every b64token character", "Bearer " + b64token, roleRead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api/users", nil)
			r.Header.Set("Authorization", tt.authorization)
			got, err := known.authenticate(r)
			if err != nil || got != tt.want {
				t.Errorf("Authorization %q: role %v, error %v; want role %v", tt.authorization, got, err, tt.want)
			}
		})
	}
}

// Without a bearer token the answer asks for one (errNoToken); a token that is malformed or
// unknown, or two Authorization headers, is invalid (errInvalidToken). A malformed token is an
// unknown one, so the answer never says which part was wrong.
func TestTokenNotKnownIs401(t *testing.T) {
	tests := []struct {
		name          string
		authorization []string // each is one Authorization header line
		want          *apiError
	}{
		{"no header", nil, errNoToken},
		{"another scheme", []string{"Basic dGVzdDp0ZXN0"}, errNoToken},
		{"a blank header", []string{"   "}, errNoToken},
		{"no space after Bearer", []string{"Bearer" + readToken}, errNoToken},
		{"Bearer alone", []string{"Bearer"}, errInvalidToken},
		{"Bearer and a space", []string{"Bearer "}, errInvalidToken},
		{"an unknown token", []string{"Bearer no-such-token"}, errInvalidToken},
		{"not a b64token", []string{"Bearer tok!en"}, errInvalidToken},
		{"something after the token", []string{"Bearer " + readToken + " extra"}, errInvalidToken},
		{"one character more", []string{"Bearer " + readToken + "x"}, errInvalidToken},
		{"one character less", []string{"Bearer " + readToken[:len(readToken)-1]}, errInvalidToken},
		{"two headers", []string{"Bearer " + readToken, "Bearer " + readToken}, errInvalidToken},
		{"two headers, the first empty", []string{"", "Bearer " + readToken}, errInvalidToken},
	}
	known := authTokens(t, writeToken+":write,"+readToken+":read")
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
}

// A role covers the role needed, or the request is refused: a read token on a route that writes
// is 403, and the write role covers the read role. A request no authentication has seen (a handler
// served without guardAPI) is 401.
func TestReadTokenOnAWriteRouteIs403(t *testing.T) {
	tests := []struct {
		name    string
		granted role // 0: a request that went through no authentication
		needed  role
		want    error
	}{
		{"write role, write route", roleWrite, roleWrite, nil},
		{"write role, read route", roleWrite, roleRead, nil},
		{"read role, read route", roleRead, roleRead, nil},
		{"read role, write route", roleRead, roleWrite, errReadOnly},
		{"no role, write route", 0, roleWrite, errNoToken},
		{"no role, read route", 0, roleRead, errNoToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("DELETE", "/api/users/1", nil)
			if tt.granted != 0 {
				r = withRole(r, tt.granted)
			}
			if err := requireRole(r, tt.needed); err != tt.want {
				t.Errorf("error %v, want %v", err, tt.want)
			}
		})
	}
}

// Through the whole service, the write token reads the list and a user.
func TestWriteTokenMayAlsoRead(t *testing.T) {
	ts := newTestServer(t)
	ts.create(t, "Ann", "ann@example.com")
	for _, target := range []string{"/api/users", "/api/users/1"} {
		r := httptest.NewRequest("GET", target, nil)
		r.Header.Set("Authorization", "Bearer "+writeToken)
		if w := ts.serve(r); w.Code != http.StatusOK {
			t.Errorf("GET %s with the write token: status %d, want 200; body %s", target, w.Code, w.Body)
		}
	}
}

// Each refusal has its status, its message and its challenge (RFC 6750 §3): only the realm when
// no token was sent, error="invalid_token" for a bad one, error="insufficient_scope" for a read
// token on a write route.
func TestRefusalsCarryTheirChallenge(t *testing.T) {
	tests := []struct {
		name      string
		refusal   *apiError
		status    int
		message   string
		challenge string
	}{
		{"no token", errNoToken, 401, "this API needs a bearer token: send Authorization: Bearer <token>",
			`Bearer realm="users"`},
		{"invalid token", errInvalidToken, 401, "the bearer token is malformed or unknown",
			`Bearer realm="users", error="invalid_token"`},
		{"read only", errReadOnly, 403, "this token may only read: changing users needs a token with the write role",
			`Bearer realm="users", error="insufficient_scope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.refusal.status != tt.status || tt.refusal.message != tt.message {
				t.Errorf("answered %d %q, want %d %q", tt.refusal.status, tt.refusal.message, tt.status, tt.message)
			}
			wantHeaders(t, tt.refusal.header, map[string]string{"WWW-Authenticate": tt.challenge})
		})
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
	known := authTokens(f, writeToken+":write,"+readToken+":read")
	f.Fuzz(func(t *testing.T, value, second string, twoHeaders bool) {
		r := httptest.NewRequest("GET", "/api/users", nil)
		r.Header["Authorization"] = []string{value} // as sent: Header.Set would tidy it
		if twoHeaders {
			r.Header["Authorization"] = append(r.Header["Authorization"], second)
		}
		granted, err := known.authenticate(r)

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
		// it is invalid. Both are fixed answers, so nothing sent is repeated.
		wantRefusal := errInvalidToken
		if !twoHeaders && (strings.TrimSpace(value) == "" || !strings.EqualFold(scheme, "bearer")) {
			wantRefusal = errNoToken
		}
		if err != error(wantRefusal) {
			t.Fatalf("Authorization %q (a second header: %v): error %#v, want %#v", value, twoHeaders, err, wantRefusal)
		}
	})
}
