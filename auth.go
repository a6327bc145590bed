package main

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// A role is what a bearer token may do: read, or read and write.
type role int

const (
	roleRead role = iota + 1
	roleWrite
)

// tokens are the tokens the server takes, each kept as its SHA-256 hash: the hashes of two tokens
// compare in constant time whatever their lengths, and the server keeps no token once it has read
// USERS_TOKENS.
type tokens []token

// A token is one entry of USERS_TOKENS: its hash, and what it may do.
type token struct {
	hash [sha256.Size]byte
	role role
}

// parseTokens reads USERS_TOKENS: TOKEN:ROLE entries, separated by commas. A problem names an
// entry by its position, never by its token.
func parseTokens(value string) (tokens, error) {
	var t tokens
	for i, entry := range strings.Split(value, ",") {
		position := i + 1
		secret, roleName, found := strings.Cut(strings.TrimSpace(entry), ":")
		switch {
		case strings.TrimSpace(entry) == "":
			return nil, fmt.Errorf("USERS_TOKENS: entry %d is empty", position)
		case !found:
			return nil, fmt.Errorf("USERS_TOKENS: entry %d has no role", position)
		case secret == "":
			return nil, fmt.Errorf("USERS_TOKENS: entry %d has an empty token", position)
		case !isBearerToken(secret):
			return nil, fmt.Errorf("USERS_TOKENS: the token of entry %d has characters a bearer token cannot have (RFC 6750: A-Z a-z 0-9 - . _ ~ + / and trailing =)", position)
		}
		var granted role
		switch roleName {
		case "read":
			granted = roleRead
		case "write":
			granted = roleWrite
		default:
			return nil, fmt.Errorf("USERS_TOKENS: entry %d has a role that is neither read nor write", position)
		}
		hash := sha256.Sum256([]byte(secret))
		for j, other := range t {
			if other.hash == hash {
				return nil, fmt.Errorf("USERS_TOKENS: entries %d and %d have the same token", j+1, position)
			}
		}
		t = append(t, token{hash: hash, role: granted})
	}
	return t, nil
}

// generatedTokens are the tokens the server makes when USERS_TOKENS is not set, to be shown once.
type generatedTokens struct{ write, read string }

// loadTokens reads USERS_TOKENS, or without it makes two tokens of 128 bits and returns them too.
func loadTokens(value string) (tokens, *generatedTokens, error) {
	if strings.TrimSpace(value) != "" {
		t, err := parseTokens(value)
		return t, nil, err
	}
	generated := &generatedTokens{write: randomHex(16), read: randomHex(16)}
	t, err := parseTokens(generated.write + ":write," + generated.read + ":read")
	return t, generated, err
}

// isBearerToken reports whether s is an RFC 6750 b64token: 1*( ALPHA / DIGIT / "-._~+/" ) *"="
func isBearerToken(s string) bool {
	body := strings.TrimRight(s, "=")
	return body != "" && !strings.ContainsFunc(body, func(c rune) bool {
		return !isASCIIAlphanumeric(c) && !strings.ContainsRune("-._~+/", c)
	})
}

// isASCIIAlphanumeric reports whether c is one of A-Z, a-z and 0-9.
func isASCIIAlphanumeric(c rune) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
}

// randomHex returns n random bytes from crypto/rand as 2n hex digits: tokens and request ids.
func randomHex(n int) string {
	random := make([]byte, n)
	if _, err := rand.Read(random); err != nil {
		panic(err) // never on the systems Go supports; a token that is not random must never be made
	}
	return hex.EncodeToString(random)
}

// The failures of authentication and permission: errorFor (respond.go) gives each its status and
// its challenge (RFC 6750 §3).
var (
	errNoToken      = errors.New("no bearer token")
	errInvalidToken = errors.New("invalid bearer token")
	errReadOnly     = errors.New("read-only token")
)

// authenticate returns the role of the request's bearer token (RFC 6750 §2.1): the header is the
// scheme, one or more spaces, and the token, with nothing after it. An empty header is no header.
func (t tokens) authenticate(r *http.Request) (role, error) {
	values := r.Header.Values("Authorization")
	if len(values) > 1 {
		return 0, errInvalidToken
	}
	if len(values) == 0 || strings.TrimSpace(values[0]) == "" {
		return 0, errNoToken
	}
	scheme, secret, _ := strings.Cut(values[0], " ")
	if !strings.EqualFold(scheme, "Bearer") { // the scheme is case-insensitive (RFC 9110 §11.1)
		return 0, errNoToken
	}
	hash := sha256.Sum256([]byte(strings.TrimLeft(secret, " "))) // a malformed token is an unknown one
	var found role
	for _, known := range t { // every entry is compared, so the time taken tells nothing
		if subtle.ConstantTimeCompare(hash[:], known.hash[:]) == 1 {
			found = known.role
		}
	}
	if found == 0 {
		return 0, errInvalidToken
	}
	return found, nil
}

// requireToken lets a request under /api/ through only when its bearer token may use its method
// (permit): 401 or 403 otherwise. OPTIONS needs no token: it tells only which methods a path
// takes, which /openapi.json publishes anyway.
func (a *api) requireToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isAPI(r) && r.Method != http.MethodOptions {
			if err := a.tokens.permit(r); err != nil {
				writeError(w, r, a.log, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// permit lets a request through when its bearer token may use its method: GET and HEAD need a
// read or write token, every other method a write token, whatever the path. It runs in front of
// the routes (requireToken), so no handler can forget it, and a caller without permission learns
// nothing about what exists or which routes take what.
func (t tokens) permit(r *http.Request) error {
	granted, err := t.authenticate(r)
	switch {
	case err != nil:
		return err
	case granted == roleRead && r.Method != http.MethodGet && r.Method != http.MethodHead:
		return errReadOnly
	}
	return nil
}
