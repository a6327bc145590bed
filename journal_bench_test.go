package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkDurableCreate measures creates per second through the whole handler stack with -data
// (a journal in a temporary folder, every create fsync'd before its 201) at 1, 16 and 64
// concurrent writers, and, for comparison, at 64 writers in memory only:
//
//	go test -run '^$' -bench 'DurableCreate|Fsync' -benchtime 2s -count 5
//
// Group commit is what lets 64 writers go faster than one: writers that arrive while a batch is
// being synced share the next fsync.
func BenchmarkDurableCreate(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run("writers="+strconv.Itoa(writers), func(b *testing.B) {
			s := newTestServer(b)
			store, err := openUserStore(newJournal(filepath.Join(b.TempDir(), "users.jsonl"), newLogger("text", io.Discard), 1<<20))
			if err != nil {
				b.Fatal(err)
			}
			defer store.close()
			s.store = store
			s.build()
			benchmarkCreates(b, s, writers)
		})
	}
	b.Run("memory=64", func(b *testing.B) {
		benchmarkCreates(b, newTestServer(b), 64)
	})
}

// BenchmarkFsyncOfOneRecord measures what the disk charges for one durable append: a write of one
// record's line and an fsync. It bounds a single writer: one create costs at least this.
func BenchmarkFsyncOfOneRecord(b *testing.B) {
	file, err := os.OpenFile(filepath.Join(b.TempDir(), "users.jsonl"), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer file.Close()
	line := []byte(annRecord)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := file.Write(line); err != nil {
			b.Fatal(err)
		}
		if err := file.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchmarkCreates sends b.N creates from writers goroutines and reports creates/s.
func benchmarkCreates(b *testing.B, s *testServer, writers int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failures atomic.Int64
	b.ResetTimer()
	start := time.Now()
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				body := fmt.Sprintf(`{"name":"User %d","email":"user%d@example.com"}`, i, i)
				r := httptest.NewRequest("POST", "/api/users", strings.NewReader(body))
				r.Header.Set("Authorization", "Bearer "+writeToken)
				r.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				s.handler.ServeHTTP(w, r)
				if w.Code != http.StatusCreated {
					failures.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if n := failures.Load(); n > 0 {
		b.Fatalf("%d of %d creates were not answered 201", n, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "creates/s")
}
