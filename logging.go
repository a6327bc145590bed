package main

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The log: log/slog to stderr (SPEC §1), with two changes that keep its cost per request down.
// The access log writes one line per request, and with slog's handlers as they come, formatting
// and writing that line cost more than routing, authenticating and answering the request together
// (bench/load.sh, README "Performance"):
//
//	fastHandler  formats the common records itself, byte for byte as slog would
//	logWriter    gathers lines and writes them out together, so that a busy server makes one
//	             system call for many lines instead of one for each

// newLogger returns the service's logger, writing text or JSON lines to out. Several goroutines
// log at once, so out must be safe for concurrent use, as logWriter is.
func newLogger(format string, out io.Writer) *slog.Logger {
	if format == "json" {
		return slog.New(&fastHandler{Handler: slog.NewJSONHandler(out, nil), json: true, out: out})
	}
	return slog.New(&fastHandler{Handler: slog.NewTextHandler(out, nil), out: out})
}

// fastHandler is slog's TextHandler or JSONHandler with a fast path for records whose strings
// need no quoting or escaping and whose values are strings, integers or durations: every access
// log line for an ordinary path. It writes those itself, the same bytes slog would write
// (TestFastHandlerWritesWhatSlogWrites and FuzzFastHandler hold it to that), in a fraction of the
// time. Any other record goes to slog's handler, and so do the loggers that With and WithGroup
// derive, since the embedded handler answers those calls.
type fastHandler struct {
	slog.Handler
	json bool
	out  io.Writer
}

func (h *fastHandler) Handle(ctx context.Context, r slog.Record) error {
	buffer := linePool.Get().(*[]byte)
	line, ok := h.format((*buffer)[:0], r)
	if !ok {
		linePool.Put(buffer)
		return h.Handler.Handle(ctx, r)
	}
	_, err := h.out.Write(line)
	if cap(line) <= 16<<10 { // a rare long line is not kept, so the pool stays small
		*buffer = line
		linePool.Put(buffer)
	}
	return err
}

// linePool keeps line buffers for reuse, as slog's handlers do: a buffer handed to a Writer
// could not live on the stack, and would cost an allocation per line.
var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// format appends the record's line to b, or reports that it holds something only slog can write.
func (h *fastHandler) format(b []byte, r slog.Record) ([]byte, bool) {
	if year := r.Time.Year(); r.Time.IsZero() || year < 0 || year >= 10000 || !isPlain(r.Message) {
		return nil, false
	}
	line := lineBuilder{b: b, json: h.json}
	line.key(slog.TimeKey)
	if h.json { // JSONHandler keeps the nanoseconds, TextHandler only the milliseconds
		line.b = append(r.Time.AppendFormat(append(line.b, '"'), time.RFC3339Nano), '"')
	} else {
		line.b = appendMilliseconds(line.b, r.Time)
	}
	line.key(slog.LevelKey)
	line.string(r.Level.String())
	line.key(slog.MessageKey)
	line.string(r.Message)
	ok := true
	r.Attrs(func(a slog.Attr) bool {
		ok = isPlain(a.Key)
		if !ok {
			return false
		}
		line.key(a.Key)
		switch a.Value.Kind() {
		case slog.KindString:
			ok = isPlain(a.Value.String())
			line.string(a.Value.String())
		case slog.KindInt64:
			line.b = strconv.AppendInt(line.b, a.Value.Int64(), 10)
		case slog.KindDuration: // JSON has the nanoseconds, text the Duration's String
			if h.json {
				line.b = strconv.AppendInt(line.b, int64(a.Value.Duration()), 10)
			} else {
				line.b = append(line.b, a.Value.Duration().String()...)
			}
		default:
			ok = false
		}
		return ok
	})
	if h.json {
		line.b = append(line.b, '}')
	}
	return append(line.b, '\n'), ok
}

// appendMilliseconds appends t as TextHandler does: RFC 3339 with exactly three decimals. Like
// slog, it formats RFC3339Nano, which package time writes fastest of all layouts, from a time that
// surely has a fourth decimal, and drops that decimal.
func appendMilliseconds(b []byte, t time.Time) []byte {
	start := len(b) + len("2006-01-02T15:04:05.000")
	b = t.Truncate(time.Millisecond).Add(time.Millisecond/10).AppendFormat(b, time.RFC3339Nano)
	return append(b[:start], b[start+1:]...)
}

// lineBuilder appends the keys and plain strings of a line, as text (key=value) or as a JSON object.
type lineBuilder struct {
	b    []byte
	json bool
}

func (l *lineBuilder) key(key string) {
	switch {
	case l.json && len(l.b) == 0:
		l.b = append(l.b, '{')
	case len(l.b) > 0 && l.json:
		l.b = append(l.b, ',')
	case len(l.b) > 0:
		l.b = append(l.b, ' ')
	}
	l.string(key)
	if l.json {
		l.b = append(l.b, ':')
	} else {
		l.b = append(l.b, '=')
	}
}

// string appends a string that isPlain: in JSON between quotes, in text as it is.
func (l *lineBuilder) string(s string) {
	if l.json {
		l.b = append(append(append(l.b, '"'), s...), '"')
	} else {
		l.b = append(l.b, s...)
	}
}

// isPlain reports whether slog writes s as it is, in text (no quotes) and in JSON (no escapes):
// printable ASCII without space, quotes, backslash, "=" and the characters JSON escapes for HTML.
func isPlain(s string) bool {
	for _, c := range []byte(s) {
		if !plainBytes[c] {
			return false
		}
	}
	return s != ""
}

var plainBytes = func() (plain [256]bool) {
	for c := '!'; c <= '~'; c++ {
		plain[c] = !strings.ContainsRune(`"\=<>&`, c)
	}
	return plain
}()

// logWriter stands between the log and stderr: lines are gathered in memory and one goroutine
// writes them out. It writes as soon as it can, but yields first, so that request goroutines
// ready to run can add their lines: under load one write carries the lines of many requests
// (about 25 in bench/load.sh), while on a quiet server each line still appears at once. When
// lines come faster than stderr takes them, a request that finds 64 KiB waiting writes them out
// itself, so memory stays bounded and stderr slows requests down as it would without this writer.
// Close writes out what is left; a crash (kill -9) loses the lines of the last moment at most.
type logWriter struct {
	out io.Writer

	mu      sync.Mutex // guards pending and closed
	pending []byte
	closed  bool

	outMu   sync.Mutex // held while writing out, so that batches go out in order
	writing []byte     // the batch being written, kept to be reused

	wake    chan struct{} // holds a token while lines wait
	stop    chan struct{} // closed by Close
	stopped chan struct{} // closed when the goroutine has returned
}

const logWriterLimit = 64 << 10

func newLogWriter(out io.Writer) *logWriter {
	l := &logWriter{out: out, wake: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	go l.writeOut()
	return l
}

// Write takes one line (slog writes each record with a single Write) and never fails: like
// slog's Logger, the service does not stop for a log it cannot write.
func (l *logWriter) Write(line []byte) (int, error) {
	l.mu.Lock()
	l.pending = append(l.pending, line...)
	waiting, closed := len(l.pending), l.closed
	l.mu.Unlock()
	if closed || waiting >= logWriterLimit {
		l.flush()
	} else {
		select {
		case l.wake <- struct{}{}:
		default: // the writer is already due
		}
	}
	return len(line), nil
}

func (l *logWriter) writeOut() {
	defer close(l.stopped)
	for {
		select {
		case <-l.wake:
			runtime.Gosched() // let ready request goroutines add their lines to this batch
			l.flush()
		case <-l.stop:
			return
		}
	}
}

// flush writes out every line that is waiting.
func (l *logWriter) flush() {
	l.outMu.Lock()
	defer l.outMu.Unlock()
	l.mu.Lock()
	l.writing, l.pending = l.pending, l.writing[:0]
	l.mu.Unlock()
	if len(l.writing) > 0 {
		l.out.Write(l.writing)
	}
}

// Close writes out what is waiting and stops the goroutine. Lines logged afterwards, by a
// goroutine that outlives the server, are written at once.
func (l *logWriter) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.stopped
	l.flush()
	return nil
}
