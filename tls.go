package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// HTTPS (README, "HTTPS"). RFC 6750 §5.3: clients MUST use TLS with bearer tokens, since a token
// read on the way is a token anyone can replay. With -tls-cert and -tls-key the server speaks only
// HTTPS; net/http's ServeTLS offers HTTP/2 and HTTP/1.1 by ALPN with no other code.

// loadTLSConfig reads the certificate (chain) and its private key, both PEM, before the server
// listens: nil for plain HTTP when neither flag is given. A file that cannot be read is named by
// its flag; files that do not make a pair (the key of another certificate, a file with no PEM
// block of its kind) are named both.
func loadTLSConfig(certFile, keyFile string) (*tls.Config, error) {
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case keyFile == "":
		return nil, withAdvice(fmt.Errorf("-tls-cert %s without -tls-key", certFile), "HTTPS takes the certificate and its private key: give both")
	case certFile == "":
		return nil, withAdvice(fmt.Errorf("-tls-key %s without -tls-cert", keyFile), "HTTPS takes the certificate and its private key: give both")
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	var unreadable *fs.PathError
	switch {
	case errors.As(err, &unreadable) && unreadable.Path == certFile:
		return nil, fmt.Errorf("-tls-cert %s cannot be read: %w", certFile, unreadable.Err)
	case errors.As(err, &unreadable):
		return nil, fmt.Errorf("-tls-key %s cannot be read: %w", keyFile, unreadable.Err)
	case err != nil:
		return nil, fmt.Errorf("-tls-cert %s and -tls-key %s are not a certificate and its private key: %w", certFile, keyFile, err)
	}
	// TLS 1.0 and 1.1 are deprecated (RFC 8996); Go's defaults do the rest.
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// isSelfSigned reports whether a certificate names itself as its issuer.
func isSelfSigned(pair tls.Certificate) bool {
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	return err == nil && bytes.Equal(leaf.RawIssuer, leaf.RawSubject)
}

// curlTrust is what the token notice's curl line needs to trust the server: for a self-signed
// certificate, which no CA that curl knows vouches for, the certificate itself with --cacert, by
// its absolute path and quoted for a POSIX shell; never -k, which would send the token to whoever
// answers (docs/https.md). It is "" for plain HTTP and for a certificate a CA signed.
func curlTrust(cfg *config) string {
	if cfg.tls == nil || !isSelfSigned(cfg.tls.Certificates[0]) {
		return ""
	}
	certFile, err := filepath.Abs(cfg.tlsCert)
	if err != nil {
		return ""
	}
	return "--cacert '" + strings.ReplaceAll(certFile, "'", `'\''`) + "' "
}
