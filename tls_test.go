package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The rules of tls.go (README, "HTTPS"): RFC 6750 §5.3 requires TLS for bearer tokens. The
// mistakes of -tls-cert and -tls-key stop the start, and the token notice's curl line trusts a
// self-signed certificate with --cacert. What the program serves with them (HTTPS only, TLS 1.2 or
// newer, HTTP/2 by ALPN) and its clear-text warning are main_test.go's, which runs the program.
//
// The certificates are test-only, checked in under testdata/ (testdata/test-only-certificates.md):
// a self-signed one for localhost, 127.0.0.1 and ::1, as README's openssl line makes, and one a CA
// signed, as Let's Encrypt's or a company's are.

// Each mistake in -tls-cert and -tls-key is a usage error (exit status 2), found by parseConfig
// before the program listens, naming the flag and the file (both, for files that do not make a
// pair), printing nothing and never showing the key.
func TestTLSMistakesAreUsageErrors(t *testing.T) {
	const (
		cert     = "testdata/test-only-self-signed-cert.pem"
		key      = "testdata/test-only-self-signed-key.pem"
		otherKey = "testdata/test-only-ca-signed-key.pem" // the key of another certificate
		missing  = "testdata/missing.pem"
	)
	notAPair := func(certFile, keyFile string) string {
		return "-tls-cert " + certFile + " and -tls-key " + keyFile + " are not a certificate and its private key"
	}
	tests := []struct {
		name     string
		flags    []string
		mentions string
	}{
		{"-tls-cert without -tls-key", []string{"-tls-cert", cert}, "-tls-cert " + cert + " without -tls-key"},
		{"-tls-key without -tls-cert", []string{"-tls-key", key}, "-tls-key " + key + " without -tls-cert"},
		{"a certificate file that is not there", []string{"-tls-cert", missing, "-tls-key", key}, "-tls-cert " + missing + " cannot be read"},
		{"a key file that is not there", []string{"-tls-cert", cert, "-tls-key", missing}, "-tls-key " + missing + " cannot be read"},
		{"a folder as the certificate", []string{"-tls-cert", "testdata", "-tls-key", key}, "-tls-cert testdata cannot be read"},
		{"the two files swapped", []string{"-tls-cert", key, "-tls-key", cert}, notAPair(key, cert)},
		{"the key of another certificate", []string{"-tls-cert", cert, "-tls-key", otherKey}, notAPair(cert, otherKey)},
	}
	var keyLines []string // a line of each key's PEM body: none may be shown
	for _, file := range []string{key, otherKey} {
		pem, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		keyLines = append(keyLines, strings.Split(string(pem), "\n")[1])
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout strings.Builder
			_, err := parseConfig(append([]string{"users"}, tt.flags...), testEnv, &stdout)
			if !errors.Is(err, errUsage) {
				t.Fatalf("parseConfig returned %v, want a usage error (exit status 2)", err)
			}
			var printed strings.Builder
			printError(&printed, err)
			if !strings.Contains(printed.String(), tt.mentions) {
				t.Errorf("what is printed, %q, does not say %q", printed.String(), tt.mentions)
			}
			if stdout.Len() != 0 {
				t.Errorf("a refused start printed %q", stdout.String())
			}
			for _, line := range keyLines {
				if strings.Contains(printed.String(), line) {
					t.Errorf("what is printed shows a key: %q", printed.String())
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
	selfSigned, err := filepath.Abs("testdata/test-only-self-signed-cert.pem")
	if err != nil {
		t.Fatal(err)
	}
	quoted := filepath.Join(t.TempDir(), "it's") // the self-signed pair, copied into a folder with a quote in its name
	if err := os.Mkdir(quoted, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"test-only-self-signed-cert.pem", "test-only-self-signed-key.pem"} {
		pem, err := os.ReadFile(filepath.Join("testdata", name))
		if err == nil {
			err = os.WriteFile(filepath.Join(quoted, name), pem, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	const header = "-H 'Authorization: Bearer a-token' "
	tests := []struct {
		name  string
		flags []string
		want  string
	}{
		{"plain HTTP", nil, "curl " + header + "http://localhost:8080/api/users"},
		{"self-signed, by a relative path", []string{"-tls-cert", "testdata/test-only-self-signed-cert.pem", "-tls-key", "testdata/test-only-self-signed-key.pem"},
			"curl --cacert '" + selfSigned + "' " + header + "https://localhost:8080/api/users"},
		{"a quote in the path", []string{"-tls-cert", filepath.Join(quoted, "test-only-self-signed-cert.pem"), "-tls-key", filepath.Join(quoted, "test-only-self-signed-key.pem")},
			"curl --cacert '" + strings.ReplaceAll(filepath.Join(quoted, "test-only-self-signed-cert.pem"), "'", `'\''`) + "' " + header + "https://localhost:8080/api/users"},
		{"signed by a CA", []string{"-tls-cert", "testdata/test-only-ca-signed-cert.pem", "-tls-key", "testdata/test-only-ca-signed-key.pem"},
			"curl " + header + "https://localhost:8080/api/users"},
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

// Benchmarks of HTTPS beside plain HTTP, whose figures bench/README.md gives ("HTTPS beside HTTP"):
// the handler behind httptest's server, with the TLS settings parseConfig builds from -tls-cert
// and -tls-key. Client and server run in this one process, so each figure holds the work of both.

// BenchmarkTLSHandshake opens a connection and completes a full handshake with an ECDSA P-256
// certificate, beside a bare TCP connection for scale:
//
//	go test -run '^$' -bench TLSHandshake -benchtime 3s
func BenchmarkTLSHandshake(b *testing.B) {
	cfg, err := parseConfig([]string{"users", "-tls-cert", "testdata/test-only-self-signed-cert.pem", "-tls-key", "testdata/test-only-self-signed-key.pem"}, testEnv, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	server := httptest.NewUnstartedServer(newTestServer(b))
	server.Config.ErrorLog = log.New(io.Discard, "", 0) // else it logs each bare TCP connection, closed before a handshake
	server.TLS = cfg.tls
	server.StartTLS()
	defer server.Close()
	addr := server.Listener.Addr().String()
	roots := x509.NewCertPool()
	roots.AddCert(server.Certificate())
	dialTLS := func(version uint16) func() (net.Conn, error) {
		return func() (net.Conn, error) {
			return tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, MinVersion: version, MaxVersion: version})
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
	cfg, err := parseConfig([]string{"users", "-tls-cert", "testdata/test-only-self-signed-cert.pem", "-tls-key", "testdata/test-only-self-signed-key.pem"}, testEnv, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	ts := newTestServer(b)
	for i := 1; i <= 1000; i++ {
		ts.create(b, fmt.Sprintf("User %d", i), fmt.Sprintf("user%d@bench.test", i))
	}
	plain := httptest.NewServer(ts)
	defer plain.Close()
	https := httptest.NewUnstartedServer(ts)
	https.TLS = cfg.tls.Clone()
	https.TLS.NextProtos = []string{"h2", "http/1.1"} // as ServeTLS offers them
	https.EnableHTTP2 = true
	https.StartTLS()
	defer https.Close()
	roots := x509.NewCertPool()
	roots.AddCert(https.Certificate())
	client := func(overTLS bool, protocol string) *http.Client {
		transport := &http.Transport{MaxIdleConnsPerHost: 64}
		if overTLS {
			transport.TLSClientConfig = &tls.Config{RootCAs: roots, NextProtos: []string{protocol}}
			transport.ForceAttemptHTTP2 = protocol == "h2"
		}
		b.Cleanup(transport.CloseIdleConnections)
		return &http.Client{Transport: transport}
	}
	for _, bb := range []struct {
		name, url string
		client    *http.Client
	}{
		{"HTTP1.1", plain.URL + "/api/users/500", client(false, "")},
		{"HTTPS HTTP1.1", https.URL + "/api/users/500", client(true, "http/1.1")},
		{"HTTPS HTTP2", https.URL + "/api/users/500", client(true, "h2")},
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
