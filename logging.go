package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	json    bool
	out     io.Writer
	seconds secondCache // the text of the latest line's second
}

func (h *fastHandler) Handle(ctx context.Context, r slog.Record) error {
	buffer := linePool.Get().(*[]byte)
	line, ok := h.format((*buffer)[:0], r)
	if !ok {
		linePool.Put(buffer)
		return h.Handler.Handle(ctx, r)
	}
	return h.write(buffer, line)
}

// write writes out a line built in a buffer of linePool, and gives the buffer back.
func (h *fastHandler) write(buffer *[]byte, line []byte) error {
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
	line := lineBuilder{b: b, json: h.json, seconds: &h.seconds}
	ok := line.begin(r.Time, r.Level, r.Message)
	if ok {
		r.Attrs(func(a slog.Attr) bool {
			ok = line.attr(a)
			return ok
		})
	}
	return line.end(), ok
}

// logAttrs logs a record of these attributes through handler, as Logger.LogAttrs would, but
// without the Logger's costs: no caller's program counter (runtime.Callers), which only a handler
// with AddSource prints, and, on fastHandler's fast path, no slog.Record, whose attributes past
// the fifth take an allocation. The access log writes its line this way.
func logAttrs(ctx context.Context, handler slog.Handler, now time.Time, level slog.Level, message string, attrs ...slog.Attr) {
	if !handler.Enabled(ctx, level) {
		return
	}
	if fast, ok := handler.(*fastHandler); ok {
		buffer := linePool.Get().(*[]byte)
		line := lineBuilder{b: (*buffer)[:0], json: fast.json, seconds: &fast.seconds}
		written := line.begin(now, level, message)
		for i := 0; written && i < len(attrs); i++ {
			written = line.attr(attrs[i])
		}
		if written {
			fast.write(buffer, line.end())
			return
		}
		linePool.Put(buffer)
	}
	record := slog.NewRecord(now, level, message, 0)
	record.AddAttrs(attrs...)
	handler.Handle(ctx, record) // like Logger.LogAttrs, which also ignores a failed write
}

// secondCache keeps the text of the second of a handler's latest line. Every line of one second
// starts with the same date, time and zone, and formatting those costs more than the rest of an
// access line: they are formatted once a second, and only the milliseconds on every line.
type secondCache struct {
	latest atomic.Pointer[formattedSecond]
}

// appendMilliseconds appends t as TextHandler does: RFC 3339 with exactly three decimals.
func (c *secondCache) appendMilliseconds(b []byte, t time.Time) []byte {
	second := c.latest.Load()
	if second == nil || second.unix != t.Unix() || second.location != t.Location() {
		second = &formattedSecond{unix: t.Unix(), location: t.Location(),
			dateTime: t.Format("2006-01-02T15:04:05"), zone: t.Format("Z07:00")}
		c.latest.Store(second)
	}
	millisecond := t.Nanosecond() / 1e6
	b = append(b, second.dateTime...)
	b = append(b, '.', byte('0'+millisecond/100), byte('0'+millisecond/10%10), byte('0'+millisecond%10))
	return append(b, second.zone...)
}

// formattedSecond is the text of one second in one time zone.
type formattedSecond struct {
	unix     int64
	location *time.Location
	dateTime string // as 2006-01-02T15:04:05
	zone     string // "Z" for UTC, else the offset, as -07:00
}

// lineBuilder appends the parts of a line, as text (key=value) or as a JSON object, and reports
// whether each was one it can write the way slog does.
type lineBuilder struct {
	b       []byte
	json    bool
	seconds *secondCache
}

// begin appends the time, level and message that start every line. Like attr, it reports false
// when it met something only slog can write: the line is then dropped, and slog writes the record.
func (l *lineBuilder) begin(t time.Time, level slog.Level, message string) bool {
	if year := t.Year(); t.IsZero() || year < 0 || year >= 10000 || !isPlain(message) {
		return false
	}
	l.key(slog.TimeKey)
	if l.json { // JSONHandler keeps the nanoseconds, TextHandler only the milliseconds
		l.b = append(t.AppendFormat(append(l.b, '"'), time.RFC3339Nano), '"')
	} else {
		l.b = l.seconds.appendMilliseconds(l.b, t)
	}
	l.key(slog.LevelKey)
	l.string(level.String())
	l.key(slog.MessageKey)
	l.string(message)
	return true
}

// attr appends an attribute whose key and value are plain, and whose value is a string, an
// integer or a duration.
func (l *lineBuilder) attr(a slog.Attr) bool {
	if !isPlain(a.Key) {
		return false
	}
	l.key(a.Key)
	switch a.Value.Kind() {
	case slog.KindString:
		l.string(a.Value.String())
		return isPlain(a.Value.String())
	case slog.KindInt64:
		l.b = strconv.AppendInt(l.b, a.Value.Int64(), 10)
	case slog.KindDuration: // JSON has the nanoseconds, text the Duration's String
		if l.json {
			l.b = strconv.AppendInt(l.b, int64(a.Value.Duration()), 10)
		} else {
			l.b = append(l.b, a.Value.Duration().String()...)
		}
	default:
		return false
	}
	return true
}

// end closes the line.
func (l *lineBuilder) end() []byte {
	if l.json {
		l.b = append(l.b, '}')
	}
	return append(l.b, '\n')
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
// writes them out logWriterDelay after the first line of a batch was logged (later only while
// stderr is still taking the previous batch). Under load one write(2) carries hundreds of lines
// instead of one, while on a quiet server a line still appears without a delay anyone would
// notice. When lines come faster than stderr takes them, a request that finds logWriterLimit bytes
// waiting writes them out itself, so memory stays bounded and stderr slows requests down as it
// would without this writer. Close writes out what is left; a crash (kill -9) loses the lines
// that were waiting: those of the last logWriterDelay, or more while stderr falls behind.
type logWriter struct {
	out io.Writer

	mu      sync.Mutex // guards pending and closed
	pending []byte
	closed  bool

	outMu   sync.Mutex // held while writing out, so that batches go out in order
	writing []byte     // the batch being written, kept to be reused

	wake    chan struct{} // holds a token when a batch has begun
	stop    chan struct{} // closed by Close
	stopped chan struct{} // closed when the goroutine has returned
}

const (
	logWriterDelay = 10 * time.Millisecond
	logWriterLimit = 64 << 10
)

func newLogWriter(out io.Writer) *logWriter {
	l := &logWriter{out: out, wake: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	go l.writeOut()
	return l
}

// Write takes one line (slog writes each record with a single Write) and never fails: like
// slog's Logger, the service does not stop for a log it cannot write.
func (l *logWriter) Write(line []byte) (int, error) {
	l.mu.Lock()
	startsBatch := len(l.pending) == 0 // only the first line of a batch wakes the writer
	l.pending = append(l.pending, line...)
	waiting, closed := len(l.pending), l.closed
	l.mu.Unlock()
	switch {
	case closed || waiting >= logWriterLimit:
		l.flush()
	case startsBatch:
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
			timer := time.NewTimer(logWriterDelay) // the batch gathers lines meanwhile
			select {
			case <-timer.C:
			case <-l.stop:
				timer.Stop()
			}
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
