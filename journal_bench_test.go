package main

import (
	"fmt"
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

// BenchmarkJournalDurableCreate measures creates per second through the whole handler stack with
// -data (a journal in a temporary folder, every create fsync'd before its 201) at 1, 16 and 64
// concurrent writers, and, for comparison, at 64 writers in memory only:
//
//	go test -run '^$' -bench Journal -benchtime 2s -count 5
//
// Writes are made one at a time, each with its own fsync (README, "Durability with -data"), so
// more writers wait their turn on the writer's lock and go no faster than one: the disk's fsync
// sets the pace, as BenchmarkJournalFsyncOfOneRecord shows. Sharing one fsync among the writers
// that wait (group commit) is what would let more writers go faster.
func BenchmarkJournalDurableCreate(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run("writers="+strconv.Itoa(writers), func(b *testing.B) {
			store, _ := openJournal(b, newJournalPath(b), 1<<20)
			benchmarkJournalCreates(b, serverOn(b, store, testConfig(b)), writers)
		})
	}
	b.Run("memory=64", func(b *testing.B) {
		benchmarkJournalCreates(b, newTestServer(b), 64)
	})
}

// BenchmarkJournalFsyncOfOneRecord measures what the disk charges for one durable append: a write
// of one record's line and an fsync. It bounds the durable writes: one create costs at least this.
func BenchmarkJournalFsyncOfOneRecord(b *testing.B) {
	file, err := os.OpenFile(filepath.Join(b.TempDir(), "users.jsonl"), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer file.Close()
	line := []byte(`{"op":"put","id":1,"name":"Ann","email":"ann@example.com"}` + "\n")
	b.ResetTimer()
	for range b.N {
		if _, err := file.Write(line); err != nil {
			b.Fatal(err)
		}
		if err := file.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchmarkJournalCreates sends b.N creates from writers goroutines and reports creates/s.
func benchmarkJournalCreates(b *testing.B, s *testServer, writers int) {
	var next, failures atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				body := fmt.Sprintf(`{"name":"User %d","email":"user%d@example.com"}`, i, i)
				r := httptest.NewRequest("POST", "/api/users", strings.NewReader(body))
				r.Header.Set("Authorization", "Bearer "+writeToken)
				r.Header.Set("Content-Type", "application/json")
				if w := s.serve(r); w.Code != http.StatusCreated {
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
