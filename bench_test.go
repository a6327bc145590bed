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

// benchSeeded is the service holding n seed users, added straight to the store (going through POST
// would give the same stored users, only slower), and their ids in order. It is built as
// newTestServer builds it, but with the log thrown away: newTestServer keeps the log in memory,
// where it would grow with b.N and be measured too.
func benchSeeded(b *testing.B, n int) (*testServer, []int64) {
	b.Helper()
	store := newUserStore()
	cfg, err := parseConfig([]string{"users"}, testEnv, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	handler, err := newServer(*cfg, newLogger("text", io.Discard), store) // the log formatted, then thrown away
	if err != nil {
		b.Fatal(err)
	}
	ts := &testServer{Handler: handler, store: store}
	ids := make([]int64, 0, n)
	for i := 1; i <= n; i++ {
		name, email := "Seed User "+strconv.Itoa(i), "seed"+strconv.Itoa(i)+"@bench.test"
		created, err := store.create(userFields{name: &name, email: &email}, noPrecondition)
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, created.ID)
	}
	return ts, ids
}

// The 1,000,000-user service is slow to build, so the benchmarks that read it share one.
var (
	benchMillion    *testServer
	benchMillionIDs []int64
)

// benchMillionSeeded is the shared service of 1,000,000 seed users, built by the first benchmark
// that asks for it.
func benchMillionSeeded(b *testing.B) (*testServer, []int64) {
	if benchMillion == nil {
		benchMillion, benchMillionIDs = benchSeeded(b, 1_000_000)
	}
	return benchMillion, benchMillionIDs
}

// benchRequest is a request to send again and again. Each send is a shallow copy, since the
// middleware and the mux keep their state in the copy they are given.
type benchRequest struct {
	template *http.Request
	body     []byte
}

// benchRequestOf is r, made with httptest.NewRequest and its headers set, ready to send with body.
func benchRequestOf(r *http.Request, body string) *benchRequest {
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

// benchSendInTurn sends the requests one after another, b.N in all, and fails on any answer that
// is not want: a fast wrong answer proves nothing. It returns the response writer, which holds the
// size of the last answer.
func benchSendInTurn(b *testing.B, ts *testServer, want int, requests ...*benchRequest) *benchResponse {
	w := newBenchResponse()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if status := requests[i%len(requests)].send(ts, w, nil); status != want {
			b.Fatalf("status %d, want %d", status, want)
		}
	}
	return w
}

// benchRead is a GET of target with the read token.
func benchRead(target string) *benchRequest {
	r := httptest.NewRequest("GET", target, nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	return benchRequestOf(r, "")
}

// benchWrite is a write of body (JSON) to target with the write token.
func benchWrite(method, target, body string) *benchRequest {
	r := httptest.NewRequest(method, target, nil)
	r.Header.Set("Authorization", "Bearer "+writeToken)
	r.Header.Set("Content-Type", "application/json")
	return benchRequestOf(r, body)
}

// BenchmarkGetUser reads users of a store of 1,000, one after another.
func BenchmarkGetUser(b *testing.B) {
	ts, ids := benchSeeded(b, 1000)
	benchmarkGetUser(b, ts, ids)
}

// BenchmarkGetUserOf1M reads users of a store of 1,000,000: a read costs the same at any size.
func BenchmarkGetUserOf1M(b *testing.B) {
	ts, ids := benchMillionSeeded(b)
	benchmarkGetUser(b, ts, ids)
}

// benchmarkGetUser reads 64 users spread over the whole store, in turn.
func benchmarkGetUser(b *testing.B, ts *testServer, ids []int64) {
	requests := make([]*benchRequest, 64)
	for i := range requests {
		requests[i] = benchRead(userPath(ids[i*(len(ids)/len(requests))]))
	}
	benchSendInTurn(b, ts, http.StatusOK, requests...)
}

// BenchmarkGetUserNotModified is a GET that a client's cache answers: 304, no body.
func BenchmarkGetUserNotModified(b *testing.B) {
	ts, ids := benchSeeded(b, 1000)
	read := httptest.NewRequest("GET", userPath(ids[6]), nil)
	read.Header.Set("Authorization", "Bearer "+readToken)
	etag := ts.serve(read).Header().Get("ETag")
	r := httptest.NewRequest("GET", userPath(ids[6]), nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	r.Header.Set("If-None-Match", etag)
	benchSendInTurn(b, ts, http.StatusNotModified, benchRequestOf(r, ""))
}

// BenchmarkListUsers is the unpaged list of 1,000 users, which is served from its cache.
func BenchmarkListUsers(b *testing.B) {
	ts, _ := benchSeeded(b, 1000)
	w := benchSendInTurn(b, ts, http.StatusOK, benchRead("/api/users"))
	b.SetBytes(int64(w.bytes))
}

// BenchmarkListUsersAfterWrite is the cost of building the whole list of 1,000 users, copied
// from the store and encoded: what the first read after every write pays, as the cache is stale.
func BenchmarkListUsersAfterWrite(b *testing.B) {
	ts, _ := benchSeeded(b, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		users, _ := ts.store.all()
		if _, err := encodeList(users, len(users), listQuery{}); err != nil {
			b.Fatal(err)
		}
	}
}

// Pages in id order cost the same at 1,000 and at 1,000,000 users, whatever the page number.
func BenchmarkPage(b *testing.B) {
	for _, size := range []struct {
		name   string
		server func(*testing.B) (*testServer, []int64)
		users  int
	}{
		{"1k", func(b *testing.B) (*testServer, []int64) { return benchSeeded(b, 1000) }, 1000},
		{"1M", benchMillionSeeded, 1_000_000},
	} {
		b.Run(size.name, func(b *testing.B) {
			for _, page := range []struct {
				name string
				n    int
			}{{"first", 1}, {"middle", size.users / 20}, {"last", size.users / 10}} {
				b.Run(page.name, func(b *testing.B) {
					ts, _ := size.server(b)
					benchSendInTurn(b, ts, http.StatusOK, benchRead(fmt.Sprintf("/api/users?page=%d&per_page=10", page.n)))
				})
			}
		})
	}
}

// BenchmarkCreateUser is POST of a new user, in memory, each with its own e-mail.
func BenchmarkCreateUser(b *testing.B) {
	ts, _ := benchSeeded(b, 1000)
	request := benchWrite("POST", "/api/users", "")
	w := newBenchResponse()
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = []byte(fmt.Sprintf(`{"name":"Load User %d","email":"load%d@bench.test"}`, i, i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if status := request.send(ts, w, bodies[i]); status != http.StatusCreated {
			b.Fatalf("status %d, want 201", status)
		}
	}
}

// BenchmarkReplaceUser is PUT of users of a store of 1,000, each keeping its e-mail.
func BenchmarkReplaceUser(b *testing.B) {
	ts, ids := benchSeeded(b, 1000)
	requests := make([]*benchRequest, 64)
	for i := range requests {
		n := 1 + i*15 // the seed user's number, in its name and e-mail
		body := fmt.Sprintf(`{"name":"Replaced User %d","email":"seed%d@bench.test"}`, n, n)
		requests[i] = benchWrite("PUT", userPath(ids[n-1]), body)
	}
	benchSendInTurn(b, ts, http.StatusOK, requests...)
}

// BenchmarkPatchUser is PATCH of the name of users of a store of 1,000.
func BenchmarkPatchUser(b *testing.B) {
	ts, ids := benchSeeded(b, 1000)
	requests := make([]*benchRequest, 64)
	for i := range requests {
		n := 1 + i*15
		requests[i] = benchWrite("PATCH", userPath(ids[n-1]), fmt.Sprintf(`{"name":"Patched User %d"}`, n))
	}
	benchSendInTurn(b, ts, http.StatusOK, requests...)
}

// BenchmarkDeleteUser deletes the user with the smallest id and adds one at the end, so the
// collection keeps its size: at 1k and at 1M users, to show whether a delete's cost grows with the
// collection. Each size has a store of its own, since its users are deleted, built once for every
// run b.Run makes of it (with a growing b.N).
func BenchmarkDeleteUser(b *testing.B) {
	for _, size := range []int{1000, 1_000_000} {
		var ts *testServer
		b.Run(strconv.Itoa(size/1000)+"k", func(b *testing.B) {
			if ts == nil {
				ts, _ = benchSeeded(b, size)
			}
			w := newBenchResponse()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				first := page(ts.store, 1, 1, ascending)[0].ID
				r := httptest.NewRequest("DELETE", userPath(first), nil)
				r.Header.Set("Authorization", "Bearer "+writeToken)
				if status := benchRequestOf(r, "").send(ts, w, nil); status != http.StatusNoContent {
					b.Fatalf("status %d, want 204", status)
				}
				name, email := "Seed User", "new"+strconv.Itoa(i)+"-"+strconv.FormatInt(first, 10)+"@bench.test"
				if _, err := ts.store.create(userFields{name: &name, email: &email}, noPrecondition); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSmallAnswers are the answers that never touch the store.
func BenchmarkSmallAnswers(b *testing.B) {
	ts, _ := benchSeeded(b, 0)
	absent := userPath(7) // no user: the store is empty
	for _, c := range []struct {
		name, method, target string
		token                string // "" for none
		want                 int
	}{
		{"options", "OPTIONS", absent, "", http.StatusNoContent},
		{"healthz", "GET", "/healthz", "", http.StatusOK},
		{"no-token", "GET", absent, "", http.StatusUnauthorized},
		{"not-found", "GET", absent, readToken, http.StatusNotFound},
		{"wrong-method", "POST", absent, writeToken, http.StatusMethodNotAllowed},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest(c.method, c.target, nil)
			if c.token != "" {
				r.Header.Set("Authorization", "Bearer "+c.token)
			}
			benchSendInTurn(b, ts, c.want, benchRequestOf(r, ""))
		})
	}
}

// BenchmarkMix is the load script's mixed workload: 9 reads of one user, then one PUT.
func BenchmarkMix(b *testing.B) {
	ts, ids := benchSeeded(b, 1000)
	gets := make([]*benchRequest, 64)
	puts := make([]*benchRequest, 64)
	for i := range gets {
		n := 1 + i*15
		get := httptest.NewRequest("GET", userPath(ids[n-1]), nil)
		get.Header.Set("Authorization", "Bearer "+writeToken)
		gets[i] = benchRequestOf(get, "")
		puts[i] = benchWrite("PUT", userPath(ids[n-1]), fmt.Sprintf(`{"name":"Mixed User %d","email":"seed%d@bench.test"}`, n, n))
	}
	w := newBenchResponse()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		request := gets[i%len(gets)]
		if i%10 == 9 {
			request = puts[(i/10)%len(puts)]
		}
		if status := request.send(ts, w, nil); status != http.StatusOK {
			b.Fatalf("status %d, want 200", status)
		}
	}
}

// BenchmarkGetUserParallel is many clients reading at once: reads must not wait for each other.
func BenchmarkGetUserParallel(b *testing.B) {
	ts, ids := benchSeeded(b, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		request := benchRead(userPath(ids[6]))
		w := newBenchResponse()
		for pb.Next() {
			if request.send(ts, w, nil) != http.StatusOK {
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
	benchMillion, benchMillionIDs = nil, nil // measure a store of our own, with nothing else alive beside it
	for i := 0; i < b.N; i++ {
		before := benchLiveHeap()
		ts, _ := benchSeeded(b, users) // the ids are dropped: the store alone is measured
		r := httptest.NewRequest("GET", "/api/users", nil)
		r.Header.Set("Authorization", "Bearer "+readToken)
		w := ts.serve(r) // fills the list's cache
		if w.Code != http.StatusOK || !strings.HasSuffix(w.Body.String(), `"total":1000000}`) {
			b.Fatalf("the list: status %d", w.Code)
		}
		w = nil
		after := benchLiveHeap()
		b.ReportMetric(float64(after-before)/users, "bytes/user")
		b.ReportMetric(float64(after)/(1<<20), "heap-MiB")
		runtime.KeepAlive(ts)
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
