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
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The rules of tls.go (README, "HTTPS"): RFC 6750 §5.3 requires TLS for bearer tokens. With
// -tls-cert and -tls-key the program speaks only HTTPS, TLS 1.2 or newer, HTTP/2 or HTTP/1.1 by
// ALPN; its mistakes stop the start; its curl line trusts a self-signed certificate with --cacert;
// without TLS off loopback the start-up log warns.

// A server started with a self-signed certificate, and no USERS_TOKENS, answers the curl line of
// its notice as pasted: --cacert names the certificate by its absolute path, so a client that
// trusts that certificate alone (never curl -k) reaches it over HTTPS. ALPN picks HTTP/2 for a
// client that offers it; TLS older than 1.2 (RFC 8996) and plain HTTP are refused.
func TestHTTPSWithASelfSignedCertificate(t *testing.T) {
	cert := newCertificate(t, t.TempDir(), false)
	program := runProgram(t, noTokens, cert.flags()...)
	if !strings.HasPrefix(program.url, "https://") {
		t.Fatalf("the start-up log names %s, want an https:// URL", program.url)
	}
	curl := regexp.MustCompile(`curl --cacert '([^']+)' -H '(Authorization: Bearer [^']+)' (https://\S+)`).
		FindStringSubmatch(program.stderr.String())
	if curl == nil {
		t.Fatalf("no curl line with --cacert in the notice:\n%s", program.stderr)
	}
	if curl[1] != cert.certFile || !filepath.IsAbs(curl[1]) {
		t.Errorf("--cacert %s, want the certificate's absolute path %s", curl[1], cert.certFile)
	}

	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: cert.roots}, // what --cacert does: trust this certificate only
		ForceAttemptHTTP2: true,                             // a Transport with its own TLS settings needs it
	}}
	defer client.CloseIdleConnections()
	r, _ := http.NewRequest("GET", curl[3], nil)
	name, value, _ := strings.Cut(curl[2], ": ")
	r.Header.Set(name, value)
	resp, body := roundTrip(t, client, r)
	if resp.StatusCode != http.StatusOK || resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 || resp.ProtoMajor != 2 {
		t.Errorf("the curl line got %d %s over %s; want 200 over TLS 1.2 or newer and HTTP/2", resp.StatusCode, body, resp.Proto)
	}

	old := &tls.Config{RootCAs: cert.roots, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}
	if conn, err := tls.Dial("tcp", strings.TrimPrefix(program.url, "https://"), old); err == nil {
		conn.Close()
		t.Error("a client offering TLS 1.1 at most completed a handshake")
	}

	plain, _ := http.NewRequest("GET", "http://"+strings.TrimPrefix(program.url, "https://")+"/healthz", nil)
	if resp, _ := roundTrip(t, &http.Client{}, plain); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("plain HTTP to the HTTPS port: %d, want net/http's own 400", resp.StatusCode)
	}
}

// Each mistake in -tls-cert and -tls-key stops the program before it listens, with a usage error
// (exit status 2) naming the flag and the file (both, for files that do not make a pair), printing
// nothing and never showing the key. The address is taken: had the program gone on to listen, it
// would have failed there instead, with exit status 1.
func TestTLSMistakesAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	cert, other := newCertificate(t, filepath.Join(dir, "a"), false), newCertificate(t, filepath.Join(dir, "b"), false)
	missing := filepath.Join(dir, "missing.pem")
	notAPair := func(certFile, keyFile string) string {
		return "-tls-cert " + certFile + " and -tls-key " + keyFile + " are not a certificate and its private key"
	}
	tests := []struct {
		name     string
		flags    []string
		mentions string
	}{
		{"-tls-cert without -tls-key", []string{"-tls-cert", cert.certFile}, "-tls-cert " + cert.certFile + " without -tls-key"},
		{"-tls-key without -tls-cert", []string{"-tls-key", cert.keyFile}, "-tls-key " + cert.keyFile + " without -tls-cert"},
		{"a certificate file that is not there", []string{"-tls-cert", missing, "-tls-key", cert.keyFile}, "-tls-cert " + missing + " cannot be read"},
		{"a key file that is not there", []string{"-tls-cert", cert.certFile, "-tls-key", missing}, "-tls-key " + missing + " cannot be read"},
		{"a folder as the certificate", []string{"-tls-cert", dir, "-tls-key", cert.keyFile}, "-tls-cert " + dir + " cannot be read"},
		{"the two files swapped", []string{"-tls-cert", cert.keyFile, "-tls-key", cert.certFile}, notAPair(cert.keyFile, cert.certFile)},
		{"the key of another certificate", []string{"-tls-cert", cert.certFile, "-tls-key", other.keyFile}, notAPair(cert.certFile, other.keyFile)},
	}
	var keyLines []string // a line of each key's PEM body: none may be shown
	for _, c := range []testCertificate{cert, other} {
		key, err := os.ReadFile(c.keyFile)
		if err != nil {
			t.Fatal(err)
		}
		keyLines = append(keyLines, strings.Split(string(key), "\n")[1])
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			taken, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer taken.Close()
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // a program that wrongly starts to serve stops at once, instead of hanging the test
			var stdout, stderr strings.Builder
			err = run(ctx, append([]string{"users", "-addr", taken.Addr().String()}, tt.flags...), testEnv, &stdout, &stderr)
			if !errors.Is(err, errUsage) {
				t.Fatalf("run returned %v, want a usage error (exit status 2) before listening", err)
			}
			if !strings.Contains(err.Error(), tt.mentions) {
				t.Errorf("the error %q does not say %q", err, tt.mentions)
			}
			if stdout.Len()+stderr.Len() != 0 {
				t.Errorf("a refused start printed %q and %q", stdout.String(), stderr.String())
			}
			for _, line := range keyLines {
				if strings.Contains(err.Error(), line) {
					t.Errorf("the error shows a key: %q", err)
				}
			}
		})
	}
}

// The token notice's curl line works as pasted in a POSIX shell: for a self-signed certificate it
// hands curl the certificate with --cacert, by its absolute path in single quotes (a quote in the
// path ends them, is escaped, and opens them again); a certificate a CA signed, and plain HTTP,
// need nothing. Never -k, which would send the token to whoever answers.
func TestCurlLineTrustsASelfSignedCertificateOnly(t *testing.T) {
	quoted := filepath.Join(t.TempDir(), "it's")
	selfSigned, inQuotedFolder, byCA := newCertificate(t, t.TempDir(), false), newCertificate(t, quoted, false), newCertificate(t, t.TempDir(), true)
	const header = "-H 'Authorization: Bearer a-token' "
	tests := []struct {
		name  string
		flags []string
		want  string
	}{
		{"plain HTTP", nil, "curl " + header + "http://localhost:8080/api/users"},
		{"self-signed", selfSigned.flags(), "curl --cacert '" + selfSigned.certFile + "' " + header + "https://localhost:8080/api/users"},
		{"a quote in the path", inQuotedFolder.flags(), "curl --cacert '" + strings.ReplaceAll(inQuotedFolder.certFile, "'", `'\''`) + "' " + header + "https://localhost:8080/api/users"},
		{"signed by a CA", byCA.flags(), "curl " + header + "https://localhost:8080/api/users"},
	}
	for _, tt := range tests {
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

// Without TLS on an address other machines can reach, the start-up log warns once that tokens
// travel in clear text. On loopback, or with TLS, it does not. (The test sends nothing to any of
// these addresses.)
func TestClearTextWarningOffLoopbackOnly(t *testing.T) {
	cert := newCertificate(t, t.TempDir(), false)
	tests := []struct {
		name  string
		flags []string
		warns bool
	}{
		{"every interface, plain HTTP", []string{"-addr", "0.0.0.0:0"}, true},
		{"127.0.0.1, plain HTTP", []string{"-addr", "127.0.0.1:0"}, false},
		{"localhost, plain HTTP", []string{"-addr", "localhost:0"}, false},
		{"every interface, HTTPS", append([]string{"-addr", "0.0.0.0:0"}, cert.flags()...), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			program := runProgram(t, testEnv, append(tt.flags, "-log-format", "json")...)
			if err := program.stop(); err != nil {
				t.Fatal(err)
			}
			warnings := program.stderr.records("bearer tokens in clear text")
			switch {
			case tt.warns && (len(warnings) != 1 || warnings[0]["level"] != "WARN"):
				t.Errorf("%d warnings, want one WARN record:\n%s", len(warnings), program.stderr)
			case !tt.warns && len(warnings) != 0:
				t.Errorf("a warning, want none:\n%s", program.stderr)
			}
		})
	}
}

// Benchmarks of HTTPS beside plain HTTP, whose figures bench/README.md gives ("HTTPS beside HTTP").
// Client and server run in this one process, so each figure holds the work of both sides.

// BenchmarkTLSHandshake opens a connection and completes a full handshake with an ECDSA P-256
// certificate, beside a bare TCP connection for scale:
//
//	go test -run '^$' -bench TLSHandshake -benchtime 3s
func BenchmarkTLSHandshake(b *testing.B) {
	cert := newCertificate(b, b.TempDir(), false)
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

// BenchmarkGetUserOverLoopback is GET one user of 1,000 from many clients at once over kept-alive
// connections: plain HTTP/1.1, then HTTPS with HTTP/1.1 and with HTTP/2.
//
//	go test -run '^$' -bench GetUserOverLoopback -benchtime 2s
func BenchmarkGetUserOverLoopback(b *testing.B) {
	cert := newCertificate(b, b.TempDir(), false)
	plain, https := runProgram(b, testEnv), runProgram(b, testEnv, cert.flags()...)
	client := func(overTLS bool, protocol string) *http.Client {
		transport := &http.Transport{MaxIdleConnsPerHost: 64}
		if overTLS {
			transport.TLSClientConfig = &tls.Config{RootCAs: cert.roots, NextProtos: []string{protocol}}
			transport.ForceAttemptHTTP2 = protocol == "h2"
		}
		b.Cleanup(transport.CloseIdleConnections)
		return &http.Client{Transport: transport}
	}
	// seed creates 1,000 users through the API and returns the URL of the 500th.
	seed := func(url string, client *http.Client) string {
		for i := 1; i <= 1000; i++ {
			r, _ := http.NewRequest("POST", url+"/api/users", strings.NewReader(fmt.Sprintf(`{"name":"User %d","email":"user%d@bench.test"}`, i, i)))
			r.Header.Set("Authorization", "Bearer "+writeToken)
			r.Header.Set("Content-Type", "application/json")
			if resp, body := roundTrip(b, client, r); resp.StatusCode != http.StatusCreated {
				b.Fatalf("seeding: %d %s", resp.StatusCode, body)
			}
		}
		return url + "/api/users/500"
	}
	plainUser, httpsUser := seed(plain.url, client(false, "")), seed(https.url, client(true, "h2"))
	for _, bb := range []struct {
		name, url string
		client    *http.Client
	}{
		{"HTTP1.1", plainUser, client(false, "")},
		{"HTTPS HTTP1.1", httpsUser, client(true, "http/1.1")},
		{"HTTPS HTTP2", httpsUser, client(true, "h2")},
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

// testCertificate is a certificate for localhost, 127.0.0.1 and ::1, and its key, in PEM files.
type testCertificate struct {
	certFile, keyFile string
	roots             *x509.CertPool // what a client must trust: the certificate itself, or its CA
}

// flags are the flags that serve HTTPS with this certificate.
func (c testCertificate) flags() []string {
	return []string{"-tls-cert", c.certFile, "-tls-key", c.keyFile}
}

// newCertificate writes cert.pem and key.pem (PKCS #8, as openssl writes keys) into dir, which it
// creates: a certificate signed by its own key, as the openssl line of README "HTTPS" makes, or,
// byCA, one signed by a CA of its own, as Let's Encrypt's or a company's are.
func newCertificate(t testing.TB, dir string, byCA bool) testCertificate {
	t.Helper()
	template := func(name string, isCA bool) *x509.Certificate {
		serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
		c := &x509.Certificate{
			SerialNumber: serial, Subject: pkix.Name{CommonName: name},
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			BasicConstraintsValid: true, IsCA: isCA, // openssl req -x509 marks a self-signed certificate a CA too
		}
		if isCA {
			c.KeyUsage |= x509.KeyUsageCertSign
		}
		return c
	}
	newKey := func() *ecdsa.PrivateKey {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	key := newKey()
	leaf := template("localhost", !byCA)
	parent, parentKey := leaf, key
	if byCA {
		parent, parentKey = template("test CA", true), newKey()
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	trusted := der
	if byCA {
		if trusted, err = x509.CreateCertificate(rand.Reader, parent, parent, &parentKey.PublicKey, parentKey); err != nil {
			t.Fatal(err)
		}
	}
	root, err := x509.ParseCertificate(trusted)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c := testCertificate{certFile: filepath.Join(dir, "cert.pem"), keyFile: filepath.Join(dir, "key.pem"), roots: x509.NewCertPool()}
	c.roots.AddCert(root)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for file, block := range map[string]*pem.Block{c.certFile: {Type: "CERTIFICATE", Bytes: der}, c.keyFile: {Type: "PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// roundTrip sends r with client and returns the answer and its whole body (the program's and the
// page's tests use it too).
func roundTrip(t testing.TB, client *http.Client, r *http.Request) (*http.Response, string) {
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
