package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Each handler of /api/users/{id} parses its own id: called directly, without the mux or any
// wrapper before it, a handler given an id that is not a positive integer in canonical decimal, or
// no id at all, answers 404 "no user has this id", and never acts on user 0, as a handler that
// dropped the parse error would (docs/api.md, "Routes").
func TestEachUserHandlerParsesItsOwnID(t *testing.T) {
	handlers := []struct {
		name    string
		handler func(a *api, w http.ResponseWriter, r *http.Request) error
		method  string
		body    string
	}{
		{"getUser", (*api).getUser, "GET", ""},
		{"replaceUser", (*api).replaceUser, "PUT", `{"name":"Ann","email":"ann@example.com"}`},
		{"patchUser", (*api).patchUser, "PATCH", `{"name":"Ann"}`},
		{"deleteUser", (*api).deleteUser, "DELETE", ""},
		{"userOptions", (*api).userOptions, "OPTIONS", ""},
	}
	ids := []struct {
		name  string
		id    string
		unset bool // no path value at all, as when the handler is mounted on a pattern without {id}
	}{
		{name: "unset", unset: true},
		{name: "abc", id: "abc"},
		{name: "empty", id: ""},
		{name: "zero", id: "0"},
		{name: "a leading zero", id: "07"},
		{name: "a sign", id: "+1"},
		{name: "negative", id: "-1"},
		{name: "past 2^63-1", id: "9223372036854775808"},
	}
	for _, h := range handlers {
		for _, id := range ids {
			t.Run(h.name+" "+id.name, func(t *testing.T) {
				// The api as newServer builds it, with only what these handlers use: the store, and
				// the log that writeError would write a 500's cause to.
				store := newUserStore()
				a := &api{store: store, log: newLogger("json", io.Discard)}
				// A user 0, put straight into the map (the API never gives id 0): a handler that
				// turned a bad id into 0 would find this user, and answer 200 or 204 for it.
				zero := user{ID: 0, Name: "Zero", Email: "zero@example.com"}
				store.writeMu.Lock() // every change holds writeMu, by the store's locking rule
				store.apply(change{id: 0, after: &zero})
				store.writeMu.Unlock()

				r := httptest.NewRequest(h.method, "/api/users/x", strings.NewReader(h.body))
				r.Header.Set("Content-Type", "application/json")
				r = withRole(r, roleWrite) // every other check would let the request through
				if !id.unset {
					r.SetPathValue("id", id.id)
				}
				w := httptest.NewRecorder()
				a.handle(func(w http.ResponseWriter, r *http.Request) error { return h.handler(a, w, r) }).ServeHTTP(w, r)
				wantError(t, w, http.StatusNotFound, "no user has this id")
				wantHeaders(t, w.Header(), map[string]string{"ETag": "", "Allow": "", "Accept-Patch": ""})
				if got, err := store.get(0); err != nil || got != zero {
					t.Errorf("user 0 is %+v, %v: the handler changed it", got, err)
				}
			})
		}
	}
}
