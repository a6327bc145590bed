package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// slogLine is the line slog's own handler writes for r: what fastHandler must match.
func slogLine(t testing.TB, format string, r slog.Record) string {
	t.Helper()
	var out bytes.Buffer
	handler := slog.Handler(slog.NewTextHandler(&out, nil))
	if format == "json" {
		handler = slog.NewJSONHandler(&out, nil)
	}
	if err := handler.Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// fastLine is the line newLogger's handler writes for r, and whether its fast path wrote it.
func fastLine(t testing.TB, format string, r slog.Record) (line string, fast bool) {
	t.Helper()
	var out bytes.Buffer
	handler := newLogger(format, &out).Handler().(*fastHandler)
	_, fast = handler.format(nil, r)
	if err := handler.Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	// logAttrs, which the access log takes, must write the same line.
	var attrs []slog.Attr
	r.Attrs(func(a slog.Attr) bool { attrs = append(attrs, a); return true })
	var viaAttrs bytes.Buffer
	logAttrs(context.Background(), newLogger(format, &viaAttrs).Handler(), r.Time, r.Level, r.Message, attrs...)
	if viaAttrs.String() != out.String() {
		t.Errorf("%s: logAttrs wrote\n%q\nHandle wrote\n%q", format, viaAttrs.String(), out.String())
	}
	return out.String(), fast
}

func accessRecord(when time.Time, path string) slog.Record {
	r := slog.NewRecord(when, slog.LevelInfo, "request", 0)
	r.AddAttrs(slog.String("method", "GET"), slog.String("path", path), slog.Int("status", 200),
		slog.Int64("bytes", 59), slog.Duration("duration", 9751*time.Nanosecond), slog.String("request_id", "4da80b4d-12"))
	return r
}

func TestFastHandlerWritesWhatSlogWrites(t *testing.T) {
	noon := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	paris := time.FixedZone("CET", 3600)
	withAttrs := func(r slog.Record, attrs ...slog.Attr) slog.Record { r.AddAttrs(attrs...); return r }
	tests := []struct {
		name   string
		record slog.Record
		fast   bool // whether fastHandler should write it itself
	}{
		{"an access line", accessRecord(noon.Add(761234567), "/api/users/43"), true},
		{"a time before 1970", accessRecord(time.Date(1969, 12, 31, 23, 59, 59, 987654321, time.UTC), "/"), true},
		{"a time on the whole second", accessRecord(noon, "/api/users"), true},
		{"a time just before a millisecond", accessRecord(noon.Add(999999), "/"), true},
		{"a time outside UTC", accessRecord(time.Date(2026, 1, 2, 3, 4, 5, 6000000, paris), "/healthz"), true},
		{"a path with punctuation", accessRecord(noon, "/assets/app.css;v=%2F~'!$*(),+@:"), false}, // "=" is quoted
		{"a path with a percent", accessRecord(noon, "/api/users/%41+b"), true},
		{"a path with other punctuation", accessRecord(noon, "/a;b/~'!$*(),+@:?#[]{}|^`"), true},
		{"a path with a space", accessRecord(noon, "/api/users/a b"), false},
		{"a path with a quote", accessRecord(noon, `/api/"users"`), false},
		{"a path with a backslash", accessRecord(noon, `/api\users`), false},
		{"a path with HTML", accessRecord(noon, "/<script>&"), false},
		{"a path with a control character", accessRecord(noon, "/api/\x7f\x01"), false},
		{"a path outside ASCII", accessRecord(noon, "/api/usérs/ünïcode"), false},
		{"a path that is not UTF-8", accessRecord(noon, "/api/\xff"), false},
		{"an empty path", accessRecord(noon, ""), false},
		{"a message with a space", slog.NewRecord(noon, slog.LevelInfo, "stopping: finishing the requests in flight", 0), false},
		{"a plain message alone", slog.NewRecord(noon, slog.LevelInfo, "stopped", 0), true},
		{"a warning", slog.NewRecord(noon, slog.LevelWarn, "odd", 0), true},
		{"a level between names", slog.NewRecord(noon, slog.LevelInfo+2, "odd", 0), true},
		{"negative and large integers", withAttrs(slog.NewRecord(noon, slog.LevelError, "n", 0),
			slog.Int64("a", -9223372036854775808), slog.Int("b", 0), slog.Int64("c", 1<<62)), true},
		{"durations", withAttrs(slog.NewRecord(noon, slog.LevelInfo, "d", 0),
			slog.Duration("zero", 0), slog.Duration("ns", 1), slog.Duration("long", 90*time.Minute+time.Millisecond),
			slog.Duration("negative", -time.Second)), true},
		{"a boolean", withAttrs(slog.NewRecord(noon, slog.LevelInfo, "b", 0), slog.Bool("ok", true)), false},
		{"a group", withAttrs(slog.NewRecord(noon, slog.LevelInfo, "g", 0), slog.Group("g", "a", 1)), false},
		{"a key with a space", withAttrs(slog.NewRecord(noon, slog.LevelInfo, "k", 0), slog.Int("a b", 1)), false},
		{"an empty key", withAttrs(slog.NewRecord(noon, slog.LevelInfo, "k", 0), slog.Int("", 1)), false},
		{"an empty attribute", withAttrs(slog.NewRecord(noon, slog.LevelInfo, "k", 0), slog.Attr{}), false},
		{"no time", slog.NewRecord(time.Time{}, slog.LevelInfo, "request", 0), false},
		{"a year past 9999", accessRecord(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), "/"), false},
	}
	for _, format := range []string{"text", "json"} {
		for _, test := range tests {
			t.Run(format+"/"+test.name, func(t *testing.T) {
				got, fast := fastLine(t, format, test.record)
				if want := slogLine(t, format, test.record); got != want {
					t.Errorf("fastHandler wrote\n%s\nslog writes\n%s", got, want)
				}
				if fast != test.fast {
					t.Errorf("fast path taken: %v, want %v", fast, test.fast)
				}
			})
		}
	}
}

// A logger derived with With or WithGroup is slog's own: its attributes are never lost.
func TestDerivedLoggersKeepTheirAttributes(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		var out bytes.Buffer
		newLogger(format, &out).With("component", "journal").WithGroup("g").Info("hello", "n", 1)
		if line := out.String(); !strings.Contains(line, "component") || !strings.Contains(line, "journal") ||
			!strings.Contains(line, "g.n") && !strings.Contains(line, `"g":{"n":1}`) {
			t.Errorf("%s: %q lost the logger's attributes", format, line)
		}
	}
}

// A handler formats the date, time and zone of a second once (secondCache). Lines one after the
// other, in the same second, the next one, an earlier one, and the same second in other zones,
// must each still be what slog writes.
func TestFastHandlerFormatsTheSecondOfEveryLine(t *testing.T) {
	noon := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	paris := time.FixedZone("CET", 3600)
	times := []time.Time{noon.Add(761234567), noon.Add(999999999), noon.Add(time.Second), noon,
		noon.Add(761234567).In(paris), noon.Add(time.Second).In(paris), noon.Add(time.Second).Local()}
	for _, format := range []string{"text", "json"} {
		var out bytes.Buffer
		handler := newLogger(format, &out).Handler()
		for _, when := range times {
			out.Reset()
			r := accessRecord(when, "/api/users/43")
			if err := handler.Handle(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			if want := slogLine(t, format, r); out.String() != want {
				t.Errorf("%s, %v: fastHandler wrote\n%q\nslog writes\n%q", format, when, out.String(), want)
			}
		}
	}
}

func FuzzFastHandler(f *testing.F) {
	f.Add("GET", "/api/users/1", "request", int64(200), int64(9751), "abc-1")
	f.Add("PATCH", "/api/users/a b", "request", int64(-1), int64(-5), "")
	f.Add("GET", "/ü\"\\<>&=\x00", "stop ping", int64(1<<40), int64(3600e9), "x=y")
	// Times in several zones, since the line's date and zone are kept from one line to the next.
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("", -(3*3600 + 30*60)), time.FixedZone("odd", 30)}
	if newYork, err := time.LoadLocation("America/New_York"); err == nil { // needs the zone database
		zones = append(zones, newYork)
	}
	f.Fuzz(func(t *testing.T, method, path, message string, status, nanoseconds int64, id string) {
		when := time.Unix(0, nanoseconds*1000003).In(zones[uint64(nanoseconds)%uint64(len(zones))])
		r := slog.NewRecord(when, slog.LevelInfo, message, 0)
		r.AddAttrs(slog.String("method", method), slog.String("path", path), slog.Int64("status", status),
			slog.Duration("duration", time.Duration(nanoseconds)), slog.String("request_id", id))
		for _, format := range []string{"text", "json"} {
			got, _ := fastLine(t, format, r)
			if want := slogLine(t, format, r); got != want {
				t.Fatalf("%s: fastHandler wrote\n%q\nslog writes\n%q", format, got, want)
			}
		}
	})
}

// countingWriter stands for stderr, and counts the writes that reach it.
type countingWriter struct {
	mu     sync.Mutex
	out    bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	return c.out.Write(p)
}

func (c *countingWriter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

func TestLogWriterWritesEveryLineInOrderByClose(t *testing.T) {
	out := &countingWriter{}
	w := newLogWriter(out)
	var want strings.Builder
	for i := range 1000 {
		line := fmt.Sprintf("line %d\n", i)
		w.Write([]byte(line))
		want.WriteString(line)
	}
	w.Close()
	if got := out.String(); got != want.String() {
		t.Fatalf("after Close, stderr holds %d bytes, want the %d bytes written, in order", len(got), want.Len())
	}
	w.Write([]byte("after close\n")) // a goroutine that outlives the server
	if got := out.String(); !strings.HasSuffix(got, "after close\n") {
		t.Fatalf("a line written after Close is not out at once")
	}
}

func TestLogWriterWritesALineSoonWithoutClose(t *testing.T) {
	out := &countingWriter{}
	w := newLogWriter(out)
	defer w.Close()
	w.Write([]byte("hello\n"))
	deadline := time.Now().Add(5 * time.Second)
	for out.String() != "hello\n" {
		if time.Now().After(deadline) {
			t.Fatal("a single line is not written out within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// Lines that come together go out together: the point of logWriter. Each goroutine's lines stay
// whole and in their order, and more than 64 KiB never waits.
func TestLogWriterGathersConcurrentLines(t *testing.T) {
	out := &countingWriter{}
	w := newLogWriter(out)
	const goroutines, lines = 8, 2000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				w.Write([]byte(fmt.Sprintf("g%d %05d %s\n", g, i, strings.Repeat("x", 50))))
			}
		}()
	}
	wg.Wait()
	w.Close()
	next := make([]int, goroutines)
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var g, i int
		if _, err := fmt.Sscanf(line, "g%d %d", &g, &i); err != nil || i != next[g] || len(line) != 59 {
			t.Fatalf("line %q is broken or out of order (want g%d %05d)", line, g, next[g])
		}
		next[g]++
	}
	for g, n := range next {
		if n != lines {
			t.Fatalf("goroutine %d: %d lines out, want %d", g, n, lines)
		}
	}
	if out.writes >= goroutines*lines {
		t.Errorf("%d lines took %d writes: none were gathered", goroutines*lines, out.writes)
	}
}

// blockingWriter stands for a stderr that nobody reads: every Write waits until release is closed.
type blockingWriter struct {
	entered chan struct{} // receives once for each Write that has begun
	release chan struct{}
	countingWriter
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	select {
	case b.entered <- struct{}{}:
	default:
	}
	<-b.release
	return b.countingWriter.Write(p)
}

// When stderr falls behind, lines wait in memory only up to 64 KiB: then the request that logs
// writes them out itself, and so waits for stderr, as it would without logWriter.
func TestLogWriterHoldsAtMost64KiBWhenStderrFallsBehind(t *testing.T) {
	out := &blockingWriter{entered: make(chan struct{}, 100), release: make(chan struct{})}
	w := newLogWriter(out)
	line := []byte(strings.Repeat("x", 99) + "\n")
	w.Write(line)
	<-out.entered // the goroutine is now stuck writing the first line
	logged := make(chan int)
	go func() {
		n := 0
		for ; n < 2*logWriterLimit/len(line); n++ { // twice what may wait
			w.Write(line)
		}
		logged <- n
	}()
	waiting := func() int {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.pending)
	}
	deadline := time.Now().Add(5 * time.Second)
	for waiting() < logWriterLimit { // the lines pile up to the limit...
		select {
		case n := <-logged:
			t.Fatalf("%d lines were logged with stderr stuck: nothing made the logging wait", n)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the lines waiting never reached 64 KiB")
		}
		time.Sleep(time.Millisecond)
	}
	select { // ...and there the logging waits for stderr
	case n := <-logged:
		t.Fatalf("%d lines were logged with stderr stuck: nothing made the logging wait", n)
	case <-time.After(200 * time.Millisecond):
	}
	if waiting := waiting(); waiting > logWriterLimit+len(line) {
		t.Errorf("%d bytes wait in memory, more than the 64 KiB limit", waiting)
	}
	close(out.release)
	n := <-logged
	w.Close()
	if got, want := len(out.String()), (n+1)*len(line); got != want {
		t.Errorf("stderr has %d bytes, want %d: every line, once stderr takes them", got, want)
	}
}

// BenchmarkAccessLogLine measures one access log line, formatted and thrown away: as the service
// writes it (logAttrs, newLogger's handler), and as a service on slog alone would (LogAttrs).
func BenchmarkAccessLogLine(b *testing.B) {
	line := func(log func(attrs ...slog.Attr)) {
		log(slog.String("method", "GET"), slog.String("path", "/api/users/42"), slog.Int("status", 200),
			slog.Int64("bytes", 59), slog.Duration("duration", 9751*time.Nanosecond), slog.String("request_id", "4da80b4d-12"))
	}
	for _, format := range []string{"text", "json"} {
		service := newLogger(format, io.Discard).Handler()
		plain := slog.New(slog.NewTextHandler(io.Discard, nil))
		if format == "json" {
			plain = slog.New(slog.NewJSONHandler(io.Discard, nil))
		}
		b.Run(format+"/service", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				line(func(attrs ...slog.Attr) {
					logAttrs(context.Background(), service, time.Now(), slog.LevelInfo, "request", attrs...)
				})
			}
		})
		b.Run(format+"/slog", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				line(func(attrs ...slog.Attr) { plain.LogAttrs(context.Background(), slog.LevelInfo, "request", attrs...) })
			}
		})
	}
}
