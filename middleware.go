package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What every request goes through before its route, from the outside in:
//
//	observe           request id, nosniff, the access log line, and a panic answered as a JSON 500
//	allowCrossOrigin  the CORS headers, when -cors-origin is set
//	guardAPI          under /api/: Vary, Cache-Control, -delay, and the bearer token (401)
//	redirectToClean   a path not in clean form: 308 to its clean form
//	the mux           the routes of users.go, with JSON 404 and 405

// observe gives each request its id, logs it once it is answered, and turns a panic into a JSON 500.
func (a *api) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		requestID := a.requestID(r)
		w.Header().Set("X-Request-Id", requestID)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		answer := &observedResponse{ResponseWriter: w, head: r.Method == http.MethodHead}
		defer func() {
			aborted := false
			if recovered := recover(); recovered != nil {
				aborted = a.recoverPanic(answer, r, requestID, recovered)
			}
			method := slog.String("method", r.Method)
			path := slog.String("path", r.URL.Path)                                                 // never the query: RFC 6750 lets clients put tokens there
			duration := slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000) // a number in both formats
			id := slog.String("request_id", requestID)
			if answer.status == 0 && r.Context().Err() != nil { // the client went away before an answer
				a.log.LogAttrs(r.Context(), slog.LevelInfo, "request got no answer", method, path, duration, id)
			} else {
				status := cmp.Or(answer.status, http.StatusOK) // a handler that wrote nothing answered 200
				a.log.LogAttrs(r.Context(), slog.LevelInfo, "request", method, path,
					slog.Int("status", status), slog.Int64("bytes", answer.bytes), duration, id)
			}
			if aborted {
				panic(http.ErrAbortHandler) // net/http cuts the connection, and logs nothing more
			}
		}()
		next.ServeHTTP(answer, r)
	})
}

// recoverPanic answers a panic 500, logged with its stack; once the answer began, it cuts instead.
func (a *api) recoverPanic(answer *observedResponse, r *http.Request, requestID string, recovered any) (abort bool) {
	if recovered != http.ErrAbortHandler {
		a.log.Error("panic in handler", "request_id", requestID, "panic", fmt.Sprint(recovered), "stack", string(debug.Stack()))
	}
	if recovered == http.ErrAbortHandler || answer.status != 0 {
		return true
	}
	writeError(answer, r, a.log, errInternal)
	return false
}

// requestID is the client's X-Request-Id when safe to echo and log, or a prefix and a counter.
func (a *api) requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); isRequestID(id) {
		return id
	}
	return a.requestIDPrefix + strconv.FormatUint(a.requestCount.Add(1), 10)
}

// isRequestID accepts 1 to 64 characters of A-Z a-z 0-9 . _ -
func isRequestID(id string) bool {
	return id != "" && len(id) <= 64 && !strings.ContainsFunc(id, func(c rune) bool {
		return !isASCIIAlphanumeric(c) && c != '.' && c != '_' && c != '-'
	})
}

// observedResponse remembers the status and size of an answer, for the log.
type observedResponse struct {
	http.ResponseWriter
	head   bool // the answer is to HEAD, whose body net/http takes and never sends
	status int  // 0 until the answer begins
	bytes  int64
}

// WriteHeader remembers the status, then sends it.
func (o *observedResponse) WriteHeader(status int) {
	if o.status == 0 {
		o.status = status
	}
	o.ResponseWriter.WriteHeader(status)
}

// Write counts the bytes of the body, but for HEAD, then sends them.
func (o *observedResponse) Write(b []byte) (int, error) {
	if o.status == 0 {
		o.status = http.StatusOK
	}
	n, err := o.ResponseWriter.Write(b)
	if !o.head {
		o.bytes += int64(n)
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's own writer.
func (o *observedResponse) Unwrap() http.ResponseWriter { return o.ResponseWriter }

// guardAPI does what every /api/ request needs before routing, authentication (401) last.
func (a *api) guardAPI(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The asterisk form (OPTIONS *, which net/http answers itself) and CONNECT's host:port name
		// no path, and ServeMux would answer them in plain text (RFC 9112 §3.2.3, §3.2.4).
		if r.RequestURI == "*" || r.Method == http.MethodConnect && !strings.HasPrefix(r.RequestURI, "/") {
			writeError(w, r, a.log, badRequest("the request target must be a path, such as /api/users"))
			return
		}
		if !isAPIPath(sentPath(r)) && !isAPIPath(r.URL.Path) { // as sent, and with its escapes decoded
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Add("Vary", "Authorization")     // the answer depends on the token
		w.Header().Set("Cache-Control", "no-store") // GET answers relax it to "private, no-cache"
		if a.delay > 0 {
			timer := time.NewTimer(a.delay)
			defer timer.Stop()
			select {
			case <-timer.C:
			case <-stoppingOf(r.Context()): // a stopping server ends the delay early, and answers
			case <-r.Context().Done():
				return // the client has gone: nothing to answer, and the log says so (observe)
			}
		}
		if r.Method != http.MethodOptions {
			granted, err := a.tokens.authenticate(r)
			if err != nil {
				writeError(w, r, a.log, err)
				return
			}
			r = withRole(r, granted)
		}
		next.ServeHTTP(w, r)
	})
}

// stoppingKey is the context key of the channel that closes when the server starts to stop.
type stoppingKey struct{}

// withStopping returns ctx carrying stopping, a channel closed when the server starts to stop:
// start gives it to every request through http.Server.BaseContext.
func withStopping(ctx context.Context, stopping <-chan struct{}) context.Context {
	return context.WithValue(ctx, stoppingKey{}, stopping)
}

// stoppingOf returns the channel withStopping put in ctx, or nil, which never closes, when the
// handler is served without start (as in a program that copies newServer alone).
func stoppingOf(ctx context.Context) <-chan struct{} {
	stopping, _ := ctx.Value(stoppingKey{}).(<-chan struct{})
	return stopping
}

// isAPIPath reports whether a path is under /api/: whether its clean form (cleanPath) begins with
// /api/. guardAPI asks it of the path as sent and of the path with its escapes decoded, so //api/
// (clean form /api/), /x/../api/users and /%2Fapi/users need a token as /api/users does, and an
// anonymous caller learns nothing about what is under /api/, not even from a redirect.
func isAPIPath(p string) bool {
	return strings.HasPrefix(cleanPath(p), "/api/")
}

// redirectToClean answers a path not in clean form itself, on every route: 308 (permanent, the
// method and body kept: RFC 9110 §15.4.9) with Location its clean form, escapes as sent and the
// query kept. It runs before ServeMux, whose own redirect re-escapes what was escaped
// (/api//%75sers to /api/%2575sers) and whose status changed between Go versions. A path clean
// as sent whose escapes decode to one that is not (/api/%2E%2E/healthz, /%2Fapi/users) names
// nothing here, since %2E is not a dot and %2F not a slash: 404, before ServeMux would clean it.
func (a *api) redirectToClean(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent := sentPath(r)
		switch clean := cleanPath(sent); {
		case clean != sent:
			clean = escapeNonURIBytes(clean)
			location := clean
			if r.URL.RawQuery != "" || r.URL.ForceQuery {
				location += "?" + r.URL.RawQuery
			}
			writeError(w, r, a.log, newError(http.StatusPermanentRedirect, "this path is not in clean form: it is "+clean).
				withHeader("Location", location))
		case cleanPath(r.URL.Path) != r.URL.Path:
			writeError(w, r, a.log, newError(http.StatusNotFound, "there is nothing at this path: the users are at /api/users"))
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// sentPath is the path of the request target exactly as the client sent it, percent-escapes
// and all. r.URL.EscapedPath would give another escaping of the same path when the client's
// escapes are not the ones Go would choose.
func sentPath(r *http.Request) string {
	if p, _, _ := strings.Cut(r.RequestURI, "?"); strings.HasPrefix(p, "/") {
		return p
	}
	return r.URL.EscapedPath() // an absolute-form target (RFC 9112 §3.2.2) names a scheme and host first
}

// escapeNonURIBytes percent-encodes the bytes that a URI's path may not hold (RFC 3986 §3.3:
// unreserved, sub-delims, ":", "@", "/" and the escapes themselves may stay), which a client can
// still send in a request line. So a backslash, which browsers read as a slash, cannot turn the
// Location /\evil.example into another host; every byte a URI may hold stays exactly as sent.
func escapeNonURIBytes(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if c := p[i]; isASCIIAlphanumeric(rune(c)) || strings.IndexByte("-._~!$&'()*+,;=:@/%", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// cleanPath returns the clean form of a path that begins with "/": its dot segments removed as
// RFC 3986 §5.2.4 says ("." goes, ".." takes away the segment before it, if any) and its empty
// segments merged, so "/api//users/./" is "/api/users/". A trailing slash, or a "." or ".." at the
// end, leaves the path ending in "/", as §5.2.4 does. Percent-escapes are segments' bytes like any
// other: "%2E" is not a dot. A path is clean when cleanPath gives it back unchanged.
func cleanPath(p string) string {
	segments := strings.Split(strings.TrimPrefix(p, "/"), "/")
	kept := make([]string, 0, len(segments))
	for i, segment := range segments {
		last := i == len(segments)-1
		switch segment {
		case "..":
			if len(kept) > 0 {
				kept = kept[:len(kept)-1]
			}
		case ".", "":
		default:
			kept = append(kept, segment)
			continue
		}
		if last {
			kept = append(kept, "") // the path ends in "/"
		}
	}
	return "/" + strings.Join(kept, "/")
}

// corsPolicy is the -cors-origin setting: the origins whose pages may call the API from a browser,
// each as a browser writes it in Origin (parseCORSOrigins).
type corsPolicy struct {
	anyOrigin bool
	origins   []string
}

// allows reports whether a page of this origin may read the answers.
func (p corsPolicy) allows(origin string) bool {
	return p.anyOrigin || origin != "" && slices.Contains(p.origins, origin)
}

// allowCrossOrigin adds the CORS headers to every answer, wrapping the mux, which would 405 a preflight.
func (a *api) allowCrossOrigin(next http.Handler) http.Handler {
	if !a.cors.anyOrigin && len(a.cors.origins) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, origin := w.Header(), r.Header.Get("Origin")
		if a.cors.anyOrigin {
			origin = "*" // every page may read the answers, which then do not vary by origin
		} else {
			h.Add("Vary", "Origin")
		}
		if a.cors.allows(origin) {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Expose-Headers", "Location, Content-Location, ETag, Link, WWW-Authenticate, X-Request-Id")
			if isPreflight(r) { // the methods come from the route's OPTIONS (users.go)
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, If-Match, If-None-Match, X-Request-Id")
				h.Set("Access-Control-Max-Age", "600")
			}
		}
		next.ServeHTTP(w, r)
	})
}

// isPreflight reports whether a request is a browser asking whether it may send another (CORS).
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" &&
		r.Header.Get("Access-Control-Request-Method") != ""
}
