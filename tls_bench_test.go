package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

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
