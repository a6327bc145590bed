package kit

import (
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// received is a request as the server saw it.
type received struct {
	method, path string
	header       http.Header
	body         string
	chunked      bool
}

// curlCases are requests of every awkward kind a failure may have to show.
func curlCases() []struct {
	name     string
	exchange Exchange
} {
	jsonHeader := http.Header{"Authorization": {"Bearer $USERS_WRITE_TOKEN"}, "Content-Type": {"application/json"}}
	return []struct {
		name     string
		exchange Exchange
	}{
		{"a GET with a token and a quoted tag", Exchange{Method: "GET", URL: "/api/users/7",
			Header: http.Header{"Authorization": {"Bearer $USERS_READ_TOKEN"}, "If-None-Match": {`"kit a", W/"b$c"`}}}},
		{"a POST whose body has a quote", Exchange{Method: "POST", URL: "/api/users", Header: jsonHeader,
			Body: []byte(`{"name":"Kit O'Hara","email":"kit@example.com"}`)}},
		{"a PUT with an empty header and two lines of another", Exchange{Method: "PUT", URL: "/api/users/7",
			Header: http.Header{"X-Request-Id": {""}, "If-Match": {`"a"`, `"b"`}, "Content-Type": {"application/json"}}, Body: []byte(`{}`)}},
		{"a POST without Content-Type", Exchange{Method: "POST", URL: "/api/users", Body: []byte(`{"name":"Kit"}`)}},
		{"a chunked body of 1 MiB and one byte", Exchange{Method: "POST", URL: "/api/users", Header: jsonHeader, Chunked: true,
			Body: []byte(padded(`{"name":"Kit 100%","email":"kit@example.com"}`, maxBodyBytes+1))}},
		{"bytes that do not print", Exchange{Method: "PATCH", URL: "/api/users/7", Header: jsonHeader,
			Body: []byte("\uFEFF{\"name\":\"Kit\xff\\u0007\"}\n")}},
		{"HEAD", Exchange{Method: "HEAD", URL: "/api/users", Header: http.Header{"Authorization": {"Bearer $USERS_READ_TOKEN"}}}},
		{"a path with dot segments and a query", Exchange{Method: "GET", URL: "/api/./users/../users?q=a%20b&sort=-name"}},
		{"DELETE with a body", Exchange{Method: "DELETE", URL: "/api/users/7", Body: []byte("kit"), Header: http.Header{"Content-Type": {"text/plain"}}}},
		{"a token's prefix and extension, and a token in the query", Exchange{Method: "GET", URL: "/api/users?access_token=$USERS_WRITE_TOKEN",
			Header: http.Header{"Authorization": {"Bearer ${USERS_WRITE_TOKEN%?}"}, "X-Kit": {"${USERS_READ_TOKEN}x $5"}}}},
	}
}

// Each failure ends with a curl line; run in a shell where the tokens are set, it sends the same
// request again.
func TestCurlLineSendsTheRequestAgain(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	got := make(chan received, 1)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{r.Method, r.RequestURI, r.Header, string(body), slices.Contains(r.TransferEncoding, "chunked")}
	}))
	defer server.Close()
	for _, tt := range curlCases() {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.exchange
			e.URL = server.URL + e.URL
			cmd := exec.Command("bash", "-c", e.Curl())
			cmd.Env = append(os.Environ(), "USERS_WRITE_TOKEN=w-secret", "USERS_READ_TOKEN=r-secret")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s\n%v: %s", e.Curl(), err, out)
			}
			r := <-got
			tokens := tokenReplacer("w-secret", "r-secret")
			if r.method != e.Method || r.path != tokens.Replace(strings.TrimPrefix(e.URL, server.URL)) || r.body != string(e.Body) || r.chunked != e.Chunked {
				t.Errorf("%s\nsent %s %s, chunked %v, body %q", e.Curl(), r.method, r.path, r.chunked, excerpt([]byte(r.body)))
			}
			for name, values := range e.Header {
				want := tokens.Replace(strings.Join(values, "|"))
				if got := strings.Join(r.header.Values(name), "|"); got != want {
					t.Errorf("%s\n%s: %q, want %q", e.Curl(), name, got, want)
				}
			}
			if e.Header.Get("Content-Type") == "" && r.header.Get("Content-Type") != "" {
				t.Errorf("%s\nsent Content-Type %q, which the request had not", e.Curl(), r.header.Get("Content-Type"))
			}
		})
	}
}

// Without curl to run them, the lines still name no token and quote what the shell would change.
func TestCurlLineKeepsTokensInTheirVariables(t *testing.T) {
	for _, tt := range curlCases() {
		line := tt.exchange.Curl()
		if strings.Contains(line, "secret") || strings.Contains(line, "'Authorization: Bearer $") {
			t.Errorf("%s: %s", tt.name, line)
		}
	}
	head := Exchange{Method: "HEAD", URL: "http://127.0.0.1/api/users", Header: http.Header{"Authorization": {"Bearer $USERS_READ_TOKEN"}}}
	if got, want := head.Curl(), `curl -I -H "Authorization: Bearer $USERS_READ_TOKEN" 'http://127.0.0.1/api/users'`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	big := Exchange{Method: "POST", URL: "http://127.0.0.1/api/users", Body: []byte(padded(`{}`, maxBodyBytes+1))}
	if line := big.Curl(); len(line) > 200 || !strings.Contains(line, "%1048575s") {
		t.Errorf("1 MiB of padding is not written as printf's padding: %.300s", line)
	}
}

// A run that trusts a -cacert file says so in its curl lines, which then reach the server on its
// own certificate as they are pasted.
func TestCurlLineTrustsTheCACertOfTheRun(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	got := make(chan string, 1)
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.RequestURI }))
	defer server.Close()
	certFile := filepath.Join(t.TempDir(), "server's cert.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	e := Exchange{Method: "GET", URL: server.URL + "/api/users", CACert: certFile}
	if out, err := exec.Command("sh", "-c", e.Curl()).CombinedOutput(); err != nil {
		t.Fatalf("%s\n%v: %s", e.Curl(), err, out)
	}
	if path := <-got; path != "/api/users" {
		t.Errorf("%s\nsent %s", e.Curl(), path)
	}
}
