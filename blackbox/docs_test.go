package blackbox

import (
	"bytes"
	"crypto/tls"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The README, docs/walkthrough.md and docs/https.md show real exchanges: a curl command and the answer the service
// gave it, headers and body, only the Date header left out. This test sends each command again, in
// the order the page gives them, to the program started as the page starts it, and requires the
// very same answer (but the prefix of X-Request-Id, which each server chooses at random). After a
// change,
//
//	go test -run TestDocsShowWhatTheServiceSends -update-docs
//
// run in this folder, writes the answers the service now sends into the pages.
var updateDocs = flag.Bool("update-docs", false, "write the service's answers into README.md, docs/walkthrough.md and docs/https.md")

// docExchange is one command of a page and the answer pasted under it.
type docExchange struct {
	command string
	answer  []string // the lines under the command, up to the next command or the end of the block
	start   int      // the index of the first answer line in the page
}

func TestDocsShowWhatTheServiceSends(t *testing.T) {
	for _, page := range []string{"README.md", "docs/walkthrough.md", "docs/https.md"} {
		t.Run(filepath.Base(page), func(t *testing.T) { // a subtest's name takes no "/"
			file := filepath.Join("..", page) // the pages are the module's, one folder up
			content, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(content), "\n")
			exchanges := curlExchanges(lines)
			if len(exchanges) == 0 {
				t.Fatalf("%s shows no curl command", page)
			}
			servers := &docServers{t: t}
			answers := make([][]string, len(exchanges))
			prefix := pageRequestIDPrefix(lines)
			for i, e := range exchanges { // in the page's order: each builds on the ones before
				answers[i] = withRequestIDPrefix(sendDocCommand(t, servers, e.command), prefix)
			}
			if *updateDocs {
				for i := len(exchanges) - 1; i >= 0; i-- { // from the end, so that the indexes hold
					e := exchanges[i]
					lines = slices.Replace(lines, e.start, e.start+len(e.answer), answers[i]...)
				}
				if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for i, e := range exchanges {
				if !slices.Equal(answers[i], e.answer) {
					t.Errorf("%s shows for\n  %s\nthe answer\n%s\nbut the service sends\n%s",
						page, e.command, strings.Join(e.answer, "\n"), strings.Join(answers[i], "\n"))
				}
			}
		})
	}
}

// docServers are the servers a page talks to, each the built program started as the pages start
// it, USERS_TOKENS="s3cr3t-w:write,s3cr3t-r:read" go run . -sample-data, and with -tls-cert and
// -tls-key (selfSigned) for https:// URLs. Each starts at the page's first command
// that needs it.
type docServers struct {
	t           *testing.T
	plain, tls  *program
	plainClient *http.Client
	tlsClient   *http.Client
}

// docsTokens is the USERS_TOKENS the pages start the server with.
const docsTokens = "s3cr3t-w:write,s3cr3t-r:read"

// plainServer returns the URL of the plain HTTP server, and a client for it.
func (s *docServers) plainServer() (string, *http.Client) {
	if s.plain == nil {
		s.plain = start(s.t, docsTokens, "-sample-data")
		transport := &http.Transport{}
		s.t.Cleanup(transport.CloseIdleConnections)
		s.plainClient = &http.Client{Transport: transport}
	}
	return s.plain.url, s.plainClient
}

// tlsServer returns the URL of the HTTPS server, and a client that trusts its certificate, as
// curl --cacert cert.pem does.
func (s *docServers) tlsServer() (string, *http.Client) {
	if s.tls == nil {
		certificate := selfSigned(s.t)
		s.tls = start(s.t, docsTokens, append(certificate.flags(), "-sample-data")...)
		transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certificate.roots}, ForceAttemptHTTP2: true}
		s.t.Cleanup(transport.CloseIdleConnections)
		s.tlsClient = &http.Client{Transport: transport}
	}
	return s.tls.url, s.tlsClient
}

// curlExchanges finds the curl commands of a page's console blocks and the answer under each.
func curlExchanges(lines []string) []docExchange {
	var exchanges []docExchange
	inConsole := false
	for i, line := range lines {
		switch {
		case line == "```console":
			inConsole = true
		case strings.HasPrefix(line, "```"):
			inConsole = false
		case inConsole && strings.HasPrefix(line, "$ ") && strings.Contains(line, "curl "):
			e := docExchange{command: strings.TrimPrefix(line, "$ "), start: i + 1}
			for j := i + 1; j < len(lines) && !strings.HasPrefix(lines[j], "$ ") && !strings.HasPrefix(lines[j], "```"); j++ {
				e.answer = append(e.answer, lines[j])
			}
			for len(e.answer) > 0 && e.answer[len(e.answer)-1] == "" { // the blank line before the next command
				e.answer = e.answer[:len(e.answer)-1]
			}
			exchanges = append(exchanges, e)
		}
	}
	return exchanges
}

// sendDocCommand sends what a page's curl command sends, to the plain server, or for an https://
// URL to the HTTPS one, and shows the answer as curl does: with -i the status and the headers but
// Date, then the body.
func sendDocCommand(t *testing.T, servers *docServers, command string) []string {
	t.Helper()
	words := shellWords(command)
	var body io.Reader
	if len(words) > 4 && words[0] == "head" && words[1] == "-c" && words[3] == "/dev/zero" && words[4] == "|" {
		size, _ := strconv.Atoi(words[2])
		body, words = bytes.NewReader(make([]byte, size)), words[5:] // what --data-binary @- reads
	}
	if words[0] != "curl" {
		t.Fatalf("not a curl command: %s", command)
	}
	var client *http.Client
	method, target, header, showHeaders := "", "", http.Header{}, false
	for i := 1; i < len(words); i++ {
		switch words[i] {
		case "-i":
			showHeaders = true
		case "--cacert":
			i++ // the test's server has a certificate of its own, which its client trusts
		case "-X":
			i++
			method = words[i]
		case "-H":
			i++
			name, value, _ := strings.Cut(words[i], ":")
			header.Add(name, strings.TrimSpace(value))
		case "-d", "--data-binary":
			i++
			if words[i] != "@-" {
				body = strings.NewReader(words[i])
			}
			if header.Get("Content-Type") == "" {
				header.Set("Content-Type", "application/x-www-form-urlencoded") // as curl -d does
			}
		default:
			var url string
			if path, ok := strings.CutPrefix(words[i], "http://localhost:8080/"); ok {
				url, client = servers.plainServer()
				target = url + "/" + path
			} else if path, ok := strings.CutPrefix(words[i], "https://localhost:8080/"); ok {
				url, client = servers.tlsServer()
				target = url + "/" + path
			} else {
				t.Fatalf("%s: cannot send the word %q", command, words[i])
			}
		}
	}
	if method == "" {
		method = "GET"
		if body != nil {
			method = "POST"
		}
	}
	r, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range header {
		r.Header[name] = values
	}
	resp, err := client.Transport.RoundTrip(r) // as curl does, without following a redirect
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if !showHeaders {
		return []string{string(answer)}
	}
	shown := []string{resp.Proto + " " + resp.Status}
	names := make([]string, 0, len(resp.Header))
	for name := range resp.Header {
		if name != "Date" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		for _, value := range resp.Header[name] {
			shown = append(shown, name+": "+value)
		}
	}
	if resp.Close {
		shown = append(shown, "Connection: close") // net/http writes it after the others
	}
	if len(answer) > 0 {
		shown = append(shown, "", string(answer))
	}
	return shown
}

// shellWords splits a command line as the shell does, for the quoting the pages use.
func shellWords(line string) []string {
	var words []string
	var word strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, word.String()), false
				word.Reset()
			}
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			word.WriteString(line[i+1 : i+1+end])
			i, inWord = i+1+end, true
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}

// docRequestID is an X-Request-Id the service made: its random prefix, and its counter.
var docRequestID = regexp.MustCompile(`^(X-Request-Id: )([0-9a-f]+)-(\d+)$`)

// withRequestIDPrefix returns the lines of an answer with the prefix of the page's request ids:
// each server chooses its own at random, and the counter after it is what the page shows.
func withRequestIDPrefix(lines []string, prefix string) []string {
	out := slices.Clone(lines)
	for i, line := range out {
		out[i] = docRequestID.ReplaceAllString(line, "${1}"+prefix+"-${3}")
	}
	return out
}

// pageRequestIDPrefix returns the prefix of the first request id a page shows.
func pageRequestIDPrefix(lines []string) string {
	for _, line := range lines {
		if m := docRequestID.FindStringSubmatch(line); m != nil {
			return m[2]
		}
	}
	return ""
}
