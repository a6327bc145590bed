package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The rules of tls.go, HTTPS with -tls-cert and -tls-key (README, "HTTPS"): the configuration's
// mistakes, the clear-text warning, the URL and curl line the start-up prints, the HTTP/2
// time-outs, and the benchmarks. HTTPS and HTTP/2 over real sockets to the built program are the
// battery's: blackbox/tls_test.go.

// The two protocols net/http offers over TLS, as Response.Proto names them and ALPN (RFC 7301)
// negotiates them.
const (
	overHTTP2 = "HTTP/2.0"
	overHTTP1 = "HTTP/1.1"
)

var alpnName = map[string]string{overHTTP2: "h2", overHTTP1: "http/1.1"}

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

// Each mistake in -tls-cert and -tls-key stops the program before it listens, with a usage error
// (exit status 2) naming the flag and the file (both, for files that do not make a pair), and
// never showing the key.
func TestTLSMistakesAreUsageErrors(t *testing.T) {
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

// Without TLS on an address that is not loopback, the start-up log warns once that tokens travel
// in clear text, and names the flags that fix it. On loopback, or with TLS, it does not.
func TestClearTextWarningOffLoopback(t *testing.T) {
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
			program := runProgram(t, testEnv, flags...)
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
func TestOnlyLoopbackIPsAreLoopback(t *testing.T) {
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

// serverURL is where a client on this machine reaches the server: the address it bound, or
// localhost for an address that binds every interface.
func TestUnspecifiedHostIsLocalhost(t *testing.T) {
	for _, tt := range []struct {
		scheme, ip string
		port       int
		want       string
	}{
		{"http", "127.0.0.1", 8080, "http://127.0.0.1:8080"},
		{"http", "::1", 8080, "http://[::1]:8080"},
		{"http", "192.168.1.20", 80, "http://192.168.1.20:80"},
		{"http", "0.0.0.0", 8080, "http://localhost:8080"},
		{"https", "::", 8443, "https://localhost:8443"},
	} {
		if got := serverURL(tt.scheme, &net.TCPAddr{IP: net.ParseIP(tt.ip), Port: tt.port}); got != tt.want {
			t.Errorf("serverURL(%s, %s:%d) = %s, want %s", tt.scheme, tt.ip, tt.port, got, tt.want)
		}
	}
}

// The token notice's curl line works as pasted: with a self-signed certificate it hands curl that
// certificate with --cacert, by its absolute path quoted for a POSIX shell; a certificate a CA
// signed, and plain HTTP, need nothing (and never -k).
func TestCurlLineTrustsASelfSignedCert(t *testing.T) {
	selfSigned, caSigned := newSelfSignedCertificate(t), newCASignedCertificate(t)
	quoted := selfSigned // the same files, in a folder whose name has a quote
	quoted.certFile, quoted.keyFile = filepath.Join(t.TempDir(), "it's", "cert.pem"), filepath.Join(t.TempDir(), "key.pem")
	for from, to := range map[string]string{selfSigned.certFile: quoted.certFile, selfSigned.keyFile: quoted.keyFile} {
		data, err := os.ReadFile(from)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(to), 0o700)
		}
		if err == nil {
			err = os.WriteFile(to, data, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	const header = "-H 'Authorization: Bearer a-token' "
	for _, tt := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"plain HTTP", nil, "curl " + header + "http://localhost:8080/api/users"},
		{"self-signed", selfSigned.flags(), "curl --cacert '" + selfSigned.certFile + "' " + header + "https://localhost:8080/api/users"},
		{"a quote in the path", quoted.flags(), "curl --cacert '" + strings.ReplaceAll(quoted.certFile, "'", `'\''`) + "' " + header + "https://localhost:8080/api/users"},
		{"signed by a CA", caSigned.flags(), "curl " + header + "https://localhost:8080/api/users"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseConfig(append([]string{"users"}, tt.flags...), testEnv, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if got := curlCommand(cfg, cfg.scheme()+"://localhost:8080", "a-token"); got != tt.want {
				t.Errorf("the curl line is\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}

// Over HTTP/2 many requests share one connection, so the read and write time-outs that
// newHTTPServer sets count per request (per stream): a request that runs past one is cut off
// alone, and the next request goes on the same connection. The handler is served by httptest
// over TLS with HTTP/2, in the http.Server newHTTPServer makes with shortened time-outs.
func TestHTTP2TimeoutsCutOffOneStream(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits for the read and write time-outs")
	}
	const short, long = 300 * time.Millisecond, 10 * time.Second
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
		flags    []string
		slow     func(t *testing.T, url string) *http.Request
		want     int // the status of the slow request, or notAnswered
	}{
		{"read: a body that never arrives is 400", timeouts{readHeader: long, read: short, write: long, idle: long},
			nil, uploadThatNeverArrives, http.StatusBadRequest},
		{"write: a late answer is reset", timeouts{readHeader: long, read: long, write: short, idle: long},
			[]string{"-delay", (3 * short).String()}, answerHeldByTheDelay, notAnswered},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, tt.flags...)
			server := httptest.NewUnstartedServer(ts)
			server.Config = newHTTPServer(ts, tt.timeouts, newLogger("json", ts.log))
			server.EnableHTTP2 = true
			server.StartTLS()
			defer server.Close()
			client := server.Client()
			r, _ := http.NewRequest("GET", server.URL+"/healthz", nil)
			if resp, body := exchange(t, client, r); resp.StatusCode != http.StatusOK || resp.Proto != overHTTP2 {
				t.Fatalf("GET /healthz: %s %d %s, want HTTP/2 and 200", resp.Proto, resp.StatusCode, body)
			}

			resp, err := client.Do(tt.slow(t, server.URL))
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
			r, _ = http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", server.URL+"/healthz", nil)
			if next, _ := exchange(t, client, r); next.StatusCode != http.StatusOK || !reused {
				t.Errorf("the next request got %d on a connection reused: %v; want 200 on the same connection", next.StatusCode, reused)
			}
		})
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
	addr := strings.TrimPrefix(runProgram(b, testEnv, cert.flags()...).url, "https://")
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
	plain, https := runProgram(b, testEnv), runProgram(b, testEnv, cert.flags()...)

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

// testCertificate is a certificate for 127.0.0.1, ::1 and localhost, and its key, in PEM files.
type testCertificate struct {
	certFile, keyFile string
	roots             *x509.CertPool // what a client must trust: the certificate itself, or its CA
}

// flags are the flags that serve HTTPS with this certificate.
func (c testCertificate) flags() []string {
	return []string{"-tls-cert", c.certFile, "-tls-key", c.keyFile}
}

// newSelfSignedCertificate makes a certificate signed by its own key, as the openssl command of
// docs/https.md does.
func newSelfSignedCertificate(t testing.TB) testCertificate {
	t.Helper()
	key := newTestKey(t)
	template := certificateTemplate("localhost")
	template.IsCA = true // openssl req -x509 marks it a CA too
	template.KeyUsage |= x509.KeyUsageCertSign
	return writeCertificate(t, template, template, key, key)
}

// newCASignedCertificate makes a certificate signed by a CA of its own, as a certificate from
// Let's Encrypt or a company's CA is. Its roots hold the CA.
func newCASignedCertificate(t testing.TB) testCertificate {
	t.Helper()
	caKey, key := newTestKey(t), newTestKey(t)
	ca := certificateTemplate("test CA")
	ca.IsCA = true
	ca.KeyUsage |= x509.KeyUsageCertSign
	c := writeCertificate(t, certificateTemplate("localhost"), ca, key, caKey)
	der, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	root, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	c.roots = x509.NewCertPool()
	c.roots.AddCert(root)
	return c
}

// newTestKey is an ECDSA P-256 key, as openssl ec_paramgen_curve:P-256 makes.
func newTestKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// certificateTemplate is a certificate for 127.0.0.1, ::1 and localhost, for a day.
func certificateTemplate(name string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	return &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name},
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
}

// writeCertificate signs template with parentKey and writes it and key as cert.pem and key.pem
// (PKCS #8, as openssl writes keys) in a folder of the test's own. Its roots hold the certificate.
func writeCertificate(t testing.TB, template, parent *x509.Certificate, key, parentKey *ecdsa.PrivateKey) testCertificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, template, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := testCertificate{certFile: filepath.Join(dir, "cert.pem"), keyFile: filepath.Join(dir, "key.pem"), roots: x509.NewCertPool()}
	c.roots.AddCert(cert)
	for file, block := range map[string]*pem.Block{c.certFile: {Type: "CERTIFICATE", Bytes: der}, c.keyFile: {Type: "PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// exchange sends r with client, as a test of a running program does, and returns the answer and its
// whole body.
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
