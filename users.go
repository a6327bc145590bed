package main

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// api is the user collection API: its handlers and what they share.
type api struct {
	store    *userStore
	commit   func(change) (storedUser, error) // store.commit, or with -data the journal's
	broken   func() bool                      // true once durable writes have failed (journal.go)
	tokens   *tokens
	log      *slog.Logger
	delay    time.Duration
	stopping <-chan struct{} // closed when the server starts to stop
	cors     corsPolicy
	allow    map[string]string // each path pattern's Allow header, from the routes

	requestIDPrefix string
	requestCount    atomic.Uint64
}

// newAPI returns the API over an in-memory store: writes go straight to the store, and nothing can
// break them. With -data, run hands writes to the journal instead.
func newAPI(store *userStore, tokenSet *tokens, logger *slog.Logger) *api {
	return &api{
		store:           store,
		commit:          store.commit,
		broken:          func() bool { return false },
		tokens:          tokenSet,
		log:             logger,
		requestIDPrefix: randomHex(4) + "-",
	}
}

// routes lists every path the service answers and the methods each takes: the mux, the Allow
// header of 405 and OPTIONS, and CORS preflights all come from this one table. GET also serves
// HEAD, and every path answers OPTIONS.
func (a *api) routes() []route {
	return []route{
		{"GET /api/users", a.collection(roleRead, a.listUsers)},
		{"POST /api/users", a.collection(roleWrite, a.createUser)},
		{"GET /api/users/{id}", a.user(roleRead, a.getUser)},
		{"PUT /api/users/{id}", a.user(roleWrite, a.replaceUser)},
		{"PATCH /api/users/{id}", a.user(roleWrite, a.patchUser)},
		{"DELETE /api/users/{id}", a.user(roleWrite, a.deleteUser)},
		{"GET /healthz", a.handle(a.health)},
		{"GET /openapi.json", a.handle(a.openAPI)},
		{"GET /{$}", a.handle(a.explorerPage)},
		{"GET /assets/{file}", a.handle(a.asset)},
	}
}

type route struct {
	pattern string // "METHOD /path", as http.ServeMux takes it
	handler http.Handler
}

// newServer builds the whole service as one http.Handler: the routes on a ServeMux, wrapped in
// the checks every request goes through (middleware.go).
func newServer(a *api) http.Handler {
	mux := http.NewServeMux()
	a.allow = map[string]string{}
	var paths []string
	for _, r := range a.routes() {
		method, path, _ := strings.Cut(r.pattern, " ")
		if _, seen := a.allow[path]; !seen {
			paths = append(paths, path)
		}
		a.allow[path] += method + ", "
		if method == http.MethodGet {
			a.allow[path] += "HEAD, "
		}
		mux.Handle(r.pattern, r.handler)
	}
	for _, path := range paths {
		a.allow[path] += "OPTIONS"
		options := a.handle(a.options(a.allow[path]))
		if strings.Contains(path, "{id}") {
			options = a.user(roleNone, withoutID(a.options(a.allow[path])))
		}
		mux.Handle("OPTIONS "+path, options)
		// The same path without a method matches every method the path does not take.
		mux.Handle(path, a.handle(methodNotAllowed(a.allow[path])))
	}
	mux.Handle("/", a.handle(notFound))
	return a.observe(a.allowCrossOrigin(a.guardAPI(mux)))
}

// collection adapts a handler of /api/users: the token's role must cover the route's (403).
func (a *api) collection(needed role, handler func(http.ResponseWriter, *http.Request) error) http.Handler {
	return a.handle(func(w http.ResponseWriter, r *http.Request) error {
		if err := a.tokens.requireRole(r, needed); err != nil {
			return err
		}
		return handler(w, r)
	})
}

// user adapts a handler of /api/users/{id}. A non-canonical id names no resource (404), and
// routing comes before permission (SPEC §3): a caller without permission learns nothing.
func (a *api) user(needed role, handler func(http.ResponseWriter, *http.Request, int64) error) http.Handler {
	return a.handle(func(w http.ResponseWriter, r *http.Request) error {
		id, ok := parsePositive(r.PathValue("id"))
		if !ok {
			return errUserNotFound
		}
		if err := a.tokens.requireRole(r, needed); err != nil {
			return err
		}
		return handler(w, r, id)
	})
}

func withoutID(handler func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request, int64) error {
	return func(w http.ResponseWriter, r *http.Request, _ int64) error { return handler(w, r) }
}

// handle turns a handler that returns an error into an http.Handler that answers it.
func (a *api) handle(handler func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := handler(w, r); err != nil {
			writeError(w, r, a.log, err)
		}
	})
}

// GET /api/users lists users, filtered, sorted and paged as the query asks (SPEC §7).
func (a *api) listUsers(w http.ResponseWriter, r *http.Request) error {
	query, err := parseListQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	list := a.selectList(query)
	if list.link != "" {
		w.Header().Set("Link", list.link)
	}
	if !notModified(w, r, list.etag) {
		writeJSONBytes(w, http.StatusOK, list.body)
	}
	return nil
}

// POST creates a user; the server assigns its id and names its URI in Location (RFC 9110 §9.3.3).
func (a *api) createUser(w http.ResponseWriter, r *http.Request) error {
	name, email, err := readUser(w, r, 0)
	if err != nil {
		return err
	}
	created, err := a.commit(change{op: opCreate, name: name, email: email})
	if err != nil {
		return err
	}
	h := w.Header()
	h["Location"] = []string{userPath(created.id())}
	h["Etag"] = []string{formatETag(created.etag)}
	writeJSON(w, http.StatusCreated, created.json)
	return nil
}

// GET /api/users/{id} returns one user.
func (a *api) getUser(w http.ResponseWriter, r *http.Request, id int64) error {
	if err := rejectQuery(r); err != nil {
		return err
	}
	found, ok := a.store.get(id)
	if !ok {
		return errUserNotFound
	}
	if !notModified(w, r, formatETag(found.etag)) {
		writeJSON(w, http.StatusOK, found.json)
	}
	return nil
}

// PUT replaces the whole user, so both fields are required (RFC 9110 §9.3.4). It never creates:
// ids are the server's to give.
func (a *api) replaceUser(w http.ResponseWriter, r *http.Request, id int64) error {
	return a.update(w, r, id, opReplace)
}

// PATCH changes only the fields it names: a JSON Merge Patch (RFC 7396).
func (a *api) patchUser(w http.ResponseWriter, r *http.Request, id int64) error {
	return a.update(w, r, id, opPatch)
}

// update answers PUT and PATCH with the stored user and its new ETag, so that a client can send
// If-Match next without reading first. Content-Location says the body is the representation of
// the user itself (RFC 9110 §8.7).
func (a *api) update(w http.ResponseWriter, r *http.Request, id int64, op changeOp) error {
	name, email, err := readUser(w, r, id)
	if err != nil {
		return err
	}
	updated, err := a.commit(change{op: op, id: id, name: name, email: email, ifMatch: headerList(r, "If-Match")})
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Location", userPath(id))
	h["Etag"] = []string{formatETag(updated.etag)}
	writeJSON(w, http.StatusOK, updated.json)
	return nil
}

// DELETE removes the user. Deleting it again is 404, yet the state is the same, so DELETE stays
// idempotent (RFC 9110 §9.2.2).
func (a *api) deleteUser(w http.ResponseWriter, r *http.Request, id int64) error {
	if err := rejectQuery(r); err != nil {
		return err
	}
	if _, err := a.commit(change{op: opDelete, id: id, ifMatch: headerList(r, "If-Match")}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// OPTIONS says which methods a path takes, and needs no token: /openapi.json publishes the same.
// A CORS preflight reads the same list from Access-Control-Allow-Methods.
func (a *api) options(allow string) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		h := w.Header()
		h.Set("Allow", allow)
		if strings.Contains(allow, "POST") {
			h.Set("Accept-Post", "application/json")
		}
		if strings.Contains(allow, "PATCH") {
			h.Set("Accept-Patch", "application/json, application/merge-patch+json")
		}
		if isPreflight(r) && h.Get("Access-Control-Allow-Origin") != "" {
			h.Set("Access-Control-Allow-Methods", allow)
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// GET /healthz tells scripts and orchestrators that the server is up and can still write.
func (a *api) health(w http.ResponseWriter, r *http.Request) error {
	if a.broken() {
		writeJSON(w, http.StatusServiceUnavailable, `{"status":"journal broken"}`)
		return nil
	}
	writeJSON(w, http.StatusOK, `{"status":"ok"}`)
	return nil
}

// methodNotAllowed answers a method the path does not take, naming the ones it does (RFC 9110 §15.5.6).
func methodNotAllowed(allow string) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		return &apiError{status: http.StatusMethodNotAllowed,
			message: "this path does not take the method " + quoteForMessage(r.Method) + ": it takes " + allow,
			header:  http.Header{"Allow": {allow}}}
	}
}

func notFound(w http.ResponseWriter, r *http.Request) error {
	return newError(http.StatusNotFound, "there is nothing at this path: the users are at /api/users")
}

// notModified gives a GET or HEAD answer its ETag, and answers 304 when If-None-Match shows the
// client already has the representation (RFC 9110 §13.1.2); it reports whether it did. Otherwise
// the caller sends the representation. Caches may keep either answer but must revalidate it,
// since it depends on the token (Vary: Authorization).
func notModified(w http.ResponseWriter, r *http.Request, etag string) bool {
	h := w.Header()
	h["Etag"] = []string{etag}
	h["Cache-Control"] = revalidate
	if ifNoneMatch := headerList(r, "If-None-Match"); ifNoneMatch != "" && ifNoneMatchHolds(ifNoneMatch, etag) {
		w.WriteHeader(http.StatusNotModified)
		return true
	}
	return false
}

// rejectQuery refuses a query string where only the list takes one (SPEC §2).
func rejectQuery(r *http.Request) error {
	if r.URL.RawQuery == "" {
		return nil
	}
	name, _, _ := strings.Cut(r.URL.RawQuery, "=")
	name, _, _ = strings.Cut(name, "&")
	return badRequest("this request takes no query parameters, but the query has " + quoteForMessage(name) +
		": only the list (GET /api/users) takes page, per_page, q, email and sort")
}

// parsePositive reads an id, page or per_page: a positive integer in canonical decimal, so that
// every resource has exactly one URI ("7", never "07", "+7" or "7.0").
func parsePositive(s string) (int64, bool) {
	if s == "" || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func userPath(id int64) string { return "/api/users/" + strconv.FormatInt(id, 10) }

// headerList returns a header that holds a list, joining its lines (RFC 9110 §5.3). The name is
// given as net/http stores it (http.CanonicalHeaderKey), so the map is read directly.
func headerList(r *http.Request, name string) string {
	return strings.Join(r.Header[name], ", ")
}
