package main

import (
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
)

// api is the service: its handlers and what they share.
type api struct {
	store     *userStore
	wholeList listCache // the list with no query, encoded once per change of the store (list.go)
	tokens    tokens
	log       *slog.Logger
	delay     time.Duration
	cors      corsPolicy
	files     map[string]staticFile // the page, its assets and /openapi.json (web.go)

	requestIDPrefix string
	requestCount    atomic.Uint64
}

// newServer builds the whole service as one http.Handler: the routes below on a ServeMux, inside
// the checks every request goes through (middleware.go). It is the one constructor a program that
// copies this service calls (README, "Use it in your own program").
func newServer(cfg config, log *slog.Logger, store *userStore) (http.Handler, error) {
	files, err := loadStaticFiles(cfg.scheme())
	if err != nil {
		return nil, err
	}
	a := &api{store: store, tokens: cfg.tokens, log: log, delay: cfg.delay, cors: cfg.cors, files: files,
		requestIDPrefix: randomHex(4) + "-"}
	mux := http.NewServeMux()
	a.addRoutes(mux)
	return a.observe(a.allowCrossOrigin(a.guardAPI(a.redirectToClean(mux)))), nil
}

// The methods each path takes, as Allow names them on OPTIONS and on a 405 (RFC 9110 §10.2.1).
// ServeMux lets GET serve HEAD too.
const (
	allowCollection = "GET, HEAD, POST, OPTIONS"
	allowUser       = "GET, HEAD, PUT, PATCH, DELETE, OPTIONS"
	allowRead       = "GET, HEAD, OPTIONS"
)

// addRoutes puts every route on the mux, one line each. A pattern without a method catches every
// method its path does not take, for a JSON 405; "/" catches every path not listed, for a JSON 404.
func (a *api) addRoutes(mux *http.ServeMux) {
	mux.Handle("GET /api/users", a.handle(a.listUsers))
	mux.Handle("POST /api/users", a.handle(a.createUser))
	mux.Handle("OPTIONS /api/users", a.handle(a.collectionOptions))
	mux.Handle("/api/users", a.handle(methodNotAllowed(allowCollection)))

	mux.Handle("GET /api/users/{id}", a.handle(a.getUser))
	mux.Handle("PUT /api/users/{id}", a.handle(a.replaceUser))
	mux.Handle("PATCH /api/users/{id}", a.handle(a.patchUser))
	mux.Handle("DELETE /api/users/{id}", a.handle(a.deleteUser))
	mux.Handle("OPTIONS /api/users/{id}", a.handle(a.userOptions))
	mux.Handle("/api/users/{id}", a.handle(methodNotAllowed(allowUser)))

	mux.Handle("GET /healthz", a.handle(a.health))
	mux.Handle("OPTIONS /healthz", a.handle(a.options(allowRead)))
	mux.Handle("/healthz", a.handle(methodNotAllowed(allowRead)))

	mux.Handle("GET /openapi.json", a.handle(a.serveFile))
	mux.Handle("OPTIONS /openapi.json", a.handle(a.options(allowRead)))
	mux.Handle("/openapi.json", a.handle(methodNotAllowed(allowRead)))

	mux.Handle("GET /{$}", a.handle(a.serveFile)) // "/" alone would match every path
	mux.Handle("OPTIONS /{$}", a.handle(a.options(allowRead)))
	mux.Handle("/{$}", a.handle(methodNotAllowed(allowRead)))

	mux.Handle("GET /assets/{file}", a.handle(a.serveFile))
	mux.Handle("OPTIONS /assets/{file}", a.handle(a.options(allowRead)))
	mux.Handle("/assets/{file}", a.handle(methodNotAllowed(allowRead)))

	mux.Handle("/", a.handle(notFound))
}

// An apiHandler is a handler that returns its failure, for handle to answer: the pattern of the Go
// blog's "Error handling and Go", so that each handler ends a failure with return.
type apiHandler func(w http.ResponseWriter, r *http.Request) error

// handle turns an apiHandler into an http.Handler that answers the error it returns.
func (a *api) handle(handler apiHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := handler(w, r); err != nil {
			writeError(w, r, a.log, err)
		}
	})
}

// listUsers answers GET and HEAD of /api/users: the users the query selects, sorted and paged as
// it asks (docs/api.md, "Listing").
func (a *api) listUsers(w http.ResponseWriter, r *http.Request) error {
	if err := requireRole(r, roleRead); err != nil {
		return err
	}
	query, err := parseListQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	list, err := a.list(query)
	if err != nil {
		return err
	}
	if query.paged {
		w.Header().Set("Link", query.links(list.total))
	}
	w.Header().Set("Cache-Control", "private, no-cache") // a cache must ask again: the answer depends on the token
	return sendRepresentation(w, r, "application/json", list.body, list.etag)
}

// createUser answers POST: the server gives the new user its id and names its URI in Location
// (RFC 9110 §9.3.3).
func (a *api) createUser(w http.ResponseWriter, r *http.Request) error {
	if err := requireRole(r, roleWrite); err != nil {
		return err
	}
	body, err := readUserBody(w, r)
	if err != nil {
		return err
	}
	fields, err := body.newUser()
	if err != nil {
		return err
	}
	created, err := a.store.create(fields, a.collectionPrecondition(readPreconditions(r)))
	if err != nil {
		return err
	}
	w.Header().Set("Location", userPath(created.ID))
	return sendStored(w, http.StatusCreated, created)
}

// getUser answers GET and HEAD of one user.
func (a *api) getUser(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := requireRole(r, roleRead); err != nil {
		return err
	}
	if err := rejectQuery(r); err != nil {
		return err
	}
	found, err := a.store.get(id)
	if err != nil {
		return err
	}
	body, etag, err := userRepresentation(found)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "private, no-cache") // a cache must ask again: the answer depends on the token
	return sendRepresentation(w, r, "application/json", body, etag)
}

// replaceUser answers PUT: the whole user is replaced, so both fields are required (RFC 9110
// §9.3.4). It never creates: ids are the server's to give.
func (a *api) replaceUser(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := requireRole(r, roleWrite); err != nil {
		return err
	}
	body, err := readUserBody(w, r)
	if err != nil {
		return err
	}
	fields, err := body.replacement(id)
	if err != nil {
		return err
	}
	replaced, err := a.store.update(id, fields, readPreconditions(r).onUser)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Location", userPath(id)) // the body is the stored user (RFC 9110 §8.7)
	return sendStored(w, http.StatusOK, replaced)
}

// patchUser answers PATCH: a JSON Merge Patch (RFC 7396) changes only the fields it names. It
// differs from replaceUser in one line, and is kept apart so that each handler reads top to bottom.
func (a *api) patchUser(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := requireRole(r, roleWrite); err != nil {
		return err
	}
	body, err := readUserBody(w, r)
	if err != nil {
		return err
	}
	fields, err := body.patch(id)
	if err != nil {
		return err
	}
	patched, err := a.store.update(id, fields, readPreconditions(r).onUser)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Location", userPath(id)) // the body is the stored user (RFC 9110 §8.7)
	return sendStored(w, http.StatusOK, patched)
}

// deleteUser answers DELETE. Deleting again is 404, but the state is the same: DELETE stays
// idempotent (RFC 9110 §9.2.2).
func (a *api) deleteUser(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := requireRole(r, roleWrite); err != nil {
		return err
	}
	if err := rejectQuery(r); err != nil {
		return err
	}
	if err := a.store.delete(id, readPreconditions(r).onUser); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// options answers OPTIONS with the methods a path takes. It needs no token: /openapi.json
// publishes the same. To a CORS preflight it allows the same methods.
func (a *api) options(allow string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Allow", allow)
		if isPreflight(r) && a.cors.allows(r.Header.Get("Origin")) {
			w.Header().Set("Access-Control-Allow-Methods", allow)
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// collectionOptions answers OPTIONS of /api/users, naming the media type POST takes (Accept-Post).
func (a *api) collectionOptions(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Accept-Post", acceptPost)
	return a.options(allowCollection)(w, r)
}

// userOptions answers OPTIONS of one user, naming the media types PATCH takes (Accept-Patch, RFC
// 5789 §3.1). An id not in canonical form names no user: 404.
func (a *api) userOptions(w http.ResponseWriter, r *http.Request) error {
	if _, err := pathID(r); err != nil {
		return err
	}
	w.Header().Set("Accept-Patch", acceptPatch)
	return a.options(allowUser)(w, r)
}

// health answers /healthz: whether the server is up and can still write, for scripts and
// orchestrators.
func (a *api) health(w http.ResponseWriter, r *http.Request) error {
	status, health := http.StatusOK, "ok"
	if !a.store.writable() {
		status, health = http.StatusServiceUnavailable, "data file not writable"
	}
	body, err := encodeJSON(map[string]string{"status": health})
	if err != nil {
		return err
	}
	writeJSON(w, status, body)
	return nil
}

// methodNotAllowed answers a method the path does not take, naming those it takes (RFC 9110
// §15.5.6), or 501 for a method that no path takes: an origin server SHOULD answer so a method it
// does not implement (RFC 9110 §9.1, §15.6.2). Methods are case-sensitive, so "get" is one of those.
func methodNotAllowed(allow string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		if !slices.Contains(implementedMethods, r.Method) {
			return newError(http.StatusNotImplemented, "this service does not implement the method "+quoteForMessage(r.Method)+
				": it takes GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS")
		}
		return newError(http.StatusMethodNotAllowed, "this path does not take the method "+quoteForMessage(r.Method)+": it takes "+allow).
			withHeader("Allow", allow)
	}
}

// implementedMethods are the methods some route takes.
var implementedMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// notFound answers a path that is not in the routes.
func notFound(w http.ResponseWriter, r *http.Request) error {
	return newError(http.StatusNotFound, "there is nothing at this path: the users are at /api/users")
}

// sendStored answers a write with the user as stored and its ETag, so that a client can send
// If-Match next without reading first (docs/api.md, "Conditional requests").
func sendStored(w http.ResponseWriter, status int, stored user) error {
	body, etag, err := userRepresentation(stored)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag)
	writeJSON(w, status, body)
	return nil
}

// pathID reads the {id} of the path: a positive integer in canonical decimal, so that each user
// has one URI. Anything else names no user: 404 (docs/api.md, "Routes").
func pathID(r *http.Request) (int64, error) {
	id, ok := parseCanonical(r.PathValue("id"))
	if !ok {
		return 0, errNotFound
	}
	return id, nil
}

// parseCanonical reads a positive integer in canonical decimal: no sign, no leading zero, at most
// 2^63-1. strconv.ParseInt alone takes "+7" and "07".
func parseCanonical(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0 && s[0] != '+' && s[0] != '0'
}

// rejectQuery refuses a query on a route that takes none: only the list takes one. It names the
// first parameter in sorted order, as the list's parser does, or the query itself when it holds none.
func rejectQuery(r *http.Request) error {
	if r.URL.RawQuery == "" {
		return nil
	}
	what := r.URL.RawQuery
	if values, err := url.ParseQuery(r.URL.RawQuery); err == nil && len(values) > 0 {
		names := make([]string, 0, len(values))
		for name := range values {
			names = append(names, name)
		}
		what = slices.Min(names)
	}
	return badRequest("this request takes no query parameters, but the query has " + quoteForMessage(what) +
		": only the list (GET /api/users) takes page, per_page, q, email and sort")
}

// userPath is the URI of a user, as Location and Content-Location name it.
func userPath(id int64) string { return "/api/users/" + strconv.FormatInt(id, 10) }
