package blackbox

// Hardening (README, "What it withstands"), proved on the built program over real connections:
//
//   - bytes net/http rejects get its own answer, unclean paths ServeMux's redirect, and whatever
//     reaches the handler the JSON error body; none changes the store;
//   - slow and stuck clients are cut off by the program's own time-outs without holding up anyone
//     else (these tests wait the time-outs out: 5 s for the header, 15 s for the request);
//   - bodies past 1 MiB are refused, whatever their size, without the server reading them;
//   - many clients writing at once keep ids and e-mails unique, and with -data a restart finds what
//     they were last shown;
//   - SIGTERM lets requests in flight finish, refuses new ones and exits 0;
//   - tokens never reach the log or an answer.
//
// Requests that need no socket of their own (hostile bodies, queries and tokens, panics, failing
// disks) are tested through the handler, in the root package.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Bytes that net/http rejects before any handler runs get its own answer, and paths not in clean
// form ServeMux's own redirect, whatever status the Go version gives it (docs/api.md, "Responses",
// exempts both from the JSON body); whatever reaches the handler gets the JSON error body, and a
// 405 its Allow. None changes the store.
func TestHostileBytesOnTheWireGetA4xx(t *testing.T) {
	auth := "Authorization: Bearer " + writeToken + "\r\n"
	post := "POST /api/users HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json\r\n"
	eve := `{"name":"Eve","email":"eve@example.com"}`
	cases := []struct {
		name    string
		request string // {id} stands for the id of Ann, whom the service holds
		want    string // "400"; "3xx", or "3xx or 4xx", where the Go version decides
		json    bool   // the answer comes from the handler, so it is the JSON error body
	}{
		{"a bad escape in the path", "GET /api/users/%ZZ HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", "400", false},
		{"a NUL in the path", "GET /api/users/\x00 HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", "400", false},
		{"a space too many in the request line", "GET  /api/users HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", "400", false},
		{"an unknown HTTP version", "GET /api/users HTTP/9.9\r\nHost: x\r\n" + auth + "\r\n", "505", false},
		{"no Host", "GET /api/users HTTP/1.1\r\n" + auth + "\r\n", "400", false},
		{"two Hosts", "GET /api/users HTTP/1.1\r\nHost: x\r\nHost: y\r\n" + auth + "\r\n", "400", false},
		{"a NUL in a header", "GET /api/users HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n" + auth + "\r\n", "400", false},
		{"a header without a colon", "GET /api/users HTTP/1.1\r\nHost: x\r\nnonsense\r\n" + auth + "\r\n", "400", false},
		{"a space before the colon", "GET /api/users HTTP/1.1\r\nHost: x\r\nAuthorization : Bearer " + writeToken + "\r\n\r\n", "400", false},
		{"70 KB of headers", "GET /api/users HTTP/1.1\r\nHost: x\r\nX-A: " + strings.Repeat("a", 70<<10) + "\r\n" + auth + "\r\n", "431", false},
		{"GET with the asterisk-form target", "GET * HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", "400", false},
		{"DELETE with the asterisk-form target", "DELETE * HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", "400", false},
		{"PRI * over HTTP 1.1", "PRI * HTTP/1.1\r\nHost: x\r\n\r\n", "400", false},
		{"CONNECT with the authority-form target", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n" + auth + "\r\n", "3xx or 4xx", false},
		// Paths not in clean form: under /api/ the token and its permission come first.
		{"an absolute URI with an empty path", "GET http://x HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", "3xx", false},
		{"a double slash after api without a token", "GET /api//users HTTP/1.1\r\nHost: x\r\n\r\n", "401", true},
		{"DELETE with a double slash after api and the read token", "DELETE /api//users/{id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + readToken + "\r\n\r\n", "403", true},
		{"DELETE with a double slash after api and the write token", "DELETE /api//users/{id} HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", "3xx", false},
		{"DELETE with a double slash before api without a token", "DELETE //api/users/{id} HTTP/1.1\r\nHost: x\r\n\r\n", "3xx", false},
		// Methods no route takes, known or not: 405 with Allow, as ServeMux routes them
		// (docs/api.md, "Routes"; RFC 9110 §9.1 says SHOULD 501 for an unknown one).
		{"a lower-case method", "get /api/users HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", "405", true},
		{"TRACE", "TRACE /api/users HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", "405", true},
		{"an unknown method on a user", "FOO /api/users/{id} HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", "405", true},
		{"Content-Length and Transfer-Encoding", post + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "400", false},
		{"two different Content-Lengths", post + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n{}", "400", false},
		{"a negative Content-Length", post + "Content-Length: -1\r\n\r\n", "400", false},
		{"an unknown transfer coding", post + "Transfer-Encoding: gzip\r\n\r\n", "501", false},
		{"a malformed chunk size", post + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", "400", true},
		{"a chunk longer than it says", post + "Transfer-Encoding: chunked\r\n\r\n2\r\n" + eve + "\r\n0\r\n\r\n", "400", true},
		{"a chunked valid user followed by garbage", post + "Transfer-Encoding: chunked\r\n\r\n" +
			strconv.FormatInt(int64(len(eve)+1), 16) + "\r\n" + eve + "x\r\n0\r\n\r\n", "400", true},
		{"a declared length of 1 MiB + 1", post + "Content-Length: 1048577\r\n\r\n" + eve, "413", true},
		{"a declared length of 2^63-1", post + "Content-Length: 9223372036854775807\r\n\r\n" + eve, "413", true},
		{"a declared length beyond int64", post + "Content-Length: 99999999999999999999\r\n\r\n", "400", false},
		{"Expect 100-continue with 10 MiB", post + "Content-Length: 10485760\r\nExpect: 100-continue\r\n\r\n", "413", true},
		{"an unknown Expect", post + "Content-Length: 2\r\nExpect: 200-ok\r\n\r\n{}", "417", false},
		{"a body the length does not cover", post + "Content-Length: 2\r\n\r\n" + eve, "400", true},
	}
	// One program, holding Ann, Bob and Cy, takes the cases in turn: after each, the collection is
	// as it was and the next id is still free, so every case meets the same three users.
	p := start(t, testTokens)
	send := newClient(t, p.url)
	ann, _, cy := send.seed(t)
	before, nextID := send.users(t), cy.ID+1
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			answer, body := sendRaw(t, p.addr, strings.ReplaceAll(c.request, "{id}", strconv.FormatInt(ann.ID, 10)))
			status := strconv.Itoa(answer.StatusCode)
			if !strings.Contains(c.want, status) && !strings.Contains(c.want, status[:1]+"xx") {
				t.Fatalf("status %d, want %s; body %.300s", answer.StatusCode, c.want, body)
			}
			if c.json {
				wantErrorBody(t, answer.Header, body)
			}
			if answer.StatusCode == http.StatusMethodNotAllowed && answer.Header.Get("Allow") == "" {
				t.Error("a 405 without Allow")
			}
			nextID = send.probeUnchanged(t, before, nextID)
		})
	}
}

// Bodies past 1 MiB are refused as soon as that is known, whatever their size and however they
// are sent, without the server reading them to the end: it reads at most a bounded prefix and
// answers. (What the server allocates meanwhile is measured by the benchmarks.)
func TestBigBodiesAreRefusedWithoutBeingRead(t *testing.T) {
	p := start(t, testTokens)
	send := newClient(t, p.url)
	_, _, cy := send.seed(t)
	before := send.users(t)
	for _, c := range []struct {
		name     string
		size     int64
		declared bool // Content-Length, or else chunked with no length
	}{
		{"1 MiB + 1, declared", maxBodyBytes + 1, true},
		{"1 MiB + 1, chunked", maxBodyBytes + 1, false},
		{"10 MiB, declared", 10 << 20, true},
		{"10 MiB, chunked", 10 << 20, false},
		{"100 MiB, declared", 100 << 20, true},
		{"100 MiB, chunked", 100 << 20, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, sent := streamBody(t, p.addr, c.size, c.declared)
			if status != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413", status)
			}
			if c.size > 32<<20 && sent > 32<<20 {
				t.Fatalf("the client could send %d MiB before the 413: the server kept reading", sent>>20)
			}
		})
	}
	send.probeUnchanged(t, before, cy.ID+1)
}

// streamBody sends a POST with a body of size bytes, generated as it goes, and reads the
// answer while it sends. It returns the status and how many bytes of body the client got to send.
func streamBody(t *testing.T, addr string, size int64, declared bool) (status int, sent int64) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	header := "POST /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + writeToken + "\r\nContent-Type: application/json\r\n"
	if declared {
		header += "Content-Length: " + strconv.FormatInt(size, 10) + "\r\n\r\n"
	} else {
		header += "Transfer-Encoding: chunked\r\n\r\n"
	}
	var written atomic.Int64
	answered := make(chan struct{})
	sending := make(chan struct{})
	go func() {
		defer close(sending)
		if _, err := io.WriteString(conn, header); err != nil {
			return
		}
		chunk := bytes.Repeat([]byte("a"), 64<<10)
		for left := size; left > 0; {
			select {
			case <-answered:
				return
			default:
			}
			n := min(left, int64(len(chunk)))
			var err error
			if declared {
				_, err = conn.Write(chunk[:n])
			} else {
				_, err = fmt.Fprintf(conn, "%x\r\n%s\r\n", n, chunk[:n])
			}
			if err != nil {
				return // the server has closed the connection after its answer
			}
			written.Add(n)
			left -= n
		}
		if !declared {
			io.WriteString(conn, "0\r\n\r\n")
		}
	}()
	response, err := http.ReadResponse(bufio.NewReader(conn), nil)
	close(answered)
	if err != nil {
		t.Fatalf("no answer after %d bytes: %v", written.Load(), err)
	}
	sent = written.Load()
	body, _ := io.ReadAll(response.Body)
	if response.StatusCode >= 400 {
		wantErrorBody(t, response.Header, body)
	}
	conn.Close()
	<-sending
	return response.StatusCode, sent
}

// A flood of clients that send their headers a byte at a time is cut off at the read-header
// time-out, and other clients are served while the flood still holds its connections (README,
// "What it withstands").
func TestSlowHeaderFloodIsCutOffWhileOthersAreServed(t *testing.T) {
	t.Parallel() // it waits, mostly
	const (
		flood             = 200
		readHeaderTimeout = 5 * time.Second // the program's own
	)
	p := start(t, testTokens)
	send := newClient(t, p.url)
	ann, _, _ := send.seed(t)

	flooded := time.Now() // before the first dial: the server times each connection from its accept
	slow := make([]net.Conn, flood)
	for i := range slow {
		conn, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		defer conn.Close()
		slow[i] = conn
	}
	// Each slow client sends the start of a request, then an endless header value, one byte every
	// 50 ms: a well-formed header that never ends. A byte is sent again until it is written, never
	// skipped, so the server sees no malformed line, which it would answer 400 and close at once.
	header := "GET /api/users HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + writeToken + "\r\nX-Slow: "
	stopFeeding := make(chan struct{})
	var feeding sync.WaitGroup
	for _, conn := range slow {
		feeding.Add(1)
		go func(conn net.Conn) {
			defer feeding.Done()
			drip := time.NewTicker(50 * time.Millisecond)
			defer drip.Stop()
			for sent := 0; ; sent++ {
				next := byte('x')
				if sent < len(header) {
					next = header[sent]
				}
				if _, err := conn.Write([]byte{next}); err != nil {
					return // the server has hung up
				}
				select {
				case <-stopFeeding:
					return
				case <-drip.C:
				}
			}
		}(conn)
	}
	defer func() { close(stopFeeding); feeding.Wait() }()

	// Each slow connection must be closed by the server, and not before the time-out.
	closedAfter := make([]time.Duration, flood)
	var closed atomic.Int32 // slow connections the server has closed so far
	var waiting sync.WaitGroup
	for i, conn := range slow {
		waiting.Add(1)
		go func(i int, conn net.Conn) {
			defer waiting.Done()
			conn.SetReadDeadline(flooded.Add(readHeaderTimeout + patience))
			_, err := io.Copy(io.Discard, conn) // returns when the server closes the connection
			closedAfter[i] = time.Since(flooded)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				closedAfter[i] = -1
			}
			closed.Add(1)
		}(i, conn)
	}

	// Meanwhile, other clients are served, each on a new connection, every 20 ms, until the server
	// cuts the flood or for the first four of the five seconds the flood holds its connections.
	// An answer counts if no slow connection had been closed yet when it came.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: patience}
	served := 0
	pace := time.NewTicker(20 * time.Millisecond)
	defer pace.Stop()
	for {
		request, _ := http.NewRequest("GET", p.url+userPath(ann.ID), nil)
		request.Header.Set("Authorization", "Bearer "+readToken)
		response, err := client.Do(request)
		if err != nil {
			t.Fatalf("a client during the flood: %v", err)
		}
		io.Copy(io.Discard, response.Body)
		response.Body.Close()
		if response.StatusCode != http.StatusOK {
			t.Fatalf("a client during the flood: status %d", response.StatusCode)
		}
		if closed.Load() > 0 {
			break
		}
		if served++; time.Since(flooded) > readHeaderTimeout-time.Second {
			break
		}
		<-pace.C
	}
	if served == 0 {
		t.Errorf("no client was served while the flood held its %d connections", flood)
	}

	waiting.Wait()
	var lastCut time.Duration
	for i, after := range closedAfter {
		switch {
		case after < 0:
			t.Fatalf("slow connection %d was still open %v after the read-header time-out", i, patience)
		case after < readHeaderTimeout-100*time.Millisecond:
			t.Fatalf("slow connection %d was closed after %v, before the read-header time-out", i, after)
		}
		lastCut = max(lastCut, after)
	}
	tookAtMost(t, "cutting off the whole flood", lastCut, readHeaderTimeout+4*time.Second)
}

// A client that sends its body a byte at a time is cut off at the read time-out: it gets a 400
// with the JSON error body, and nothing changes.
func TestSlowBodyIsCutOffAtTheReadTimeout(t *testing.T) {
	t.Parallel()                         // it waits, mostly
	const readTimeout = 15 * time.Second // the program's own, for the header and the body together
	p := start(t, testTokens)
	send := newClient(t, p.url)
	_, _, cy := send.seed(t)
	before := send.users(t)

	began := time.Now() // before the dial: the server times the request from its accept
	conn, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	eve := `{"name":"Eve","email":"eve@example.com"}`
	fmt.Fprintf(conn, "POST /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", writeToken, len(eve))
	stopFeeding := make(chan struct{})
	defer close(stopFeeding)
	go func() {
		drip := time.NewTicker(time.Second / 2) // a byte every 0.5 s: 20 s for the whole body
		defer drip.Stop()
		for i := 0; i < len(eve); i++ {
			select {
			case <-stopFeeding:
				return
			case <-drip.C:
			}
			if _, err := conn.Write([]byte{eve[i]}); err != nil {
				return
			}
		}
	}()

	conn.SetReadDeadline(began.Add(readTimeout + patience))
	response, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a slow body: %v", err)
	}
	elapsed := time.Since(began)
	body, _ := io.ReadAll(response.Body)
	if response.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want 400 for a body that did not arrive in time; body %s", response.StatusCode, body)
	}
	wantErrorBody(t, response.Header, body)
	if elapsed < readTimeout-100*time.Millisecond {
		t.Errorf("the slow body was cut off after %v, before the read time-out, %v", elapsed, readTimeout)
	}
	tookAtMost(t, "cutting off the slow body", elapsed, readTimeout+3*time.Second)
	send.probeUnchanged(t, before, cy.ID+1)
}

// A client that asks for big answers and never reads them holds only its own connection: while
// the server is stuck writing to it, every other request, writes included, is served. (The list
// is written without holding the store's lock: README, "What it withstands".)
func TestClientThatNeverReadsBlocksNoOne(t *testing.T) {
	t.Parallel() // it waits, mostly
	// 2,000 users with long names, whose list is about 340 KB.
	p := start(t, testTokens)
	send := newClient(t, p.url)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < 2000; i += 8 {
				body := fmt.Sprintf(`{"name":"User %d %s","email":"user%d@example.com"}`, i, strings.Repeat("n", 90), i)
				if status, answer := send("POST", "/api/users", body, headers(asWriter, asJSON)); status != http.StatusCreated {
					t.Errorf("creating user %d: status %d, body %s", i, status, answer)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	stuck, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	const pipelined = 100 // about 34 MB of answers, far more than the kernel's buffers hold
	var requests strings.Builder
	for i := 0; i < pipelined; i++ {
		fmt.Fprintf(&requests, "GET /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nX-Request-Id: stuck-%d\r\n\r\n", readToken, i)
	}
	if _, err := io.WriteString(stuck, requests.String()); err != nil {
		t.Fatal(err)
	}
	answeredStuck := func() int {
		n := 0
		for _, record := range p.log.records("request") {
			if id, _ := record["request_id"].(string); strings.HasPrefix(id, "stuck-") {
				n++
			}
		}
		return n
	}
	// Nothing shows a write that blocks, but the log shows the answers written: once their count
	// has stopped growing for half a second, the server is stuck writing to that connection.
	last, still := -1, 0
	eventually(t, "the answers to the client that does not read to stop", func() bool {
		n := answeredStuck()
		if n > 0 && n == last {
			still++
		} else {
			still = 0
		}
		last = n
		return still >= 50
	})

	client := &http.Client{Timeout: patience}
	writerJSON := headers(asWriter, asJSON)
	var slowest time.Duration
	for _, c := range []struct {
		method, target, body string
		header               http.Header
		want                 int
	}{
		{"POST", "/api/users", `{"name":"Eve","email":"eve@example.com"}`, writerJSON, 201},
		{"PUT", userPath(1), `{"name":"Ann","email":"ann@example.com"}`, writerJSON, 200},
		{"PATCH", userPath(2), `{"name":"Bob"}`, writerJSON, 200},
		{"DELETE", userPath(3), "", asWriter, 204},
		{"GET", "/api/users", "", asReader, 200},
		{"GET", "/api/users?page=3&per_page=5", "", asReader, 200},
		{"GET", userPath(1), "", asReader, 200},
	} {
		began := time.Now()
		request, _ := http.NewRequest(c.method, p.url+c.target, strings.NewReader(c.body))
		request.Header = headers(c.header)
		response, err := client.Do(request)
		if err != nil {
			t.Fatalf("%s %s while a client is stuck: %v", c.method, c.target, err)
		}
		io.Copy(io.Discard, response.Body)
		response.Body.Close()
		if response.StatusCode != c.want {
			t.Fatalf("%s %s while a client is stuck: status %d, want %d", c.method, c.target, response.StatusCode, c.want)
		}
		slowest = max(slowest, time.Since(began))
	}
	if answered := answeredStuck(); answered >= pipelined {
		t.Fatalf("all %d answers to the stuck client were written: the test did not get it stuck", answered)
	}
	tookAtMost(t, "the slowest request beside the stuck client", slowest, 2*time.Second)

	// The stuck client now reads, and gets every answer it asked for: the server had not given up
	// on it (its write time-out, 20 s), so the others were served while it was stuck, not after.
	stuck.SetReadDeadline(time.Now().Add(patience))
	answers := bufio.NewReader(stuck)
	for i := 0; i < pipelined; i++ {
		response, err := http.ReadResponse(answers, nil)
		if err == nil {
			_, err = io.Copy(io.Discard, response.Body)
			response.Body.Close()
		}
		if err != nil {
			t.Fatalf("the stuck client got %d of its %d answers, then %v: the server had cut it off, and the others may have waited for that", i, pipelined, err)
		}
	}
}

// userList is a list's envelope, paged or not.
type userList struct {
	Data       []user `json:"data"`
	Total      int    `json:"total"`
	Page       int    `json:"page"`
	PerPage    int    `json:"per_page"`
	TotalPages int    `json:"total_pages"`
}

// checkList checks what every list must show, however many writers are at work: total
// equal to the users shown (or, paged, consistent with them), ids ascending, and no e-mail twice.
func checkList(t *testing.T, status int, body []byte, perPage int) (userList, bool) {
	t.Helper()
	var list userList
	if status != http.StatusOK {
		t.Errorf("list: status %d, body %s", status, body)
		return list, false
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Errorf("list: %v in %s", err, body)
		return list, false
	}
	ok := true
	if perPage == 0 && list.Total != len(list.Data) {
		t.Errorf("list: total %d, but %d users", list.Total, len(list.Data))
		ok = false
	}
	if perPage > 0 && (len(list.Data) > perPage || list.TotalPages != (list.Total+perPage-1)/perPage || len(list.Data) > list.Total) {
		t.Errorf("page: %d users, per_page %d, total %d, total_pages %d", len(list.Data), perPage, list.Total, list.TotalPages)
		ok = false
	}
	emails := map[string]bool{}
	for i, u := range list.Data {
		if i > 0 && u.ID <= list.Data[i-1].ID {
			t.Errorf("list: id %d after id %d", u.ID, list.Data[i-1].ID)
			ok = false
		}
		if key := strings.ToLower(u.Email); emails[key] {
			t.Errorf("list: the e-mail %s twice", u.Email)
			ok = false
		} else {
			emails[key] = true
		}
	}
	return list, ok
}

// loadLedger is what the clients were told: every id created, and every id deleted.
type loadLedger struct {
	mu      sync.Mutex
	created map[int64]bool
	deleted map[int64]int
	maxID   atomic.Int64
}

// runLoad has workers create, replace, patch, delete, read and list users at once, on a
// small set of e-mails so that they collide, and checks every answer as it comes. It returns the
// ledger.
func runLoad(t *testing.T, send client, workers, opsEach int) *loadLedger {
	seed := time.Now().UnixNano()
	t.Logf("seed %d: worker w chooses with seed %d+w", seed, seed)
	ledger := &loadLedger{created: map[int64]bool{}, deleted: map[int64]int{}}
	writerJSON := headers(asWriter, asJSON)
	emailFor := func(r *rand.Rand) string {
		n := r.Intn(40)
		if r.Intn(2) == 0 {
			return fmt.Sprintf("User%d@Example.com", n) // the same address as user%d@example.com
		}
		return fmt.Sprintf("user%d@example.com", n)
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			r := rand.New(rand.NewSource(seed))
			for i := 0; i < opsEach && !t.Failed(); i++ {
				id := r.Int63n(ledger.maxID.Load()+3) + 1 // a user that may exist, or not yet
				target := userPath(id)
				userJSON := fmt.Sprintf(`{"name":"Worker %d op %d","email":%q}`, seed, i, emailFor(r))
				switch op := r.Intn(20); {
				case op < 6:
					status, body := send("POST", "/api/users", userJSON, writerJSON)
					if status == http.StatusConflict {
						continue
					}
					var created user
					if status != http.StatusCreated || json.Unmarshal(body, &created) != nil {
						t.Errorf("create: status %d, body %s", status, body)
						continue
					}
					ledger.mu.Lock()
					if ledger.created[created.ID] {
						t.Errorf("id %d was given twice", created.ID)
					}
					ledger.created[created.ID] = true
					ledger.mu.Unlock()
					for old := ledger.maxID.Load(); created.ID > old && !ledger.maxID.CompareAndSwap(old, created.ID); old = ledger.maxID.Load() {
					}
				case op < 9:
					if status, body := send("PUT", target, userJSON, writerJSON); status != 200 && status != 404 && status != 409 {
						t.Errorf("PUT %s: status %d, body %s", target, status, body)
					}
				case op < 12:
					patch := fmt.Sprintf(`{"email":%q}`, emailFor(r))
					if r.Intn(2) == 0 {
						patch = fmt.Sprintf(`{"name":"Patched %d"}`, i)
					}
					if status, body := send("PATCH", target, patch, writerJSON); status != 200 && status != 404 && status != 409 {
						t.Errorf("PATCH %s: status %d, body %s", target, status, body)
					}
				case op < 14:
					status, body := send("DELETE", target, "", asWriter)
					switch status {
					case http.StatusNoContent:
						ledger.mu.Lock()
						ledger.deleted[id]++
						ledger.mu.Unlock()
					case http.StatusNotFound:
					default:
						t.Errorf("DELETE %s: status %d, body %s", target, status, body)
					}
				case op < 17:
					status, body := send("GET", "/api/users", "", asReader)
					checkList(t, status, body, 0)
				case op < 18:
					perPage := r.Intn(10) + 1
					status, body := send("GET", fmt.Sprintf("/api/users?page=%d&per_page=%d", r.Intn(4)+1, perPage), "", asReader)
					checkList(t, status, body, perPage)
				default:
					if status, body := send("GET", target, "", asReader); status != 200 && status != 404 {
						t.Errorf("GET %s: status %d, body %s", target, status, body)
					}
				}
			}
		}(seed + int64(w))
	}
	wg.Wait()
	return ledger
}

// checkAfterLoad checks the store once the clients are done: exactly the users created
// and not deleted are there, each deleted once, each e-mail once, and the next id follows the
// last given. It returns the list as the clients were last shown it.
func checkAfterLoad(t *testing.T, send client, ledger *loadLedger) string {
	t.Helper()
	status, body := send("GET", "/api/users", "", asReader)
	list, ok := checkList(t, status, body, 0)
	if !ok {
		t.FailNow()
	}
	present := map[int64]bool{}
	for _, u := range list.Data {
		present[u.ID] = true
		if !ledger.created[u.ID] {
			t.Errorf("user %d is listed, but no create was answered with it", u.ID)
		}
		if ledger.deleted[u.ID] > 0 {
			t.Errorf("user %d is listed, but a DELETE of it was answered 204", u.ID)
		}
		status, body := send("GET", "/api/users?email="+strings.ToUpper(u.Email), "", asReader)
		if found, _ := checkList(t, status, body, 0); len(found.Data) != 1 || found.Data[0].ID != u.ID {
			t.Errorf("?email=%s found %s, want user %d", u.Email, body, u.ID)
		}
	}
	for id := range ledger.created {
		if !present[id] && ledger.deleted[id] == 0 {
			t.Errorf("user %d was created and never deleted, but is gone", id)
		}
	}
	for id, times := range ledger.deleted {
		if times > 1 {
			t.Errorf("user %d was deleted %d times", id, times)
		}
	}
	if len(ledger.created) < 20 {
		t.Errorf("only %d users were created: the load was too light to prove anything", len(ledger.created))
	}
	status, body = send("POST", "/api/users", `{"name":"Last","email":"last@example.com"}`, headers(asWriter, asJSON))
	var last user
	if status != http.StatusCreated || json.Unmarshal(body, &last) != nil || last.ID != ledger.maxID.Load()+1 {
		t.Errorf("the create after the load: status %d, body %s; want id %d", status, body, ledger.maxID.Load()+1)
	}
	_, body = send("GET", "/api/users", "", asReader)
	return string(body)
}

// Many clients creating, replacing, patching, deleting and listing at once, with -data, leave a
// consistent store: ids unique and never reused, e-mails unique, total equal to the users present.
// The writes take turns, each on the disk before it is answered, and what the clients were last
// shown is what a restart finds.
func TestConcurrentClientsKeepTheDataFileConsistent(t *testing.T) {
	t.Parallel() // it waits, mostly on the disk
	file := filepath.Join(t.TempDir(), "users.json")
	p := start(t, testTokens, "-data", file)
	send := newClient(t, p.url)
	ledger := runLoad(t, send, 8, 60)
	final := checkAfterLoad(t, send, ledger)
	if status := p.stop(); status != 0 {
		t.Fatalf("the program stopped with exit status %d:\n%s", status, p.log)
	}

	restarted := start(t, testTokens, "-data", file)
	if _, body := newClient(t, restarted.url)("GET", "/api/users", "", asReader); string(body) != final {
		t.Fatalf("after a restart the store is\n%s\nbut the clients were last shown\n%s", body, final)
	}
}

// SIGTERM while many clients are busy, each request in a -delay of 100 ms: every answer given is
// a success, never a 5xx, every client is refused once the server has stopped accepting, and the
// program exits 0.
func TestShutdownUnderLoadExitsCleanly(t *testing.T) {
	p := start(t, testTokens, "-delay", "100ms")
	const workers = 16
	client := &http.Client{Timeout: patience}
	var answered, refusedAfterStop atomic.Int64
	var stopped atomic.Bool
	busy := make(chan struct{}) // closed once the clients have had as many answers as they are
	var busyOnce sync.Once
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				method, body := "GET", ""
				if i%2 == 0 {
					method, body = "POST", fmt.Sprintf(`{"name":"W%d","email":"w%d.%d@example.com"}`, w, w, i)
				}
				request, _ := http.NewRequest(method, p.url+"/api/users", strings.NewReader(body))
				request.Header.Set("Authorization", "Bearer "+writeToken)
				request.Header.Set("Content-Type", "application/json")
				response, err := client.Do(request)
				if err != nil {
					if !stopped.Load() {
						t.Errorf("before SIGTERM: %v", err)
					}
					refusedAfterStop.Add(1)
					return // the server has stopped accepting
				}
				answer, _ := io.ReadAll(response.Body)
				response.Body.Close()
				switch response.StatusCode {
				case http.StatusCreated, http.StatusOK:
				default:
					t.Errorf("%s: status %d during shutdown, body %s", method, response.StatusCode, answer)
					return
				}
				if answered.Add(1) == workers {
					busyOnce.Do(func() { close(busy) })
				}
			}
		}(w)
	}
	select {
	case <-busy:
	case <-time.After(patience):
		t.Errorf("only %d requests were answered in %v: the load did not happen", answered.Load(), patience)
	}
	stopped.Store(true)
	if status := p.stop(); status != 0 {
		t.Fatalf("the program stopped with exit status %d, want 0:\n%s", status, p.log)
	}
	wg.Wait()
	if refusedAfterStop.Load() != workers {
		t.Fatalf("%d of %d clients were refused after the stop", refusedAfterStop.Load(), workers)
	}
}

// Nothing the program logs, from its start to its stop, holds a token, even net/http's own error
// log, and no answer does, wherever the client put it (RFC 6750 §2.3 lets it use the query); a
// generated token is shown only in the start-up notice (README, "Configuration"). Both of slog's
// handlers are checked: the JSON log, with USERS_TOKENS, and the text log, with tokens the
// program makes.
func TestTokensNeverReachTheLogOrAnAnswer(t *testing.T) {
	for _, tt := range []struct{ name, tokens string }{
		{"USERS_TOKENS and a JSON log", testTokens},
		{"generated tokens and a text log", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := start(t, tt.tokens)
			notice := p.log.String() // the notice of generated tokens, if any, and the start-up record
			write, read := writeToken, readToken
			if tt.tokens == "" {
				for _, line := range strings.Split(notice, "\n") {
					if token, ok := strings.CutPrefix(line, "  write token:"); ok {
						write = strings.TrimSpace(token)
					} else if token, ok := strings.CutPrefix(line, "  read token:"); ok {
						read = strings.TrimSpace(token)
					}
				}
				if write == writeToken || read == readToken {
					t.Fatalf("no generated tokens in the notice:\n%s", notice)
				}
			}
			unknown := "unknown-secret-token-0123456789"
			asWrite := http.Header{"Authorization": {"Bearer " + write}}
			asRead := http.Header{"Authorization": {"Bearer " + read}}
			writeJSON := headers(asWrite, asJSON)
			send := newClient(t, p.url)
			status, answer := send("POST", "/api/users", `{"name":"Ann","email":"ann@example.com"}`, writeJSON)
			var ann user
			if status != http.StatusCreated || json.Unmarshal(answer, &ann) != nil {
				t.Fatalf("creating Ann: status %d, body %s", status, answer)
			}
			annPath := userPath(ann.ID)
			eve := `{"name":"Eve","email":"eve@example.com"}`
			for _, c := range []struct {
				name, method, target, body string
				header                     http.Header
				want                       int
			}{
				{"the write token", "GET", "/api/users", "", asWrite, 200},
				{"the read token", "GET", annPath, "", asRead, 200},
				{"the read token on a write", "POST", "/api/users", eve, headers(asRead, asJSON), 403},
				{"an unknown token", "GET", "/api/users", "", http.Header{"Authorization": {"Bearer " + unknown}}, 401},
				{"the token twice", "GET", "/api/users", "", headers(asWrite, asWrite), 401},
				{"the token after another scheme", "GET", "/api/users", "", http.Header{"Authorization": {"Token " + write}}, 401},
				{"the token in the query alone", "GET", "/api/users?access_token=" + write, "", nil, 401},
				{"the token in the query of the list", "GET", "/api/users?access_token=" + write, "", asWrite, 400},
				{"the token in a query the list cannot parse", "GET", "/api/users?access_token=" + write + ";", "", asWrite, 400},
				{"the token in the query of a user", "GET", annPath + "?access_token=" + read, "", asWrite, 200},
				{"the token in the query of a create", "POST", "/api/users?access_token=" + write, eve, writeJSON, 201},
				{"the token as a query value to sort", "GET", "/api/users?sort=" + write, "", asWrite, 400},
				{"the token as a page", "GET", "/api/users?page=" + write, "", asWrite, 400},
				{"the token in If-Match", "DELETE", annPath, "", headers(asWrite, http.Header{"If-Match": {`"` + write + `"`}}), 412},
				{"the token on a 404", "GET", "/api/nothing", "", asWrite, 404},
				{"the token on a 405", "DELETE", "/api/users", "", asWrite, 405},
				{"the token on OPTIONS", "OPTIONS", annPath, "", asWrite, 204},
				{"the token on /healthz", "GET", "/healthz", "", asWrite, 200},
			} {
				status, answer := send(c.method, c.target, c.body, c.header)
				if status != c.want {
					t.Errorf("%s: status %d, want %d", c.name, status, c.want)
				}
				for _, secret := range []string{write, read, unknown} {
					if strings.Contains(string(answer), secret) {
						t.Errorf("%s: the answer holds a token: %s", c.name, answer)
					}
				}
			}
			// A request net/http refuses itself, which its error log reports.
			sendRaw(t, p.addr, "GET /api/users?access_token="+write+" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+write+"\r\nX-A: a\x00\r\n\r\n")
			if status := p.stop(); status != 0 {
				t.Fatalf("exit status %d:\n%s", status, p.log)
			}
			for _, secret := range []string{write, read, unknown} {
				if before, after := strings.Count(notice, secret), strings.Count(p.log.String(), secret); after != before {
					t.Fatalf("a token is written %d times from the start to the stop, %d of them in the notice:\n%s", after, before, p.log)
				}
			}
		})
	}
}
