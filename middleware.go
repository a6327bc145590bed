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

// What every request goes through before its route, from the outside in (newServer, users.go):
//
//	observe           request id, nosniff, the access log line, and a panic answered as a JSON 500
//	allowCrossOrigin  the CORS headers, and a preflight's 204 under /api/, when -cors-origin is set (cors.go)
//	guardAPI          under /api/: Vary, Cache-Control, -delay, then the token (401, 403)
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

// isPreflight reports whether a request is a browser asking whether it may send another (CORS).
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" &&
		r.Header.Get("Access-Control-Request-Method") != ""
}

// guardAPI does what every request to a path under /api/ needs before its route: the header
// fields every answer there carries, -delay, and the bearer token (401, 403) for every method
// but an OPTIONS (docs/api.md, "The order of the checks"). The path is the one the mux routes,
// its escapes decoded, so /api//users needs a token before the mux redirects it.
func (a *api) guardAPI(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/") {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Add("Vary", "Authorization")     // what an answer says depends on who asks
		w.Header().Set("Cache-Control", "no-store") // a 200 or 304 to GET relaxes it (sendRepresentation)
		var refused error                           // OPTIONS needs no token
		if r.Method != http.MethodOptions {
			refused = a.tokens.permit(r)
		}
		if a.delay > 0 && !isPreflight(r) { // -delay, for demos of loading states; a 401 waits too
			if refused == nil {
				readBodyFirst(r)
			}
			timer := time.NewTimer(a.delay)
			defer timer.Stop()
			select {
			case <-timer.C:
			case <-r.Context().Done():
				return // the client has gone: nothing to answer, and the log says so (observe)
			}
		}
		if refused != nil {
			writeError(w, r, a.log, refused)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// readBodyFirst reads the body of a request that is about to wait out -delay, once its token is
// known good, up to one byte over the limit, and hands it on as it was. net/http notices that a client has gone only once the
// body is read to its end: without this, a POST whose client left would still wait, then write.
func readBodyFirst(r *http.Request) {
	read, _ := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1)) // an error shows again to the handler
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(read), r.Body), r.Body}
}
