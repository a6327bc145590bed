package blackbox

// HTTPS with -tls-cert and -tls-key (README, "HTTPS"): the program started with a certificate made
// for the test, and clients that trust that certificate alone, over HTTP/2 and HTTP/1.1.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// exchange sends r with client and returns the answer and its whole body.
func exchange(t testing.TB, client *http.Client, r *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := client.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", r.Method, r.URL, err)
	}
	return resp, string(body)
}

// The two protocols net/http offers over TLS, as Response.Proto names them and ALPN (RFC 7301)
// negotiates them.
const (
	overHTTP2 = "HTTP/2.0"
	overHTTP1 = "HTTP/1.1"
)

var alpnName = map[string]string{overHTTP2: "h2", overHTTP1: "http/1.1"}

// bothProtocols are the two, with names for subtests (which take no "/").
var bothProtocols = []struct{ name, protocol string }{{"HTTP2", overHTTP2}, {"HTTP1.1", overHTTP1}}

// httpsClient trusts roots alone and offers only the protocol given, so a test knows which one
// it gets. It keeps connections open: HTTP/2 sends every request on one.
func httpsClient(t testing.TB, roots *x509.CertPool, protocol string) *http.Client {
	transport := &http.Transport{
		TLSClientConfig:       &tls.Config{RootCAs: roots, NextProtos: []string{alpnName[protocol]}},
		ForceAttemptHTTP2:     protocol == overHTTP2, // a Transport with its own TLS settings needs it for HTTP/2
		ExpectContinueTimeout: patience,              // wait for 100 Continue before sending a body that asks for it
		MaxIdleConnsPerHost:   64,
	}
	t.Cleanup(transport.CloseIdleConnections)
	return &http.Client{Transport: transport, Timeout: patience}
}

// notAnswered is the status of a request that got none: its stream was reset, or the client
// refused to send it.
const notAnswered = 0

// A server started with -tls-cert answers HTTPS over HTTP/2 and HTTP/1.1, as the client offers them
// by ALPN, with TLS 1.2 or newer, to a client that trusts only its certificate.
func TestHTTPSAnswersOverHTTP2AndHTTP1ToAClientThatTrustsOnlyItsCertificate(t *testing.T) {
	cert := selfSigned(t)
	program := start(t, testTokens, cert.flags()...)
	if !strings.HasPrefix(program.url, "https://") {
		t.Fatalf("the program serves %s, want an https:// URL", program.url)
	}
	for _, p := range bothProtocols {
		t.Run(p.name, func(t *testing.T) {
			r, _ := http.NewRequest("GET", program.url+"/api/users", nil)
			r.Header.Set("Authorization", "Bearer "+readToken)
			resp, body := exchange(t, httpsClient(t, cert.roots, p.protocol), r)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET /api/users: %d %s, want 200", resp.StatusCode, body)
			}
			if resp.Proto != p.protocol || resp.TLS.NegotiatedProtocol != alpnName[p.protocol] {
				t.Errorf("the answer came over %s (ALPN %q), want %s", resp.Proto, resp.TLS.NegotiatedProtocol, p.protocol)
			}
			if resp.TLS.Version < tls.VersionTLS12 {
				t.Errorf("TLS version %x, want 1.2 or newer", resp.TLS.Version)
			}
		})
	}
}

// Over HTTP/2 as over HTTP/1.1 (hardening_test.go), a bad request gets its 4xx with the JSON error
// body, and a 405 its Allow, and leaves the store as it was; a body past 1 MiB is refused without
// being read to the end, however long the client goes on sending it.
func TestOverHTTPSBadRequestsGetTheirJSON4xx(t *testing.T) {
	const eve = `{"name":"Eve","email":"eve@example.com"}`
	cases := []struct {
		name, method, target, token, contentType, body string // {id} in target stands for Ann's id
		size                                           int64  // a body of this many spaces instead
		sizeKnown                                      bool   // and Content-Length says it
		want                                           int
	}{
		{name: "no token", method: "DELETE", target: "/api/users/{id}", want: 401},
		{name: "a double slash after api without a token", method: "GET", target: "/api//users", want: 401},
		{name: "the read token on a write", method: "DELETE", target: "/api/users/{id}", token: readToken, want: 403},
		{name: "an id not in canonical form", method: "DELETE", target: "/api/users/0{id}", token: writeToken, want: 404},
		{name: "a method no route takes", method: "FOO", target: "/api/users/{id}", token: writeToken, want: 405},
		{name: "a body that is not JSON", method: "POST", target: "/api/users", token: writeToken, contentType: "text/plain", body: eve, want: 415},
		{name: "JSON cut short", method: "POST", target: "/api/users", token: writeToken, contentType: "application/json", body: eve[:20], want: 400},
		{name: "an id that is not the path's", method: "PUT", target: "/api/users/{id}", token: writeToken, contentType: "application/json",
			body: `{"id":99,"name":"Eve","email":"eve@example.com"}`, want: 400},
		{name: "1 MiB + 1, its length declared", method: "POST", target: "/api/users", token: writeToken, contentType: "application/json",
			size: maxBodyBytes + 1, sizeKnown: true, want: 413},
		{name: "100 MiB, its length unknown", method: "POST", target: "/api/users", token: writeToken, contentType: "application/json",
			size: 100 << 20, want: 413},
	}
	cert := selfSigned(t)
	program := start(t, testTokens, cert.flags()...)
	ann, _, cy := via(t, httpsClient(t, cert.roots, overHTTP2), program.url).seed(t)
	nextID := cy.ID + 1
	for _, p := range bothProtocols {
		t.Run(p.name, func(t *testing.T) {
			client := httpsClient(t, cert.roots, p.protocol)
			send := via(t, client, program.url)
			before := send.users(t)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					var body io.Reader = strings.NewReader(c.body)
					spaces := &countingReader{left: c.size}
					if c.size > 0 {
						body = struct{ io.Reader }{spaces} // no Len method: the client cannot tell its length
					}
					r, _ := http.NewRequest(c.method, program.url+strings.ReplaceAll(c.target, "{id}", strconv.FormatInt(ann.ID, 10)), body)
					if c.sizeKnown {
						r.ContentLength = c.size
					}
					if c.token != "" {
						r.Header.Set("Authorization", "Bearer "+c.token)
					}
					if c.contentType != "" {
						r.Header.Set("Content-Type", c.contentType)
					}
					resp, answer := exchange(t, client, r)
					if resp.StatusCode != c.want {
						t.Fatalf("status %d, want %d; body %.300s", resp.StatusCode, c.want, answer)
					}
					wantErrorBody(t, resp.Header, []byte(answer))
					if c.want == http.StatusMethodNotAllowed && resp.Header.Get("Allow") == "" {
						t.Error("a 405 without Allow")
					}
					if sent := spaces.read.Load(); sent > 32<<20 {
						t.Errorf("the client could send %d MiB before the 413: the server kept reading", sent>>20)
					}
					nextID = send.probeUnchanged(t, before, nextID)
				})
			}
		})
	}
}

// countingReader gives left bytes of spaces, and counts what it gave: the client's transport reads
// it on a goroutine of its own, which may go on after the answer has come.
type countingReader struct {
	left int64
	read atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n := min(int64(len(p)), c.left-c.read.Load())
	if n == 0 {
		return 0, io.EOF
	}
	for i := range p[:n] {
		p[i] = ' '
	}
	c.read.Add(n)
	return int(n), nil
}

// RFC 8996 deprecates TLS 1.0 and 1.1: the server offers 1.2 and 1.3 only, by its own setting, not
// by Go's default, which GODEBUG=tls10server=1 turns back to TLS 1.0.
func TestHTTPSRefusesTLSOlderThan1_2(t *testing.T) {
	t.Setenv("GODEBUG", "tls10server=1")
	cert := selfSigned(t)
	program := start(t, testTokens, cert.flags()...)
	addr := program.addr
	for _, tt := range []struct {
		name          string
		oldest, newer uint16
		refused       bool
	}{
		{"TLS 1.0 and 1.1", tls.VersionTLS10, tls.VersionTLS11, true},
		{"TLS 1.2 alone", tls.VersionTLS12, tls.VersionTLS12, false},
		{"TLS 1.3 alone", tls.VersionTLS13, tls.VersionTLS13, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: cert.roots, MinVersion: tt.oldest, MaxVersion: tt.newer})
			if err == nil {
				conn.Close()
			}
			if refused := err != nil; refused != tt.refused {
				t.Errorf("a client offering %s: handshake error %v, want refused %v", tt.name, err, tt.refused)
			}
		})
	}
}

// A plain HTTP request to the HTTPS port gets net/http's own answer, 400, which says why (docs/api.md,
// "Responses", exempts net/http's own answers from the JSON error body).
func TestPlainHTTPToTheHTTPSPortGetsNetHTTPs400(t *testing.T) {
	cert := selfSigned(t)
	program := start(t, testTokens, cert.flags()...)
	r, _ := http.NewRequest("GET", "http://"+program.addr+"/api/users", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	resp, body := exchange(t, &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}, r)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "HTTPS") {
		t.Errorf("plain HTTP to the HTTPS port: %d %q, want net/http's 400 naming HTTPS", resp.StatusCode, body)
	}
}

// The token notice's curl line works as pasted: https, and for a self-signed certificate (no CA
// vouches for it) --cacert with the certificate's file by its absolute path; never -k. A
// certificate a CA issued needs no --cacert: the client trusts the CA.
func TestOverHTTPSTheTokenNoticesCurlLineWorksAsPasted(t *testing.T) {
	curlLine := regexp.MustCompile(`curl (--cacert '([^']+)' )?-H '(Authorization: [^']+)' (\S+)`)
	for _, tt := range []struct {
		name       string
		cert       func(testing.TB) certificate
		selfSigned bool
	}{
		{"a self-signed certificate", selfSigned, true},
		{"a certificate a CA issued", caIssued, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cert := tt.cert(t)
			program := start(t, "", cert.flags()...)
			notice := program.log.String()
			curl := curlLine.FindStringSubmatch(notice)
			if curl == nil {
				t.Fatalf("no curl line in the notice:\n%s", notice)
			}
			caFile, header, url := curl[2], curl[3], curl[4]
			if strings.Contains(notice, " -k") || strings.Contains(notice, "--insecure") {
				t.Errorf("the curl line turns off the certificate check: %s", curl[0])
			}
			if !strings.HasPrefix(url, "https://") || !strings.HasSuffix(url, "/api/users") {
				t.Errorf("the curl line's URL %q is not the list over https", url)
			}
			roots := cert.roots // what the client trusts already: the test's CA
			if tt.selfSigned {
				if caFile != cert.certFile || !filepath.IsAbs(caFile) {
					t.Fatalf("the curl line has --cacert %q, want the certificate's file by its absolute path, %s", caFile, cert.certFile)
				}
				roots = x509.NewCertPool() // the file named, as curl reads it, and nothing else
				pemBytes, err := os.ReadFile(caFile)
				if err != nil || !roots.AppendCertsFromPEM(pemBytes) {
					t.Fatalf("--cacert %s: %v", caFile, err)
				}
			} else if caFile != "" {
				t.Errorf("a certificate a CA issued gets --cacert %s, which would trust that certificate alone", caFile)
			}

			r, _ := http.NewRequest("GET", url, nil)
			name, value, _ := strings.Cut(header, ": ")
			r.Header.Set(name, value)
			if resp, body := exchange(t, httpsClient(t, roots, overHTTP2), r); resp.StatusCode != http.StatusOK {
				t.Errorf("the curl line gets %d %s, want 200", resp.StatusCode, body)
			}
		})
	}
}

// A stop (SIGINT or SIGTERM) under TLS, over HTTP/2 and HTTP/1.1: the request in flight (an upload
// still arriving, its handler reading the body) finishes with its answer, new requests are
// refused (over HTTP/2, the stop sends GOAWAY), and the program exits 0.
func TestHTTPSStopFinishesTheRequestsInFlight(t *testing.T) {
	for _, p := range bothProtocols {
		protocol := p.protocol
		t.Run(p.name, func(t *testing.T) {
			cert := selfSigned(t)
			program := start(t, testTokens, cert.flags()...)
			client := httpsClient(t, cert.roots, protocol)

			// With Expect: 100-continue the client sends the body only once the handler asks for it:
			// 100 Continue is the sign that the request is in flight.
			const body = `{"name":"Eve","email":"eve@example.com"}`
			upload, feed := io.Pipe()
			defer feed.Close()
			reading := make(chan struct{})
			trace := &httptrace.ClientTrace{Got100Continue: func() { close(reading) }}
			r, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", program.url+"/api/users", upload)
			r.ContentLength = int64(len(body))
			r.Header.Set("Authorization", "Bearer "+writeToken)
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Expect", "100-continue")
			type answer struct {
				status int
				err    error
			}
			answered := make(chan answer, 1)
			go func() {
				resp, err := client.Do(r)
				if err != nil {
					answered <- answer{err: err}
					return
				}
				resp.Body.Close()
				answered <- answer{status: resp.StatusCode}
			}()
			select {
			case <-reading:
			case a := <-answered:
				t.Fatalf("the upload ended before its handler read it: %d, %v", a.status, a.err)
			case <-time.After(patience):
				t.Fatalf("no 100 Continue within %v", patience)
			}

			program.signal(syscall.SIGTERM)
			refused := func() bool {
				resp, err := client.Get(program.url + "/healthz")
				if err == nil {
					resp.Body.Close()
				}
				return err != nil
			}
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for deadline := time.Now().Add(patience); !refused(); <-tick.C {
				if time.Now().After(deadline) {
					t.Fatalf("new requests were still answered %v after the stop", patience)
				}
			}
			select {
			case a := <-answered:
				t.Fatalf("the request in flight ended before its body was sent: %d, %v", a.status, a.err)
			case <-program.exited:
				t.Fatalf("the program ended (exit status %d) with a request in flight", program.status)
			default:
			}

			io.WriteString(feed, body)
			feed.Close()
			if a := <-answered; a.err != nil || a.status != http.StatusCreated {
				t.Errorf("the request in flight got %d, %v; want 201", a.status, a.err)
			}
			if status := program.wait(); status != 0 {
				t.Errorf("exit status %d, want 0:\n%s", status, program.log)
			}
		})
	}
}

// The files are read once, at start (README, "HTTPS"): a renewed certificate needs a restart, and
// files that change or go meanwhile do not stop the running server.
func TestHTTPSReadsItsFilesOnceAtStart(t *testing.T) {
	cert := selfSigned(t)
	program := start(t, testTokens, cert.flags()...)
	for _, file := range []string{cert.certFile, cert.keyFile} {
		if err := os.Remove(file); err != nil {
			t.Fatal(err)
		}
	}
	r, _ := http.NewRequest("GET", program.url+"/healthz", nil)
	if resp, body := exchange(t, httpsClient(t, cert.roots, overHTTP2), r); resp.StatusCode != http.StatusOK {
		t.Errorf("a new connection after the files went: %d %s, want 200", resp.StatusCode, body)
	}
}

// /openapi.json is web/openapi.json as it is, byte for byte, and a tool that imports it from an
// HTTPS server on any port reaches that server: the document's server URL is relative, and
// OpenAPI 3.1 resolves it against the URL the document came from.
func TestOpenAPIDocumentLeadsToTheHTTPSServerThatServedIt(t *testing.T) {
	file, err := os.ReadFile(filepath.Join("..", "web", "openapi.json")) // the document the program embeds
	if err != nil {
		t.Fatal(err)
	}
	cert := selfSigned(t)
	program := start(t, testTokens, cert.flags()...)
	client := httpsClient(t, cert.roots, overHTTP2)
	r, _ := http.NewRequest("GET", program.url+"/openapi.json", nil)
	resp, body := exchange(t, client, r)
	if resp.StatusCode != http.StatusOK || body != string(file) {
		t.Fatalf("GET /openapi.json: %d, and the body is web/openapi.json as it is: %v", resp.StatusCode, body == string(file))
	}
	var document struct{ Servers []struct{ URL string } }
	if err := json.Unmarshal(file, &document); err != nil || len(document.Servers) == 0 {
		t.Fatalf("no server URL in web/openapi.json: %v", err)
	}
	server, err := r.URL.Parse(document.Servers[0].URL)
	if err != nil {
		t.Fatalf("the server URL %q, resolved against %s: %v", document.Servers[0].URL, r.URL, err)
	}
	list, _ := http.NewRequest("GET", strings.TrimSuffix(server.String(), "/")+"/api/users", nil)
	list.Header.Set("Authorization", "Bearer "+readToken)
	if list.URL.Host != r.URL.Host || list.URL.Scheme != "https" {
		t.Fatalf("a tool that imports the document sends GET /api/users to %s, not to the server that served it", list.URL)
	}
	if resp, body := exchange(t, client, list); resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %d %s, want 200", list.URL, resp.StatusCode, body)
	}
}

// The TLS handshake is bounded by the shortest time-out, the read-header one: a client that
// connects and sends nothing is cut off, as it is over plain HTTP/1.1.
func TestTLSHandshakeIsCutOffAtTheReadHeaderTimeout(t *testing.T) {
	t.Parallel()                       // it waits, mostly
	const readHeader = 5 * time.Second // the program's own
	cert := selfSigned(t)
	program := start(t, testTokens, cert.flags()...)
	began := time.Now() // before the server accepts, and so before its time-out begins
	conn, err := net.Dial("tcp", program.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(began.Add(readHeader + patience)) // far past the time-out: only a hang reaches it
	_, err = conn.Read(make([]byte, 1))
	took := time.Since(began)
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() || err == nil {
		t.Fatalf("a connection that never began its handshake was still open after %v (read: %v)", took, err)
	}
	if took < readHeader {
		t.Errorf("the connection was closed after %v, before the %v read-header time-out", took, readHeader)
	}
	tookAtMost(t, "cutting off the handshake", took, readHeader+2*time.Second)
}

// The 64 KiB header limit holds over HTTP/2 too, where the server announces it when the connection
// opens (SETTINGS_MAX_HEADER_LIST_SIZE, RFC 9113 §6.5.2): Go's client then refuses to send larger
// headers, where over HTTP/1.1 they are sent and answered 431.
func TestOverHTTP2TheHeaderLimitIsAnnouncedAndGosClientKeepsToIt(t *testing.T) {
	cert := selfSigned(t)
	program := start(t, testTokens, cert.flags()...)
	clients := map[string]*http.Client{overHTTP2: httpsClient(t, cert.roots, overHTTP2), overHTTP1: httpsClient(t, cert.roots, overHTTP1)}
	for _, tt := range []struct {
		protocol string
		padding  int
		want     int // a status, or notAnswered
	}{
		{overHTTP2, 32 << 10, http.StatusOK}, // first: the connection and its SETTINGS
		{overHTTP2, 256 << 10, notAnswered},
		{overHTTP1, 32 << 10, http.StatusOK},
		{overHTTP1, 256 << 10, http.StatusRequestHeaderFieldsTooLarge},
	} {
		r, _ := http.NewRequest("GET", program.url+"/api/users", nil)
		r.Header.Set("Authorization", "Bearer "+readToken)
		r.Header.Set("X-Padding", strings.Repeat("x", tt.padding))
		resp, err := clients[tt.protocol].Do(r)
		switch {
		case err != nil && tt.want != notAnswered:
			t.Errorf("%s with %d KiB of headers: %v, want %d", tt.protocol, tt.padding>>10, err, tt.want)
		case err == nil:
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("%s with %d KiB of headers: %d, want %d (%d: not sent)", tt.protocol, tt.padding>>10, resp.StatusCode, tt.want, notAnswered)
			}
		}
	}
}

// A stop waits for a request in its -delay as for any other (README, "Configuration"): the
// request is answered 200 once its delay is over, and only then does the program exit 0. Over
// HTTP/2 the test knows the request is in flight: the server reads a connection's frames in
// order, so once a later request on the same connection is answered, the server has begun the
// delayed one.
func TestAStopWaitsForARequestInItsDelay(t *testing.T) {
	t.Parallel() // it waits out the -delay
	const delay = 2 * time.Second
	cert := selfSigned(t)
	program := start(t, testTokens, append(cert.flags(), "-delay", delay.String())...)
	client := httpsClient(t, cert.roots, overHTTP2)
	var conn net.Conn
	sent := make(chan struct{})
	trace := &httptrace.ClientTrace{
		GotConn:      func(info httptrace.GotConnInfo) { conn = info.Conn },
		WroteHeaders: func() { close(sent) },
	}
	delayed, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", program.url+"/api/users", nil)
	delayed.Header.Set("Authorization", "Bearer "+readToken)
	began := time.Now()
	answered := make(chan int, 1)
	go func() {
		resp, err := client.Do(delayed)
		if err != nil {
			answered <- notAnswered
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	<-sent
	var later net.Conn
	trace = &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { later = info.Conn }}
	health, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", program.url+"/healthz", nil)
	if resp, body := exchange(t, client, health); resp.StatusCode != http.StatusOK || later != conn {
		t.Fatalf("GET /healthz beside the delayed request: %d %s, on the same connection: %v", resp.StatusCode, body, later == conn)
	}

	program.signal(syscall.SIGTERM)
	if status := <-answered; status != http.StatusOK {
		t.Fatalf("the request in its delay got %d, want 200 (%d: no answer)", status, status)
	}
	if took := time.Since(began); took < delay {
		t.Errorf("the request in its delay was answered after %v: the stop cut the delay short", took)
	}
	if status := program.wait(); status != 0 {
		t.Fatalf("exit status %d, want 0:\n%s", status, program.log)
	}
}
