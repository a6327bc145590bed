package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// The benchmarks the README and docs/durability.md cite. Run them with
//
//	go test -run '^$' -bench . -benchmem
//
// Requests go through the whole handler stack that newTestServer builds (request id, access log,
// token, the mux, the handler), with the access log formatted as the program formats it and then
// dropped. The users are seeded as bench/seed adds them: user N is "Seed User N", seedN@bench.test.

// BenchmarkGetUser reads 64 users spread over a store of 1,000, in turn.
func BenchmarkGetUser(b *testing.B) {
	ts := benchService(b, 1000)
	var requests []benchRequest
	for id := 1; id <= 1000; id += 16 {
		requests = append(requests, benchRequestOf("GET", userPath(int64(id)), readToken, ""))
	}
	benchRoute(b, ts, http.StatusOK, requests...)
}

// BenchmarkListUsers is the whole list of 1,000 users, built from the store at each request.
func BenchmarkListUsers(b *testing.B) {
	ts := benchService(b, 1000)
	benchRoute(b, ts, http.StatusOK, benchRequestOf("GET", "/api/users", readToken, ""))
}

// BenchmarkPage is a page of 10 users of 1,000: the first, one in the middle, the last.
func BenchmarkPage(b *testing.B) {
	for _, page := range []struct {
		name   string
		number int
	}{{"first", 1}, {"middle", 50}, {"last", 100}} {
		b.Run(page.name, func(b *testing.B) {
			ts := benchService(b, 1000)
			benchRoute(b, ts, http.StatusOK, benchRequestOf("GET", fmt.Sprintf("/api/users?page=%d&per_page=10", page.number), readToken, ""))
		})
	}
}

// BenchmarkCreateUser is POST of a new user to a store of 1,000, in memory, each with its own
// e-mail.
func BenchmarkCreateUser(b *testing.B) {
	ts := benchService(b, 1000)
	requests := make([]benchRequest, b.N)
	for i := range requests {
		requests[i] = benchRequestOf("POST", "/api/users", writeToken, fmt.Sprintf(`{"name":"Load User %d","email":"load%d@bench.test"}`, i, i))
	}
	benchRoute(b, ts, http.StatusCreated, requests...)
}

// BenchmarkReplaceUser is PUT of 64 users of a store of 1,000, in turn, each keeping its e-mail.
func BenchmarkReplaceUser(b *testing.B) {
	ts := benchService(b, 1000)
	var requests []benchRequest
	for n := 1; n <= 1000; n += 16 {
		body := fmt.Sprintf(`{"name":"Replaced User %d","email":"seed%d@bench.test"}`, n, n)
		requests = append(requests, benchRequestOf("PUT", userPath(int64(n)), writeToken, body))
	}
	benchRoute(b, ts, http.StatusOK, requests...)
}

// BenchmarkPatchUser is PATCH of the name of 64 users of a store of 1,000, in turn.
func BenchmarkPatchUser(b *testing.B) {
	ts := benchService(b, 1000)
	var requests []benchRequest
	for n := 1; n <= 1000; n += 16 {
		requests = append(requests, benchRequestOf("PATCH", userPath(int64(n)), writeToken, fmt.Sprintf(`{"name":"Patched User %d"}`, n)))
	}
	benchRoute(b, ts, http.StatusOK, requests...)
}

// BenchmarkDurableWrite is one write of a store kept in a file of 100, 1,000 and 10,000 users:
// the whole document encoded, written to the temporary file, fsync'd, renamed over the file, and
// the folder fsync'd. go test -run '^$' -bench DurableWrite
func BenchmarkDurableWrite(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s, err := openUserStore(writeSeedFile(b, n), slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				b.Fatal(err)
			}
			defer s.close()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				name := "Renamed User " + strconv.Itoa(i)
				if _, err := s.update(context.Background(), int64(i%n+1), userFields{name: &name}, allowAny); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOpen10000 is what -data costs at start with 10,000 users: the file read, checked, put
// in the map, and written once. go test -run '^$' -bench Open10000
func BenchmarkOpen10000(b *testing.B) {
	path := writeSeedFile(b, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := openUserStore(path, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			b.Fatal(err)
		}
		s.close()
	}
}

// BenchmarkGetUserWhileWriting is GET of one user of a store kept in a file of 1,000 users while
// another client writes without a pause: a read waits for the write in progress, whose file is
// rewritten under the store's lock (docs/durability.md). ns/op is a read's mean time; p99-ns is
// the time 99% of the reads took at most.
func BenchmarkGetUserWhileWriting(b *testing.B) {
	ts := benchService(b, 0, "-data", writeSeedFile(b, 1000))
	read := benchRequestOf("GET", userPath(7), readToken, "")
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			name := "Renamed User " + strconv.Itoa(i)
			if _, err := ts.store.update(context.Background(), int64(i%1000+1), userFields{name: &name}, allowAny); err != nil {
				b.Error(err)
				return
			}
		}
	}()
	w := &benchResponse{header: http.Header{}}
	took := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if status := read.send(ts, w); status != http.StatusOK {
			b.Fatalf("status %d, want 200", status)
		}
		took[i] = time.Since(start)
	}
	b.StopTimer()
	close(stop)
	<-stopped
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
}

// benchService is the service as newTestServer builds it with these flags and the program's
// default text log, holding n seed users. They are added straight to the store: through POST they
// would be the same users, only slower to add.
func benchService(b *testing.B, n int, flags ...string) *testServer {
	b.Helper()
	ts := newTestServer(b, append([]string{"-log-format", "text"}, flags...)...)
	for i := 1; i <= n; i++ {
		name, email := "Seed User "+strconv.Itoa(i), "seed"+strconv.Itoa(i)+"@bench.test"
		if _, err := ts.store.create(context.Background(), userFields{name: &name, email: &email}, preconditions{}.onCollection); err != nil {
			b.Fatal(err)
		}
	}
	return ts
}

// writeSeedFile writes a data file of n seed users in a temporary folder, as bench/durable.sh
// does, and returns its path.
func writeSeedFile(b *testing.B, n int) string {
	b.Helper()
	next := uint64(n) + 1
	document := fileDocument{NextID: &next, Users: []user{}}
	for i := 1; i <= n; i++ {
		document.Users = append(document.Users, user{ID: int64(i), Name: "Seed User " + strconv.Itoa(i), Email: "seed" + strconv.Itoa(i) + "@bench.test"})
	}
	data, err := json.Marshal(document)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "users.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// benchRoute sends the requests in turn, b.N in all, and fails on any status but want: a fast
// wrong answer proves nothing.
func benchRoute(b *testing.B, ts *testServer, want int, requests ...benchRequest) {
	w := &benchResponse{header: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if status := requests[i%len(requests)].send(ts, w); status != want {
			b.Fatalf("status %d, want %d", status, want)
		}
	}
}

// A benchRequest is a request to send again and again: each send is a shallow copy of it, with
// its body read afresh.
type benchRequest struct {
	template *http.Request
	body     []byte
}

// benchRequestOf is a request with this bearer token and, when body is not "", a JSON body.
func benchRequestOf(method, target, token, body string) benchRequest {
	r := httptest.NewRequest(method, target, nil)
	r.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	return benchRequest{template: r, body: []byte(body)}
}

// send serves the request once through ts and returns the status. The access log that ts keeps
// is emptied after each request, so that it does not grow with b.N.
func (br benchRequest) send(ts *testServer, w *benchResponse) int {
	r := br.template.WithContext(br.template.Context())
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(br.body)), int64(len(br.body))
	clear(w.header)
	w.status = 0
	ts.ServeHTTP(w, r)
	ts.log.mu.Lock()
	ts.log.buf.Reset()
	ts.log.mu.Unlock()
	return w.status
}

// benchResponse is the cheapest ResponseWriter that still behaves as one: a header, a status, and
// a body that is dropped. httptest.ResponseRecorder would copy every body.
type benchResponse struct {
	header http.Header
	status int
}

func (w *benchResponse) Header() http.Header { return w.header }

func (w *benchResponse) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *benchResponse) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(p), nil
}
