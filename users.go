package main

import (
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// api is the service: its handlers and what they share.
type api struct {
	store  *userStore
	files  map[string]representation // the page, its assets and /openapi.json (web.go)
	tokens tokens
	log    *slog.Logger
	delay  time.Duration
	cors   corsPolicy

	refusedOrigins originSet // the origins whose refusal the log named (cors.go)

	requestIDPrefix string
	requestCount    atomic.Uint64
}

// newServer builds the whole service as one http.Handler: the routes below on a ServeMux, inside
// the checks every request goes through (middleware.go). It is the one constructor a program that
// copies this service calls (README, "Use it in your own program").
func newServer(cfg config, log *slog.Logger, store *userStore) (http.Handler, error) {
	files, err := loadStaticFiles()
	if err != nil {
		return nil, err
	}
	a := &api{store: store, files: files, tokens: cfg.tokens, log: log, delay: cfg.delay, cors: cfg.cors,
		requestIDPrefix: randomHex(4) + "-"}
	mux := http.NewServeMux()
	a.addRoutes(mux)
	// The checks every request goes through before its route, from the outside in (middleware.go).
	return a.observe(
		a.allowCrossOrigin(
			apiHeaders(
				a.slowDown(
					a.requireToken(mux))))), nil
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
// The bearer token was checked before the mux (requireToken): no handler checks it again.
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

	mux.Handle("GET /healthz", a.handle(health))
	mux.Handle("OPTIONS /healthz", a.handle(options(allowRead)))
	mux.Handle("/healthz", a.handle(methodNotAllowed(allowRead)))

	mux.Handle("GET /openapi.json", a.handle(a.serveFile))
	mux.Handle("OPTIONS /openapi.json", a.handle(options(allowRead)))
	mux.Handle("/openapi.json", a.handle(methodNotAllowed(allowRead)))

	mux.Handle("GET /{$}", a.handle(a.serveFile)) // "GET /" would match every path
	mux.Handle("OPTIONS /{$}", a.handle(options(allowRead)))
	mux.Handle("/{$}", a.handle(methodNotAllowed(allowRead)))

	mux.Handle("GET /assets/{file}", a.handle(a.serveFile))
	mux.Handle("OPTIONS /assets/{file}", a.handle(options(allowRead)))
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
	query, err := parseListQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	users, total, err := a.store.list(r.Context(), query)
	if err != nil {
		return err
	}
	list := listRepresentation(users, total, query.page)
	if query.page != nil {
		list.link = query.links(total)
	}
	return sendRepresentation(w, r, list)
}

// createUser answers POST: the server gives the new user its id and names its URI in Location
// (RFC 9110 §9.3.3), with the user's ETag, so that a client can send If-Match next without
// reading first.
func (a *api) createUser(w http.ResponseWriter, r *http.Request) error {
	body, err := readUserBody(w, r)
	if err != nil {
		return err
	}
	fields, err := body.createFields()
	if err != nil {
		return err
	}
	created, err := a.store.create(r.Context(), fields, readPreconditions(r).onCollection)
	if err != nil {
		return err
	}
	answer, etag := userRepresentation(created)
	w.Header().Set("Location", userPath(created.ID))
	w.Header().Set("ETag", etag)
	writeJSON(w, http.StatusCreated, answer)
	return nil
}

// collectionOptions answers OPTIONS of /api/users, naming the media type POST takes (Accept-Post).
// It needs no token: /openapi.json publishes the same.
func (a *api) collectionOptions(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Accept-Post", acceptPost)
	return options(allowCollection)(w, r)
}

// getUser answers GET and HEAD of one user.
func (a *api) getUser(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	found, err := a.store.get(r.Context(), id)
	if err != nil {
		return err
	}
	body, etag := userRepresentation(found)
	return sendRepresentation(w, r, representation{contentType: "application/json", cacheControl: "private, no-cache", body: body, etag: etag})
}

// replaceUser answers PUT: the whole user is replaced, so both fields are required (RFC 9110
// §9.3.4). It never creates: ids are the server's to give. The answer is the user as stored,
// without an ETag: §9.3.4 allows one only for a body stored as it was sent, and this one was
// trimmed and given its id. A client reads the user (GET) for its ETag.
func (a *api) replaceUser(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	body, err := readUserBody(w, r)
	if err != nil {
		return err
	}
	fields, err := body.replaceFields(id)
	if err != nil {
		return err
	}
	replaced, err := a.store.update(r.Context(), id, fields, readPreconditions(r).onUser)
	if err != nil {
		return err
	}
	answer, _ := userRepresentation(replaced)        // no ETag: RFC 9110 §9.3.4, above
	w.Header().Set("Content-Location", userPath(id)) // the body is the stored user (RFC 9110 §8.7)
	writeJSON(w, http.StatusOK, answer)
	return nil
}

// patchUser answers PATCH: a JSON Merge Patch (RFC 7396) changes only the fields it names. Its
// answer is the stored user with its ETag, which RFC 5789 does not forbid, so that a client can
// send If-Match next without reading first.
func (a *api) patchUser(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	body, err := readUserBody(w, r)
	if err != nil {
		return err
	}
	fields, err := body.patchFields(id)
	if err != nil {
		return err
	}
	patched, err := a.store.update(r.Context(), id, fields, readPreconditions(r).onUser)
	if err != nil {
		return err
	}
	answer, etag := userRepresentation(patched)
	w.Header().Set("Content-Location", userPath(id)) // the body is the stored user (RFC 9110 §8.7)
	w.Header().Set("ETag", etag)
	writeJSON(w, http.StatusOK, answer)
	return nil
}

// deleteUser answers DELETE. Deleting again is 404, but the state is the same: DELETE stays
// idempotent (RFC 9110 §9.2.2).
func (a *api) deleteUser(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := a.store.delete(r.Context(), id, readPreconditions(r).onUser); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// userOptions answers OPTIONS of one user, naming the media types PATCH takes (Accept-Patch, RFC
// 5789 §3.1). An id not in canonical form names no user: 404.
func (a *api) userOptions(w http.ResponseWriter, r *http.Request) error {
	if _, err := pathID(r); err != nil {
		return err
	}
	w.Header().Set("Accept-Patch", acceptPatch)
	return options(allowUser)(w, r)
}

// health answers /healthz: the server is up and answers, for scripts and orchestrators.
func health(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
	return nil
}

// options answers OPTIONS with the methods a path takes. It needs no token.
func options(allow string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Allow", allow)
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// methodNotAllowed answers a method the path does not take, naming those it takes (RFC 9110
// §15.5.6). A method no route takes at all (TRACE, FOO) is answered so too: RFC 9110 §9.1 asks
// a server for 501 (a SHOULD) to a method it does not recognize, and this service takes
// ServeMux's 405 instead, on purpose (docs/api.md, "Routes").
func methodNotAllowed(allow string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		return newError(http.StatusMethodNotAllowed, "this path does not take the method "+strconv.Quote(r.Method)+": it takes "+allow).
			withHeader("Allow", allow)
	}
}

// notFound answers a path that is not in the routes.
func notFound(w http.ResponseWriter, r *http.Request) error {
	return newError(http.StatusNotFound, "there is nothing at this path: the users are at /api/users")
}

// readUserBody reads the body of a POST, PUT or PATCH: 415, 413 (readBody), then 400.
func readUserBody(w http.ResponseWriter, r *http.Request) (userBody, error) {
	data, err := readBody(w, r)
	if err != nil {
		return userBody{}, err
	}
	return decodeUserBody(data)
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

// userPath is the URI of a user, as Location and Content-Location name it.
func userPath(id int64) string { return "/api/users/" + strconv.FormatInt(id, 10) }
