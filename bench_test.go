package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Benchmarks of every route through the real handler stack (newServer: request id, access log,
// authentication, the mux, the handler), with the access log formatted but thrown away. Run them
// with
//
//	go test -run '^$' -bench . -benchmem
//
// The store is seeded like bench/load.sh seeds the running server: "Seed User N", seedN@bench.test.
// bench/load.sh measures the same routes over real connections, next to a bare net/http server and
// the same API written with Gin; bench/README.md has the figures.

// benchServer returns a server holding n seed users, added straight to the store: going through
// POST would give the same stored users, only slower.
func benchServer(b *testing.B, n int) *testServer {
	b.Helper()
	s := newTestServer(b)
	for i := 1; i <= n; i++ {
		c := createChange("Seed User "+strconv.Itoa(i), "seed"+strconv.Itoa(i)+"@bench.test")
		if _, err := s.store.commit(c); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// The 1,000,000-user server is slow to build, so the benchmarks that need it share one.
var benchMillion *testServer

func benchMillionServer(b *testing.B) *testServer {
	if benchMillion == nil {
		benchMillion = benchServer(b, 1_000_000)
	}
	return benchMillion
}

// benchRequest is a request to send again and again. Each send is a shallow copy, since the
// middleware and the mux keep their state in the copy they are given.
type benchRequest struct {
	template *http.Request
	body     []byte
}

func newBenchRequest(method, target, body string, headers ...string) *benchRequest {
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	r.ContentLength = int64(len(body))
	return &benchRequest{template: r, body: []byte(body)}
}

// send serves the request once, with body in place of the template's when it is not nil, and
// returns the status.
func (br *benchRequest) send(handler http.Handler, w *benchResponse, body []byte) int {
	r := br.template.WithContext(br.template.Context())
	if body == nil {
		body = br.body
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	w.reset()
	handler.ServeHTTP(w, r)
	return w.status
}

// benchResponse is the cheapest ResponseWriter that still behaves like one: headers, a status,
// and a body that is counted and dropped. httptest.ResponseRecorder would copy every body.
type benchResponse struct {
	header http.Header
	status int
	bytes  int
}

func newBenchResponse() *benchResponse { return &benchResponse{header: http.Header{}} }

func (d *benchResponse) reset() {
	clear(d.header)
	d.status, d.bytes = 0, 0
}

func (d *benchResponse) Header() http.Header { return d.header }

func (d *benchResponse) WriteHeader(status int) {
	if d.status == 0 {
		d.status = status
	}
}

func (d *benchResponse) Write(b []byte) (int, error) {
	d.WriteHeader(http.StatusOK)
	d.bytes += len(b)
	return len(b), nil
}

// expect fails the benchmark on a status it did not expect: a fast wrong answer proves nothing.
func expectStatus(b *testing.B, got, want int) {
	if got != want {
		b.Fatalf("status %d, want %d", got, want)
	}
}

// sendInTurn sends the requests one after another, b.N in all, and fails on any answer that is
// not want. It returns the response writer, which holds the size of the last answer.
func sendInTurn(b *testing.B, s *testServer, want int, requests ...*benchRequest) *benchResponse {
	w := newBenchResponse()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		expectStatus(b, requests[i%len(requests)].send(s.handler, w, nil), want)
	}
	return w
}

func BenchmarkGetUser(b *testing.B) {
	s := benchServer(b, 1000)
	benchmarkGetUser(b, s, 1000)
}

func BenchmarkGetUserOf1M(b *testing.B) {
	benchmarkGetUser(b, benchMillionServer(b), 1_000_000)
}

func benchmarkGetUser(b *testing.B, s *testServer, users int) {
	requests := make([]*benchRequest, 64)
	for i := range requests {
		id := 1 + i*(users/len(requests))
		requests[i] = newBenchRequest("GET", "/api/users/"+strconv.Itoa(id), "", asReader...)
	}
	sendInTurn(b, s, http.StatusOK, requests...)
}

// BenchmarkGetUserNotModified is a GET that a client's cache answers: 304, no body.
func BenchmarkGetUserNotModified(b *testing.B) {
	s := benchServer(b, 1000)
	etag := s.do("GET", "/api/users/7", "", asReader...).Header().Get("ETag")
	request := newBenchRequest("GET", "/api/users/7", "", join(asReader, []string{"If-None-Match", etag})...)
	sendInTurn(b, s, http.StatusNotModified, request)
}

// BenchmarkListUsers is the unpaged list of 1,000 users, which is served from its cache.
func BenchmarkListUsers(b *testing.B) {
	s := benchServer(b, 1000)
	request := newBenchRequest("GET", "/api/users", "", asReader...)
	w := sendInTurn(b, s, http.StatusOK, request)
	b.SetBytes(int64(w.bytes))
}

// BenchmarkListUsersAfterWrite is the unpaged list when every read follows a write: the cache is
// always stale, so this is the cost of building the list of 1,000 users.
func BenchmarkListUsersAfterWrite(b *testing.B) {
	s := benchServer(b, 1000)
	request := newBenchRequest("GET", "/api/users", "", asReader...)
	w := newBenchResponse()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.store.publish(nil) // a new version, as any write makes: a lock and an increment
		expectStatus(b, request.send(s.handler, w, nil), http.StatusOK)
	}
}

// Pages in id order cost the same at 1,000 and at 1,000,000 users, whatever the page number.
func BenchmarkPage(b *testing.B) {
	for _, size := range []struct {
		name   string
		server func(*testing.B) *testServer
		users  int
	}{
		{"1k", func(b *testing.B) *testServer { return benchServer(b, 1000) }, 1000},
		{"1M", benchMillionServer, 1_000_000},
	} {
		for _, page := range []struct {
			name string
			n    int
		}{{"first", 1}, {"middle", size.users / 20}, {"last", size.users / 10}} {
			b.Run(size.name+"/"+page.name, func(b *testing.B) {
				s := size.server(b)
				target := fmt.Sprintf("/api/users?page=%d&per_page=10", page.n)
				request := newBenchRequest("GET", target, "", asReader...)
				sendInTurn(b, s, http.StatusOK, request)
			})
		}
	}
}

func BenchmarkCreateUser(b *testing.B) {
	s := benchServer(b, 1000)
	request := newBenchRequest("POST", "/api/users", "", join(asWriter, asJSON)...)
	w := newBenchResponse()
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = []byte(fmt.Sprintf(`{"name":"Load User %d","email":"load%d@bench.test"}`, i, i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		expectStatus(b, request.send(s.handler, w, bodies[i]), http.StatusCreated)
	}
}

func BenchmarkReplaceUser(b *testing.B) {
	s := benchServer(b, 1000)
	requests := make([]*benchRequest, 64)
	for i := range requests {
		id := 1 + i*15
		body := fmt.Sprintf(`{"name":"Replaced User %d","email":"seed%d@bench.test"}`, id, id)
		requests[i] = newBenchRequest("PUT", "/api/users/"+strconv.Itoa(id), body, join(asWriter, asJSON)...)
	}
	sendInTurn(b, s, http.StatusOK, requests...)
}

func BenchmarkPatchUser(b *testing.B) {
	s := benchServer(b, 1000)
	requests := make([]*benchRequest, 64)
	for i := range requests {
		id := 1 + i*15
		body := fmt.Sprintf(`{"name":"Patched User %d"}`, id)
		requests[i] = newBenchRequest("PATCH", "/api/users/"+strconv.Itoa(id), body, join(asWriter, asJSON)...)
	}
	sendInTurn(b, s, http.StatusOK, requests...)
}

// BenchmarkDeleteUser deletes the user with the smallest id and adds one at the end, so the
// collection keeps its size: at 1k and at 1M users, to show whether a delete's cost grows with the
// collection. The 1M store is its own, since its users are deleted.
func BenchmarkDeleteUser(b *testing.B) {
	var million *testServer
	for _, size := range []int{1000, 1_000_000} {
		b.Run(strconv.Itoa(size/1000)+"k", func(b *testing.B) {
			s := million
			if s == nil || size == 1000 {
				s = benchServer(b, size)
			}
			if size > 1000 {
				million = s
			}
			w := newBenchResponse()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.store.mu.RLock()
				first := s.store.ids[0]
				s.store.mu.RUnlock()
				request := newBenchRequest("DELETE", "/api/users/"+strconv.FormatInt(first, 10), "", asWriter...)
				expectStatus(b, request.send(s.handler, w, nil), http.StatusNoContent)
				c := createChange("Seed User", "new"+strconv.Itoa(i)+"-"+strconv.FormatInt(first, 10)+"@bench.test")
				if _, err := s.store.commit(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSmallAnswers are the answers that never touch the store.
func BenchmarkSmallAnswers(b *testing.B) {
	s := benchServer(b, 0)
	for _, c := range []struct {
		name, method, target string
		headers              []string
		want                 int
	}{
		{"options", "OPTIONS", "/api/users/7", nil, http.StatusNoContent},
		{"healthz", "GET", "/healthz", nil, http.StatusOK},
		{"no-token", "GET", "/api/users/7", nil, http.StatusUnauthorized},
		{"not-found", "GET", "/api/users/7", asReader, http.StatusNotFound},
		{"wrong-method", "POST", "/api/users/7", asWriter, http.StatusMethodNotAllowed},
	} {
		b.Run(c.name, func(b *testing.B) {
			request := newBenchRequest(c.method, c.target, "", c.headers...)
			sendInTurn(b, s, c.want, request)
		})
	}
}

// BenchmarkMix is the load script's mixed workload: 9 reads of one user, then one PUT.
func BenchmarkMix(b *testing.B) {
	s := benchServer(b, 1000)
	gets := make([]*benchRequest, 64)
	puts := make([]*benchRequest, 64)
	for i := range gets {
		id := 1 + i*15
		gets[i] = newBenchRequest("GET", "/api/users/"+strconv.Itoa(id), "", asWriter...)
		body := fmt.Sprintf(`{"name":"Mixed User %d","email":"seed%d@bench.test"}`, id, id)
		puts[i] = newBenchRequest("PUT", "/api/users/"+strconv.Itoa(id), body, join(asWriter, asJSON)...)
	}
	w := newBenchResponse()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%10 == 9 {
			expectStatus(b, puts[(i/10)%len(puts)].send(s.handler, w, nil), http.StatusOK)
		} else {
			expectStatus(b, gets[i%len(gets)].send(s.handler, w, nil), http.StatusOK)
		}
	}
}

// BenchmarkGetUserParallel is many clients reading at once: reads must not wait for each other.
func BenchmarkGetUserParallel(b *testing.B) {
	s := benchServer(b, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		request := newBenchRequest("GET", "/api/users/7", "", asReader...)
		w := newBenchResponse()
		for pb.Next() {
			if request.send(s.handler, w, nil) != http.StatusOK {
				b.Error("status", w.status)
				return
			}
		}
	})
}

// BenchmarkMemoryPerUser measures the live heap of a store of 1,000,000 seed users, every cache
// included (the encoded list is built too), in bytes per user. One store is built per run, so the
// figures are in its metrics, not in ns/op.
func BenchmarkMemoryPerUser(b *testing.B) {
	const users = 1_000_000
	benchMillion = nil // measure a store of our own, with nothing else alive beside it
	for i := 0; i < b.N; i++ {
		before := benchLiveHeap()
		s := benchServer(b, users)
		w := s.do("GET", "/api/users", "", asReader...) // fills the list's cache
		if w.Code != http.StatusOK || !strings.HasSuffix(w.Body.String(), `"total":1000000}`) {
			b.Fatalf("the list: status %d", w.Code)
		}
		w = nil
		after := benchLiveHeap()
		b.ReportMetric(float64(after-before)/users, "bytes/user")
		b.ReportMetric(float64(after)/(1<<20), "heap-MiB")
		runtime.KeepAlive(s)
	}
}

// benchLiveHeap returns the bytes of heap still in use after two full collections. The second
// one empties sync.Pool's victim cache, where encoding/json keeps the buffer it last encoded the
// whole list into (about twice the list's size): a cache the runtime drops when it goes unused,
// not data the store keeps.
func benchLiveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
