package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// What every request goes through before its route, from the outside in (newServer, users.go),
// each middleware with one job:
//
//	observe           the request id, nosniff, the access log line, and a panic answered as a JSON 500
//	allowCrossOrigin  the CORS headers, and a preflight's 204 under /api/ (cors.go)
//	apiHeaders        under /api/: Vary: Authorization and Cache-Control
//	slowDown          under /api/, with -delay: the wait before the answer
//	requireToken      under /api/: the bearer token and its permission, 401 and 403 (auth.go)
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
			if answer.status == 0 && (aborted || r.Context().Err() != nil) { // cut, or the client went away, before an answer
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
	writeError(answer, r, a.log, internalError())
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

// isPreflight reports whether a request is a browser asking whether it may send another (CORS).
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" &&
		r.Header.Get("Access-Control-Request-Method") != ""
}

// isAPI reports whether a request is to the API, whose paths begin with /api/. The path is the
// one the mux routes, its escapes decoded, so /api//users is judged as the API before the mux
// redirects it.
func isAPI(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/api/") }

// apiHeaders sets what every answer under /api/ carries: Vary: Authorization, since what it says
// depends on who asks, and Cache-Control: no-store, which a 200 or 304 to GET relaxes
// (sendRepresentation).
func apiHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isAPI(r) {
			w.Header().Add("Vary", "Authorization")
			w.Header().Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}

// slowDown waits -delay before it lets a request under /api/ go on (but a preflight), so that a
// page shows its loading states. A client that leaves ends its wait and gets no answer (observe
// logs it so); a stop waits for a delayed request as for any other.
func (a *api) slowDown(next http.Handler) http.Handler {
	if a.delay == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isAPI(r) || isPreflight(r) {
			next.ServeHTTP(w, r)
			return
		}
		// net/http notices that a client has left only once it has read the request's body to its
		// end: the body is read first, through the limit the handlers read it with, and handed on.
		r.Body = readAhead(w, r.Body)
		timer := time.NewTimer(a.delay)
		defer timer.Stop()
		select {
		case <-timer.C:
			next.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	})
}

// readAhead reads body to its end, as far as maxBodyBytes allows, and returns a body that gives
// the same bytes, and then the same error, again.
func readAhead(w http.ResponseWriter, body io.ReadCloser) io.ReadCloser {
	read, err := io.ReadAll(http.MaxBytesReader(w, body, maxBodyBytes))
	return readAgain{Reader: io.MultiReader(bytes.NewReader(read), failingReader{err}), Closer: body}
}

// readAgain is a body read ahead: its bytes again, and the body's own Close.
type readAgain struct {
	io.Reader
	io.Closer
}

// A failingReader gives its error at every read, or io.EOF for none.
type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, cmp.Or(f.err, io.EOF) }
