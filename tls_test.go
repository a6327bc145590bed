package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// HTTPS with -tls-cert and -tls-key (README, "HTTPS"): the whole program started with a
// certificate made for the test, and clients that trust that certificate alone.

// newCAIssuedCertificate makes a certificate signed by a CA made for the test, as mkcert does:
// clients trust the CA (mkcert -install puts it where they look), not the certificate.
func newCAIssuedCertificate(t testing.TB) testCertificate {
	t.Helper()
	caKey, key := newTestKey(t), newTestKey(t)
	ca := certificateTemplate("users test CA")
	ca.IsCA, ca.KeyUsage = true, x509.KeyUsageCertSign
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	issued := writeCertificate(t, certificateTemplate("localhost"), caCert, key, caKey)
	issued.roots = x509.NewCertPool()
	issued.roots.AddCert(caCert)
	return issued
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
		ExpectContinueTimeout: 10 * time.Second,      // wait for 100 Continue before sending a body that asks for it
		MaxIdleConnsPerHost:   64,
	}
	t.Cleanup(transport.CloseIdleConnections)
	return &http.Client{Transport: transport, Timeout: 20 * time.Second}
}

// notAnswered is the status of a request that got none: its stream was reset, or the client
// refused to send it.
const notAnswered = 0

// A server started with -tls-cert answers HTTPS over HTTP/2 and HTTP/1.1, as the client offers them
// by ALPN, with TLS 1.2 or newer, to a client that trusts only its certificate; the body limit
// holds as over plain HTTP.
func TestHTTPSAnswersOverHTTP2AndHTTP1ToAClientThatTrustsOnlyItsCertificate(t *testing.T) {
	cert := newSelfSignedCertificate(t)
	for _, p := range bothProtocols {
		protocol := p.protocol
		t.Run(p.name, func(t *testing.T) {
			program := startProgram(t, testEnv, cert.flags()...)
			if !strings.HasPrefix(program.url, "https://") {
				t.Fatalf("the program serves %s, want an https:// URL", program.url)
			}
			client := httpsClient(t, cert.roots, protocol)

			r, _ := http.NewRequest("POST", program.url+"/api/users", strings.NewReader(`{"name":"Ann","email":"ann@example.com"}`))
			r.Header.Set("Authorization", "Bearer "+writeToken)
			r.Header.Set("Content-Type", "application/json")
			created, createdBody := exchange(t, client, r)
			if created.StatusCode != http.StatusCreated {
				t.Fatalf("POST /api/users: %d %s", created.StatusCode, createdBody)
			}

			r, _ = http.NewRequest("GET", program.url+created.Header.Get("Location"), nil)
			r.Header.Set("Authorization", "Bearer "+readToken)
			resp, body := exchange(t, client, r)
			if resp.StatusCode != http.StatusOK || body != createdBody {
				t.Errorf("GET %s: %d %s, want 200 %s", created.Header.Get("Location"), resp.StatusCode, body, createdBody)
			}
			if resp.Proto != protocol || resp.TLS.NegotiatedProtocol != alpnName[protocol] {
				t.Errorf("the answer came over %s (ALPN %q), want %s", resp.Proto, resp.TLS.NegotiatedProtocol, protocol)
			}
			if resp.TLS.Version < tls.VersionTLS12 {
				t.Errorf("TLS version %x, want 1.2 or newer", resp.TLS.Version)
			}

			r, _ = http.NewRequest("POST", program.url+"/api/users", strings.NewReader(strings.Repeat(" ", maxBodyBytes+1)))
			r.Header.Set("Authorization", "Bearer "+writeToken)
			r.Header.Set("Content-Type", "application/json")
			if resp, body := exchange(t, client, r); resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("POST of 1 MiB + 1: %d %s, want 413", resp.StatusCode, body)
			}
		})
	}
}

// RFC 8996 deprecates TLS 1.0 and 1.1: the server offers 1.2 and 1.3 only, by its own setting, not
// by Go's default, which GODEBUG=tls10server=1 turns back to TLS 1.0.
func TestHTTPSRefusesTLSOlderThan1_2(t *testing.T) {
	t.Setenv("GODEBUG", "tls10server=1")
	cert := newSelfSignedCertificate(t)
	program := startProgram(t, testEnv, cert.flags()...)
	addr := strings.TrimPrefix(program.url, "https://")
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
	cert := newSelfSignedCertificate(t)
	program := startProgram(t, testEnv, cert.flags()...)
	r, _ := http.NewRequest("GET", "http://"+strings.TrimPrefix(program.url, "https://")+"/api/users", nil)
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
	noTokens := func(string) string { return "" }
	for _, tt := range []struct {
		name       string
		cert       func(testing.TB) testCertificate
		logFormat  string
		selfSigned bool
	}{
		{"a self-signed certificate, text log", newSelfSignedCertificate, "text", true},
		{"a certificate a CA issued", newCAIssuedCertificate, "text", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cert := tt.cert(t)
			program := startProgram(t, noTokens, append(cert.flags(), "-log-format", tt.logFormat)...)
			notice := program.stderr.String()
			if tt.logFormat == "json" { // the notice is the first record
				var record struct{ Curl string }
				if err := json.Unmarshal([]byte(strings.SplitN(notice, "\n", 2)[0]), &record); err != nil {
					t.Fatalf("the first record is not JSON: %v\n%s", err, notice)
				}
				notice = record.Curl
			}
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
// refused (over HTTP/2, the stop sends GOAWAY), and start returns nil (exit status 0).
func TestHTTPSStopFinishesTheRequestsInFlight(t *testing.T) {
	for _, p := range bothProtocols {
		protocol := p.protocol
		t.Run(p.name, func(t *testing.T) {
			cert := newSelfSignedCertificate(t)
			program := startProgram(t, testEnv, cert.flags()...)
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
			case <-time.After(10 * time.Second):
				t.Fatal("no 100 Continue within 10 s")
			}

			stopped := make(chan error, 1)
			go func() { stopped <- program.stop() }()
			refused := func() bool {
				resp, err := client.Get(program.url + "/healthz")
				if err == nil {
					resp.Body.Close()
				}
				return err != nil
			}
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for deadline := time.Now().Add(5 * time.Second); !refused(); <-tick.C {
				if time.Now().After(deadline) {
					t.Fatal("new requests were still answered 5 s after the stop")
				}
			}
			select {
			case a := <-answered:
				t.Fatalf("the request in flight ended before its body was sent: %d, %v", a.status, a.err)
			case err := <-stopped:
				t.Fatalf("start returned %v with a request in flight", err)
			default:
			}

			io.WriteString(feed, body)
			feed.Close()
			if a := <-answered; a.err != nil || a.status != http.StatusCreated {
				t.Errorf("the request in flight got %d, %v; want 201", a.status, a.err)
			}
			if err := <-stopped; err != nil {
				t.Errorf("start returned %v, want nil (exit status 0)", err)
			}
		})
	}
}

// Each mistake in -tls-cert and -tls-key stops the program before it listens, with a usage error
// (exit status 2) naming the flag and the file (both, for files that do not make a pair), and
// never showing the key.
func TestTLSConfigurationMistakesAreUsageErrorsBeforeListening(t *testing.T) {
	cert, other := newSelfSignedCertificate(t), newSelfSignedCertificate(t)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		t.Helper()
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return file
	}
	read := func(file string) []byte {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	missing := filepath.Join(dir, "missing.pem")
	empty := write("empty.pem", nil)
	block, _ := pem.Decode(read(cert.certFile))
	derCert := write("cert.der", block.Bytes)
	notACertificate := write("garbage.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER")}))
	notAPair := func(certFile, keyFile string) string {
		return "-tls-cert " + certFile + " and -tls-key " + keyFile + " are not a certificate and its private key ("
	}

	tests := []struct {
		name     string
		flags    []string
		mentions []string
	}{
		{"-tls-cert without -tls-key", []string{"-tls-cert", cert.certFile}, []string{"-tls-cert " + cert.certFile + " needs -tls-key"}},
		{"-tls-key without -tls-cert", []string{"-tls-key", cert.keyFile}, []string{"-tls-key " + cert.keyFile + " needs -tls-cert"}},
		{"a certificate file that is not there", []string{"-tls-cert", missing, "-tls-key", cert.keyFile}, []string{"-tls-cert " + missing + " cannot be read"}},
		{"a key file that is not there", []string{"-tls-cert", cert.certFile, "-tls-key", missing}, []string{"-tls-key " + missing + " cannot be read"}},
		{"a folder as the certificate", []string{"-tls-cert", dir, "-tls-key", cert.keyFile}, []string{"-tls-cert " + dir + " cannot be read"}},
		{"a folder as the key", []string{"-tls-cert", cert.certFile, "-tls-key", dir}, []string{"-tls-key " + dir + " cannot be read"}},
		{"a certificate in DER, not PEM", []string{"-tls-cert", derCert, "-tls-key", cert.keyFile}, []string{notAPair(derCert, cert.keyFile), "PEM"}},
		{"an empty key file", []string{"-tls-cert", cert.certFile, "-tls-key", empty}, []string{notAPair(cert.certFile, empty), "PEM"}},
		{"the two files swapped", []string{"-tls-cert", cert.keyFile, "-tls-key", cert.certFile}, []string{notAPair(cert.keyFile, cert.certFile), "switched"}},
		{"a certificate block that is not a certificate", []string{"-tls-cert", notACertificate, "-tls-key", cert.keyFile}, []string{notAPair(notACertificate, cert.keyFile), "malformed certificate"}},
		{"the key of another certificate", []string{"-tls-cert", cert.certFile, "-tls-key", other.keyFile}, []string{notAPair(cert.certFile, other.keyFile), "does not match"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The address is taken: had the program reached net.Listen, it would fail there, with exit status 1.
			taken, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer taken.Close()
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // a program that wrongly starts to serve stops at once, instead of hanging the test
			var stdout, stderr logBuffer
			err = run(ctx, append([]string{"users", "-addr", taken.Addr().String()}, tt.flags...), testEnv, &stdout, &stderr)
			var usage usageError
			if !errors.As(err, &usage) {
				t.Fatalf("run returned %v (%T), want a usageError (exit status 2) before listening", err, err)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("message %q does not say %q", err, m)
				}
			}
			if strings.Contains(err.Error(), "\n") || stdout.String() != "" || stderr.String() != "" {
				t.Errorf("want one line and nothing printed: the error is %q, stdout %q, stderr %q", err, stdout.String(), stderr.String())
			}
			for _, key := range []string{cert.keyFile, other.keyFile} {
				for _, line := range strings.Split(string(read(key)), "\n") {
					if len(line) > 8 && !strings.HasPrefix(line, "-----") && strings.Contains(err.Error(), line) {
						t.Errorf("the key is shown: %q", err)
					}
				}
			}
		})
	}
}

// The files are read once, at start (README, "HTTPS"): a renewed certificate needs a restart, and
// files that change or go meanwhile do not stop the running server.
func TestHTTPSReadsItsFilesOnceAtStart(t *testing.T) {
	cert := newSelfSignedCertificate(t)
	program := startProgram(t, testEnv, cert.flags()...)
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

// Without TLS on an address that is not loopback, the start-up log warns once that tokens travel
// in clear text, and names the flags that fix it. On loopback, or with TLS, it does not.
func TestClearTextWarningOnlyWithoutTLSOnAnAddressThatIsNotLoopback(t *testing.T) {
	cert := newSelfSignedCertificate(t)
	tests := []struct {
		name  string
		addr  string
		https bool
		warns bool
	}{
		{"every interface, plain HTTP", "0.0.0.0:0", false, true},
		{"every interface by port alone, plain HTTP", ":0", false, true},
		{"127.0.0.1, plain HTTP", "127.0.0.1:0", false, false},
		{"localhost, plain HTTP", "localhost:0", false, false},
		{"::1, plain HTTP", "[::1]:0", false, false},
		{"every interface, HTTPS", "0.0.0.0:0", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.addr == "[::1]:0" {
				probe, err := net.Listen("tcp", tt.addr)
				if err != nil {
					t.Skip("no IPv6 loopback here:", err)
				}
				probe.Close()
			}
			flags := []string{"-addr", tt.addr, "-log-format", "json"} // the test sends nothing: any address will do
			if tt.https {
				flags = append(flags, cert.flags()...)
			}
			program := startProgram(t, testEnv, flags...)
			if err := program.stop(); err != nil {
				t.Fatalf("start returned %v after its stop, want nil", err)
			}
			warnings := program.stderr.records(t, clearTextWarning)
			if want := map[bool]int{true: 1, false: 0}[tt.warns]; len(warnings) != want {
				t.Fatalf("%d warnings, want %d:\n%s", len(warnings), want, program.stderr)
			}
			if tt.warns && (warnings[0]["level"] != "WARN" || !strings.Contains(clearTextWarning, "-tls-cert FILE -tls-key FILE")) {
				t.Errorf("the warning is not a WARN record naming -tls-cert and -tls-key: %v", warnings[0])
			}
		})
	}
}

// Loopback is 127.0.0.0/8 and ::1; every other address, a LAN's included, is one other machines
// may reach.
func TestOnlyLoopbackAddressesCountAsLoopback(t *testing.T) {
	for _, tt := range []struct {
		ip       string
		loopback bool
	}{
		{"127.0.0.1", true}, {"127.3.2.1", true}, {"::1", true}, {"::ffff:127.0.0.1", true},
		{"0.0.0.0", false}, {"::", false}, {"192.168.1.20", false}, {"10.0.0.7", false}, {"fe80::1", false}, {"203.0.113.9", false},
	} {
		if got := isLoopback(&net.TCPAddr{IP: net.ParseIP(tt.ip), Port: 8080}); got != tt.loopback {
			t.Errorf("isLoopback(%s) = %v, want %v", tt.ip, got, tt.loopback)
		}
	}
}

// /openapi.json, imported as it is, reaches the server that served it over the scheme it serves:
// an HTTPS server sets the scheme server variable's default to https, and changes nothing else.
func TestOpenAPIDocumentOfAnHTTPSServerReachesItOverHTTPS(t *testing.T) {
	file, err := webFiles.ReadFile("web/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var written map[string]any
	if err := json.Unmarshal(file, &written); err != nil {
		t.Fatalf("web/openapi.json is not JSON: %v", err)
	}
	cert := newSelfSignedCertificate(t)
	for _, tt := range []struct {
		name  string
		https bool
		want  string
	}{
		{"HTTPS", true, "https://localhost:8080"},
		{"plain HTTP", false, "http://localhost:8080"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var program *program
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			if tt.https {
				program = startProgram(t, testEnv, cert.flags()...)
				client = httpsClient(t, cert.roots, overHTTP2)
			} else {
				program = startProgram(t, testEnv)
			}
			r, _ := http.NewRequest("GET", program.url+"/openapi.json", nil)
			resp, body := exchange(t, client, r)
			var served map[string]any
			if err := json.Unmarshal([]byte(body), &served); resp.StatusCode != http.StatusOK || err != nil {
				t.Fatalf("GET /openapi.json: %d, %v", resp.StatusCode, err)
			}
			if resp.Header.Get("ETag") != entityTag([]byte(body)) {
				t.Errorf("ETag %s is not the served document's", resp.Header.Get("ETag"))
			}
			// Where a tool that imports the document sends its requests: the first server URL, each
			// variable at its default.
			server := served["servers"].([]any)[0].(map[string]any)
			variables := server["variables"].(map[string]any)
			url := server["url"].(string)
			for name, variable := range variables {
				url = strings.ReplaceAll(url, "{"+name+"}", variable.(map[string]any)["default"].(string))
			}
			if url != tt.want {
				t.Errorf("the server URL as imported is %s, want %s", url, tt.want)
			}
			variables["scheme"].(map[string]any)["default"] = "http"
			if !reflect.DeepEqual(served, written) {
				t.Error("the served document differs from web/openapi.json in more than the scheme's default")
			}
		})
	}
}

// ---------------------------------------------------------------------------------------------
// Where HTTP/2 differs (README, "HTTPS"). The time-outs are the program's own, shortened through
// cfg.timeouts.

// The TLS handshake is bounded by the shortest time-out, the read-header one: a client that
// connects and sends nothing is cut off, as it is over plain HTTP/1.1.
func TestTLSHandshakeIsCutOffAtTheReadHeaderTimeout(t *testing.T) {
	const readHeader = 300 * time.Millisecond
	cert := newSelfSignedCertificate(t)
	cfg := testConfig(t, append(cert.flags(), "-addr", "127.0.0.1:0")...)
	cfg.timeouts.readHeader = readHeader
	program := startWith(t, cfg)
	start := time.Now() // before the server accepts, and so before its time-out begins
	conn, err := net.Dial("tcp", strings.TrimPrefix(program.url, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(start.Add(10 * time.Second)) // far past the time-out: only a hang reaches it
	_, err = conn.Read(make([]byte, 1))
	took := time.Since(start)
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() || err == nil {
		t.Fatalf("a connection that never began its handshake was still open after %v (read: %v)", took, err)
	}
	if testing.Short() {
		t.Skip("-short: the clock is not checked")
	}
	if took < readHeader {
		t.Errorf("the connection was closed after %v, before the %v read-header time-out", took, readHeader)
	}
}

// Over HTTP/2 many requests share one connection, so the read and write time-outs count per
// request (per stream): a request that runs past one is cut off alone, and the next request goes
// on the same connection.
func TestOverHTTP2ReadAndWriteTimeoutsCutOffTheRequestNotTheConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("a time-out test: it waits for the read and write time-outs")
	}
	const short, long = 300 * time.Millisecond, 10 * time.Second
	cert := newSelfSignedCertificate(t)
	uploadThatNeverArrives := func(t *testing.T, url string) *http.Request {
		body, feed := io.Pipe()
		t.Cleanup(func() { feed.Close() })
		r, _ := http.NewRequest("POST", url+"/api/users", body)
		r.Header.Set("Authorization", "Bearer "+writeToken)
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	answerHeldByTheDelay := func(t *testing.T, url string) *http.Request {
		r, _ := http.NewRequest("GET", url+"/api/users", nil) // -delay holds it past the write time-out
		r.Header.Set("Authorization", "Bearer "+readToken)
		return r
	}
	for _, tt := range []struct {
		name     string
		timeouts timeouts
		delay    time.Duration
		slow     func(t *testing.T, url string) *http.Request
		want     int // the status of the slow request, or notAnswered
	}{
		{"the read time-out: a body that does not arrive is 400", timeouts{readHeader: long, read: short, write: long, idle: long, shutdown: long},
			0, uploadThatNeverArrives, http.StatusBadRequest},
		{"the write time-out: an answer not written in time is reset", timeouts{readHeader: long, read: long, write: short, idle: long, shutdown: long},
			3 * short, answerHeldByTheDelay, notAnswered},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t, append(cert.flags(), "-addr", "127.0.0.1:0")...)
			cfg.timeouts, cfg.delay = tt.timeouts, tt.delay
			program := startWith(t, cfg)
			client := httpsClient(t, cert.roots, overHTTP2)
			r, _ := http.NewRequest("GET", program.url+"/healthz", nil)
			if resp, body := exchange(t, client, r); resp.StatusCode != http.StatusOK || resp.Proto != overHTTP2 {
				t.Fatalf("GET /healthz: %s %d %s", resp.Proto, resp.StatusCode, body)
			}

			resp, err := client.Do(tt.slow(t, program.url))
			switch {
			case tt.want == notAnswered && err == nil:
				resp.Body.Close()
				t.Fatalf("the slow request got %d, want it reset", resp.StatusCode)
			case tt.want != notAnswered && err != nil:
				t.Fatalf("the slow request got %v, want %d", err, tt.want)
			case tt.want != notAnswered:
				resp.Body.Close()
				if resp.StatusCode != tt.want {
					t.Fatalf("the slow request got %d, want %d", resp.StatusCode, tt.want)
				}
			}

			reused := false
			trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
			r, _ = http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", program.url+"/healthz", nil)
			next, _ := exchange(t, client, r)
			if next.StatusCode != http.StatusOK || !reused {
				t.Errorf("the next request got %d on a connection reused: %v; want 200 on the same connection", next.StatusCode, reused)
			}
		})
	}
}

// The 64 KiB header limit holds over HTTP/2 too, where the server announces it when the connection
// opens (SETTINGS_MAX_HEADER_LIST_SIZE, RFC 9113 §6.5.2): Go's client then refuses to send larger
// headers, where over HTTP/1.1 they are sent and answered 431.
func TestOverHTTP2TheHeaderLimitIsAnnouncedAndGosClientKeepsToIt(t *testing.T) {
	cert := newSelfSignedCertificate(t)
	program := startProgram(t, testEnv, cert.flags()...)
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

// Benchmarks of HTTPS beside plain HTTP (bench/README.md, "HTTPS beside HTTP").

// What TLS costs, over real loopback connections to the whole program (README, "HTTPS";
// bench/README.md has the figures, and bench/tls.sh measures the same with wrk against the built
// binary):
//
//	go test -run '^$' -bench 'TLSHandshake|GetUserOverLoopback' -benchtime 3s
//
// Client and server run in this one process, so each figure holds the work of both sides. The
// certificates and HTTPS clients are tls_test.go's.

// BenchmarkTLSHandshake opens a connection and completes a full handshake (no session to resume)
// with the test's ECDSA P-256 certificate, beside a bare TCP connection for scale.
func BenchmarkTLSHandshake(b *testing.B) {
	cert := newSelfSignedCertificate(b)
	addr := strings.TrimPrefix(startProgram(b, testEnv, cert.flags()...).url, "https://")
	dialTLS := func(version uint16) func() (net.Conn, error) {
		return func() (net.Conn, error) {
			return tls.Dial("tcp", addr, &tls.Config{RootCAs: cert.roots, MinVersion: version, MaxVersion: version})
		}
	}
	for _, bb := range []struct {
		name string
		dial func() (net.Conn, error)
	}{
		{"TCP connect only", func() (net.Conn, error) { return net.Dial("tcp", addr) }},
		{"TLS 1.2", dialTLS(tls.VersionTLS12)},
		{"TLS 1.3", dialTLS(tls.VersionTLS13)},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				conn, err := bb.dial()
				if err != nil {
					b.Fatal(err)
				}
				conn.Close()
			}
		})
	}
}

// BenchmarkGetUserOverLoopback is GET one user of 1,000 from many clients at once, over kept-alive
// connections: plain HTTP/1.1, then HTTPS with HTTP/1.1 and with HTTP/2.
func BenchmarkGetUserOverLoopback(b *testing.B) {
	cert := newSelfSignedCertificate(b)
	plainTransport := &http.Transport{MaxIdleConnsPerHost: 64}
	b.Cleanup(plainTransport.CloseIdleConnections)
	plainClient := &http.Client{Transport: plainTransport}
	plain, https := startProgram(b, testEnv), startProgram(b, testEnv, cert.flags()...)

	// seed creates 1,000 users through the API, as bench/load.sh does, and returns the URL of the
	// 500th.
	seed := func(url string, client *http.Client) string {
		var middle string
		for i := 1; i <= 1000; i++ {
			body := fmt.Sprintf(`{"name":"Seed User %d","email":"seed%d@bench.test"}`, i, i)
			r, _ := http.NewRequest("POST", url+"/api/users", strings.NewReader(body))
			r.Header.Set("Authorization", "Bearer "+writeToken)
			r.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(r)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				b.Fatalf("seeding: status %d, want 201", resp.StatusCode)
			}
			if i == 500 {
				middle = url + resp.Header.Get("Location")
			}
		}
		return middle
	}
	plainUser := seed(plain.url, plainClient)
	httpsUser := seed(https.url, httpsClient(b, cert.roots, overHTTP2))

	for _, bb := range []struct {
		name   string
		url    string
		client *http.Client
	}{
		{"HTTP1.1", plainUser, plainClient},
		{"HTTPS HTTP1.1", httpsUser, httpsClient(b, cert.roots, overHTTP1)},
		{"HTTPS HTTP2", httpsUser, httpsClient(b, cert.roots, overHTTP2)},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.SetParallelism(16) // 16 clients per CPU
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					r, _ := http.NewRequest("GET", bb.url, nil)
					r.Header.Set("Authorization", "Bearer "+readToken)
					resp, err := bb.client.Do(r)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Errorf("status %d, want 200", resp.StatusCode)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
