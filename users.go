package main

import (
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// api is the service: its handlers and what they share.
type api struct {
	store    *userStore
	tokens   tokens
	log      *slog.Logger
	delay    time.Duration
	stopping <-chan struct{} // closed when the server starts to stop: a -delay ends early
	cors     corsPolicy
	files    map[string]staticFile // the page, its assets and /openapi.json (web.go)

	requestIDPrefix string
	requestCount    atomic.Uint64
}

// A resource is a path of the service and the handler of each method it takes.
type resource struct {
	path      string
	endpoints []endpoint
}

type endpoint struct {
	method string
	role   role // what the bearer token must allow (403); roleNone needs no token
	handle handlerFunc
}

// handlerFunc is a handler that returns its failure, for handle to answer.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// resources lists every path and its methods: the mux, Allow and CORS preflights all come from here.
func (a *api) resources() []resource {
	return []resource{
		{"/api/users", []endpoint{
			{http.MethodGet, roleRead, a.listUsers},
			{http.MethodPost, roleWrite, a.createUser},
		}},
		{"/api/users/{id}", []endpoint{
			{http.MethodGet, roleRead, a.getUser},
			{http.MethodPut, roleWrite, a.replaceUser},
			{http.MethodPatch, roleWrite, a.patchUser},
			{http.MethodDelete, roleWrite, a.deleteUser},
		}},
		{"/healthz", []endpoint{{http.MethodGet, roleNone, a.health}}},
		{"/openapi.json", []endpoint{{http.MethodGet, roleNone, a.serveFile}}},
		{"/{$}", []endpoint{{http.MethodGet, roleNone, a.serveFile}}}, // "/" alone would match every path
		{"/assets/{file}", []endpoint{{http.MethodGet, roleNone, a.serveFile}}},
	}
}

// newServer builds the whole service: the routes on a ServeMux, wrapped in middleware.go's checks.
func newServer(cfg config, log *slog.Logger, tokens tokens, store *userStore, stopping <-chan struct{}) http.Handler {
	a := &api{store: store, tokens: tokens, log: log, delay: cfg.delay, stopping: stopping,
		cors: cfg.cors, files: staticFiles, requestIDPrefix: randomHex(4) + "-"}
	if cfg.servesHTTPS() {
		a.files = staticFilesOverHTTPS
	}
	mux := http.NewServeMux()
	for _, res := range a.resources() {
		for _, e := range res.endpoints {
			mux.Handle(e.method+" "+res.path, a.handle(checkIDAndRole(e.role, e.handle)))
		}
		allow := res.allow()
		mux.Handle(http.MethodOptions+" "+res.path, a.handle(checkIDAndRole(roleNone, a.options(allow))))
		mux.Handle(res.path, a.handle(methodNotAllowed(allow))) // without a method: every other method
	}
	mux.Handle("/", a.handle(notFound))
	return a.observe(a.allowCrossOrigin(a.guardAPI(mux)))
}

// allow lists the methods of a resource, as Allow names them (RFC 9110 §10.2.1).
func (res resource) allow() []string {
	var methods []string
	for _, e := range res.endpoints {
		methods = append(methods, e.method)
		if e.method == http.MethodGet {
			methods = append(methods, http.MethodHead) // ServeMux lets GET serve HEAD too
		}
	}
	return append(methods, http.MethodOptions)
}

// handle turns a handlerFunc into an http.Handler that answers the error it returns.
func (a *api) handle(handler handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := handler(w, r); err != nil {
			writeError(w, r, a.log, err)
		}
	})
}

// checkIDAndRole follows routing: an {id} not canonical is 404, then the token's role 403, so no one
// learns what exists without permission (docs/api.md, "The order of the checks").
func checkIDAndRole(needed role, handler handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if id := r.PathValue("id"); id != "" { // "" on a path without {id}
			if _, ok := parseID(id); !ok {
				return errUserNotFound
			}
		}
		if err := requireRole(r, needed); err != nil {
			return err
		}
		return handler(w, r)
	}
}

// listUsers answers GET and HEAD of /api/users: the users the query selects, sorted and paged as
// it asks (docs/api.md, "Listing").
func (a *api) listUsers(w http.ResponseWriter, r *http.Request) error {
	query, err := parseListQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	list := a.store.list(query)
	if query.paged {
		w.Header().Set("Link", query.links(list.total))
	}
	w.Header().Set("Cache-Control", "private, no-cache") // a cache must ask again: the answer depends on the token
	return sendRepresentation(w, r, "application/json", list.body, list.etag)
}

// createUser answers POST: the server gives the new user its id and names its URI in Location
// (RFC 9110 §9.3.3).
func (a *api) createUser(w http.ResponseWriter, r *http.Request) error {
	body, err := readUserBody(w, r)
	if err != nil {
		return err
	}
	fields, err := body.newUser()
	if err != nil {
		return err
	}
	created, err := a.store.commit(change{op: opCreate, fields: fields, conditions: readPreconditions(r)})
	if err != nil {
		return err
	}
	representation := marshal(created)
	w.Header().Set("Location", userPath(created.ID))
	w.Header().Set("ETag", entityTag(representation))
	writeJSON(w, http.StatusCreated, representation)
	return nil
}

// getUser answers GET and HEAD of one user.
func (a *api) getUser(w http.ResponseWriter, r *http.Request) error {
	if err := rejectQuery(r); err != nil {
		return err
	}
	found, ok := a.store.get(userID(r))
	if !ok {
		return errUserNotFound
	}
	representation := marshal(found)
	w.Header().Set("Cache-Control", "private, no-cache") // a cache must ask again: the answer depends on the token
	return sendRepresentation(w, r, "application/json", representation, entityTag(representation))
}

// replaceUser answers PUT: the whole user is replaced, so both fields are required (RFC 9110
// §9.3.4). It never creates: ids are the server's to give.
func (a *api) replaceUser(w http.ResponseWriter, r *http.Request) error {
	body, err := readUserBody(w, r)
	if err != nil {
		return err
	}
	fields, err := body.replacement(userID(r))
	if err != nil {
		return err
	}
	return a.update(w, r, fields)
}

// patchUser answers PATCH: a JSON Merge Patch (RFC 7396) changes only the fields it names.
func (a *api) patchUser(w http.ResponseWriter, r *http.Request) error {
	body, err := readUserBody(w, r)
	if err != nil {
		return err
	}
	fields, err := body.patch(userID(r))
	if err != nil {
		return err
	}
	return a.update(w, r, fields)
}

// update sets the fields of the path's user and answers with the user as stored, its ETag and
// Content-Location (RFC 9110 §8.7), so a client can send If-Match next without a GET.
func (a *api) update(w http.ResponseWriter, r *http.Request, fields userFields) error {
	id := userID(r)
	updated, err := a.store.commit(change{op: opUpdate, id: id, fields: fields, conditions: readPreconditions(r)})
	if err != nil {
		return err
	}
	representation := marshal(updated)
	w.Header().Set("Content-Location", userPath(id))
	w.Header().Set("ETag", entityTag(representation))
	writeJSON(w, http.StatusOK, representation)
	return nil
}

// deleteUser answers DELETE. Deleting again is 404, but the state is the same: DELETE stays
// idempotent (RFC 9110 §9.2.2).
func (a *api) deleteUser(w http.ResponseWriter, r *http.Request) error {
	if err := rejectQuery(r); err != nil {
		return err
	}
	if _, err := a.store.commit(change{op: opDelete, id: userID(r), conditions: readPreconditions(r)}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// options answers OPTIONS with the methods a path takes and the bodies they accept. It needs no
// token: /openapi.json publishes the same.
func (a *api) options(allow []string) handlerFunc {
	methods := strings.Join(allow, ", ")
	return func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Allow", methods)
		for _, method := range allow {
			if header, ok := acceptHeaders[method]; ok {
				w.Header().Set(header, strings.Join(bodyMediaTypes[method], ", "))
			}
		}
		if isPreflight(r) && a.cors.allows(r.Header.Get("Origin")) {
			w.Header().Set("Access-Control-Allow-Methods", methods)
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// health answers /healthz: whether the server is up and can still write, for scripts and
// orchestrators.
func (a *api) health(w http.ResponseWriter, r *http.Request) error {
	status, health := http.StatusOK, "ok"
	if a.store.broken() {
		status, health = http.StatusServiceUnavailable, "journal broken"
	}
	writeJSON(w, status, marshal(map[string]string{"status": health}))
	return nil
}

// methodNotAllowed answers a method the path does not take, naming those it takes (RFC 9110 §15.5.6).
func methodNotAllowed(allow []string) handlerFunc {
	methods := strings.Join(allow, ", ")
	return func(w http.ResponseWriter, r *http.Request) error {
		return &apiError{status: http.StatusMethodNotAllowed, header: headerWith("Allow", methods),
			message: "this path does not take the method " + quoteForMessage(r.Method) + ": it takes " + methods}
	}
}

// notFound answers a path that is not in the route table.
func notFound(w http.ResponseWriter, r *http.Request) error {
	return newError(http.StatusNotFound, "there is nothing at this path: the users are at /api/users")
}

// rejectQuery refuses a query on a route that takes none: only the list takes one. It names the
// first parameter as the list's parser reads them, or the query itself when it holds none.
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
		slices.Sort(names)
		what = names[0]
	}
	return badRequest("this request takes no query parameters, but the query has " + quoteForMessage(what) +
		": only the list (GET /api/users) takes page, per_page, q, email and sort")
}

// parseID reads the id of a path: a positive integer in canonical decimal, so that each user has
// one URI (docs/api.md, "Routes").
func parseID(s string) (int64, bool) { return parseCanonical(s) }

// parseCanonical reads a positive integer in canonical decimal: no sign, no leading zero, at most
// 2^63-1. strconv.ParseInt alone takes "+7" and "07".
func parseCanonical(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0 && s[0] != '+' && s[0] != '0'
}

// userID returns the id of /api/users/{id}, which checkIDAndRole has found canonical.
func userID(r *http.Request) int64 {
	id, _ := parseID(r.PathValue("id"))
	return id
}

func userPath(id int64) string { return "/api/users/" + strconv.FormatInt(id, 10) }
