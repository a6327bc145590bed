package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// HTTPS (README, "HTTPS"). RFC 6750 §5.3: clients MUST use TLS with bearer tokens, since a token
// read on the path is a token anyone can replay. With -tls-cert and -tls-key the server speaks
// only HTTPS; net/http's ServeTLS offers HTTP/2 and HTTP/1.1 by ALPN with no other code.

// serverTLS is what -tls-cert and -tls-key give the server, read and checked before it listens.
type serverTLS struct {
	config     *tls.Config
	certFile   string // absolute, so that the token notice's curl line works from any folder
	selfSigned bool   // no CA vouches for the certificate: a client must be handed the file itself
}

// servesHTTPS reports whether the flags ask for HTTPS (parseConfig has checked they come in pairs).
func (c config) servesHTTPS() bool { return c.tlsCert != "" }

// loadServerTLS reads the certificate (chain) and private key, both PEM. A file that cannot be
// read, that holds no PEM block of its kind, a certificate that cannot be parsed, or a key that is
// not the certificate's is an error naming the flag and the file, and never quoting the key.
func loadServerTLS(certFile, keyFile string) (*serverTLS, error) {
	certPEM, leafDER, err := readPEMFile("-tls-cert", certFile, isCertificateBlock, "-----BEGIN CERTIFICATE-----")
	if err != nil {
		return nil, err
	}
	keyPEM, _, err := readPEMFile("-tls-key", keyFile, isPrivateKeyBlock, "-----BEGIN PRIVATE KEY-----")
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(leafDER)
	if err != nil {
		return nil, fmt.Errorf("-tls-cert %s: the certificate cannot be parsed: %w", certFile, err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM) // checks that the key matches the certificate
	if err != nil {
		return nil, fmt.Errorf("-tls-key %s is not the private key of the certificate in -tls-cert %s (%w)", keyFile, certFile, err)
	}
	absolute, err := filepath.Abs(certFile)
	if err != nil {
		return nil, fmt.Errorf("-tls-cert %s: %w", certFile, err)
	}
	return &serverTLS{
		// TLS 1.0 and 1.1 are deprecated (RFC 8996); Go's defaults do the rest: its cipher suites,
		// and for ServeTLS, "h2" and "http/1.1" offered by ALPN.
		config:     &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		certFile:   absolute,
		selfSigned: bytes.Equal(leaf.RawIssuer, leaf.RawSubject) && leaf.CheckSignature(leaf.SignatureAlgorithm, leaf.RawTBSCertificate, leaf.Signature) == nil,
	}, nil
}

// isCertificateBlock and isPrivateKeyBlock tell the PEM blocks apart as crypto/tls does: "EC
// PRIVATE KEY" and "RSA PRIVATE KEY" are private keys too.
func isCertificateBlock(blockType string) bool { return blockType == "CERTIFICATE" }
func isPrivateKeyBlock(blockType string) bool {
	return blockType == "PRIVATE KEY" || strings.HasSuffix(blockType, " PRIVATE KEY")
}

// readPEMFile reads the file a flag names and returns it with the DER bytes of its first block of
// the kind wanted. crypto/tls skips blocks of other kinds (openssl's EC PARAMETERS, say), but a
// file with none, such as the key given as -tls-cert, is refused here by the flag's name.
func readPEMFile(flagName, file string, wanted func(blockType string) bool, beginning string) (data, der []byte, err error) {
	data, err = os.ReadFile(file)
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		err = pathErr.Err // the flag and the file are named below, once
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s cannot be read: %w", flagName, file, err)
	}
	for rest := data; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return nil, nil, fmt.Errorf("%s %s is not the PEM file it needs: it has no block beginning %s", flagName, file, beginning)
		}
		if wanted(block.Type) {
			return data, block.Bytes, nil
		}
	}
}

// serve serves HTTPS when the server has a TLS configuration, and plain HTTP otherwise. ServeTLS
// takes the certificate from TLSConfig when given no file names.
func serve(server *http.Server, listener net.Listener) error {
	if server.TLSConfig != nil {
		return server.ServeTLS(listener, "", "")
	}
	return server.Serve(listener)
}

// serverURL is where a client on this machine reaches the server: https when it serves TLS, and
// the address it bound, with localhost for one that binds every interface (-addr :8080).
func serverURL(https *serverTLS, addr net.Addr) string {
	scheme := "http"
	if https != nil {
		scheme = "https"
	}
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// curlCommand is the token notice's curl line, which works as pasted: a self-signed certificate is
// one no CA that curl knows vouches for, so the line hands it to curl with --cacert. (Never -k,
// which would send the token to whoever answers: README, "HTTPS".)
func curlCommand(https *serverTLS, baseURL, token string) string {
	trust := ""
	if https != nil && https.selfSigned {
		trust = "--cacert " + shellQuote(https.certFile) + " "
	}
	return fmt.Sprintf("curl %s-H 'Authorization: Bearer %s' %s/api/users", trust, token, baseURL)
}

// shellQuote quotes a file name for a POSIX shell: inside single quotes only ' itself needs care.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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
