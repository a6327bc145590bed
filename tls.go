package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"strings"
)

// HTTPS (README, "HTTPS"). RFC 6750 §5.3: clients MUST use TLS with bearer tokens, since a token
// read on the way is a token anyone can replay. With -tls-cert and -tls-key the server speaks only
// HTTPS; net/http's ServeTLS offers HTTP/2 and HTTP/1.1 by ALPN with no other code.

// loadTLSConfig reads the certificate (chain) and its private key, both PEM, before the server
// listens. A file that cannot be read is named by its flag; files that do not make a pair (the key
// of another certificate, a file with no PEM block of its kind) are named both.
func loadTLSConfig(certFile, keyFile string) (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	var unreadable *fs.PathError
	switch {
	case errors.As(err, &unreadable) && unreadable.Path == certFile:
		return nil, fmt.Errorf("-tls-cert %s cannot be read: %w", certFile, unreadable.Err)
	case errors.As(err, &unreadable):
		return nil, fmt.Errorf("-tls-key %s cannot be read: %w", keyFile, unreadable.Err)
	case err != nil:
		return nil, fmt.Errorf("-tls-cert %s and -tls-key %s are not a certificate and its private key (%w)", certFile, keyFile, err)
	}
	// TLS 1.0 and 1.1 are deprecated (RFC 8996); Go's defaults do the rest.
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// serve serves HTTPS when the server has a TLS configuration, and plain HTTP otherwise.
func serve(server *http.Server, listener net.Listener) error {
	if server.TLSConfig != nil {
		return server.ServeTLS(listener, "", "") // the certificate is in TLSConfig
	}
	return server.Serve(listener)
}

// serverURL is where a client on this machine reaches the server: the address it bound, with
// localhost for one that binds every interface (-addr :8080).
func serverURL(scheme string, addr net.Addr) string {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// curlCommand is the token notice's curl line, which works as pasted. No CA that curl knows vouches
// for a self-signed certificate, so the line hands curl the certificate itself with --cacert, by
// its absolute path (never -k, which would send the token to whoever answers: README, "HTTPS").
func curlCommand(cfg *config, baseURL, token string) string {
	trust := ""
	if cfg.tls != nil && isSelfSigned(cfg.tls.Certificates[0]) {
		if certFile, err := filepath.Abs(cfg.tlsCert); err == nil {
			trust = "--cacert '" + strings.ReplaceAll(certFile, "'", `'\''`) + "' " // quoted for a POSIX shell
		}
	}
	return fmt.Sprintf("curl %s-H 'Authorization: Bearer %s' %s/api/users", trust, token, baseURL)
}

// isSelfSigned reports whether a certificate names itself as its issuer.
func isSelfSigned(pair tls.Certificate) bool {
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	return err == nil && bytes.Equal(leaf.RawIssuer, leaf.RawSubject)
}

// isLoopback reports whether the server listens on loopback only (127.0.0.0/8 or ::1; -addr
// localhost binds one of them), where no other machine can read what clients send.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// clearTextWarning is logged once at start by a server without TLS on an address other machines
// can reach.
const clearTextWarning = "plain HTTP on an address that is not loopback: bearer tokens travel in clear text, " +
	"readable by anyone on the path (RFC 6750 §5.3 requires TLS); serve HTTPS with -tls-cert FILE -tls-key FILE, " +
	"or listen on loopback behind a proxy that terminates TLS"
