package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"users/conformance/kit"
)

// The conformance kit (conformance/kit) states the rules of docs/api.md over HTTP, once. These
// tests run every rule of every tier against the service, each rule a subtest
// (go test -run 'KitRule/create/201-location' runs one), and prove that the kit catches a server
// that breaks a rule on purpose, and only that rule.

const kitOrigin = "http://localhost:3000"

// kitConfig is how the kit reaches a server at url: this service's description (users.json), the
// tests' tokens, and the origin the service allows (newKitServer).
func kitConfig(url string) kit.Config {
	return kit.Config{URL: url, Description: kit.UsersDescription(), WriteToken: writeToken, ReadToken: readToken, Origin: kitOrigin}
}

// newKitServer serves handler over a real connection, since a body after HEAD or 304 shows only
// there.
func newKitServer(t *testing.T, handler http.Handler) *httptest.Server {
	t.Helper()
	server := httptest.NewServer(handler)
	t.Cleanup(server.Close)
	return server
}

// The service keeps every rule of the kit: each rule runs on its own, as a subtest, and leaves no
// user behind.
func TestServiceKeepsEveryKitRule(t *testing.T) {
	server := newKitServer(t, newTestServer(t, "-cors-origin", kitOrigin))
	for _, rule := range kit.Rules() {
		t.Run(rule.ID, func(t *testing.T) {
			report, err := kit.Run(context.Background(), kitConfig(server.URL), []kit.Rule{rule})
			if err != nil {
				t.Fatalf("the kit could not run: %v", err)
			}
			for _, r := range report.Results {
				switch r.Status {
				case kit.Failed:
					t.Errorf("%s\n  expected %s\n  got      %s\n  %s", r.Rule.Requirement, r.Expected, r.Got, r.Exchange.Curl())
				case kit.Skipped:
					t.Errorf("skipped: %s", r.Reason)
				}
			}
			if len(report.Leftovers) > 0 {
				t.Errorf("the kit left users behind: %s", strings.Join(report.Leftovers, "; "))
			}
		})
	}
}

// The kit looks only at the users it creates, so the users already on a server, however many,
// change nothing in its results, and are left as they were.
func TestKitLeavesTheUsersItFindsAlone(t *testing.T) {
	ts := newTestServer(t, "-cors-origin", kitOrigin)
	users := 2000
	if testing.Short() {
		users = 100
	}
	for i := 1; i <= users; i++ {
		ts.create(t, fmt.Sprint("User ", i), fmt.Sprintf("user%d@example.com", i))
	}
	before := allUsers(t, ts.store)
	report := runKit(t, ts)
	for _, r := range report.Results {
		if r.Status != kit.Passed {
			t.Errorf("%s: %s %s", r.Rule.ID, r.Got, r.Reason)
		}
	}
	if after := allUsers(t, ts.store); !slices.Equal(after, before) {
		t.Errorf("the kit changed the users it found: %d before the run, %d after it", len(before), len(after))
	}
}

// runKit runs every rule against handler, served over a real connection.
func runKit(t *testing.T, handler http.Handler) *kit.Report {
	t.Helper()
	server := newKitServer(t, handler)
	report, err := kit.Run(context.Background(), kitConfig(server.URL), kit.Rules())
	if err != nil {
		t.Fatalf("the kit could not run: %v", err)
	}
	if len(report.Leftovers) > 0 {
		t.Errorf("the kit left users behind: %s", strings.Join(report.Leftovers, "; "))
	}
	return report
}

// The kit checks any collection its description names. The books copy of the service is every .go
// file of the root as it is, but user.go, which testdata/books/user.go replaces, written by hand for
// books (title, author, no unique field), as README's "Make it yours" says: the copy cannot drift
// from the service. Built and checked with testdata/books/books.json, it keeps every convention
// rule, and the kit reports the rules of the unique field as not declared.
func TestKitChecksABooksCopyOfTheService(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a copy of the service")
	}
	url := startBooksCopy(t)
	file, err := os.Open("testdata/books/books.json")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	books, err := kit.ParseDescription("testdata/books/books.json", file)
	if err != nil {
		t.Fatal(err)
	}
	cfg := kitConfig(url)
	cfg.Description = books
	report, err := kit.Run(context.Background(), cfg, kit.RulesFor(books))
	if err != nil {
		t.Fatalf("the kit could not run: %v", err)
	}
	for _, r := range report.Results {
		switch {
		case r.Rule.Scope != kit.Convention:
			t.Errorf("%s, a rule of this reference only, ran against books", r.Rule.ID)
		case r.Status == kit.Failed:
			t.Errorf("%s: %s\n  expected %s\n  got      %s", r.Rule.ID, r.Rule.Requirement, r.Expected, r.Got)
		case (r.Status == kit.Skipped) != strings.Contains(r.Rule.Keys.String(), "unique"):
			t.Errorf("%s: %s %s; want every rule of the unique field skipped, and every other passed", r.Rule.ID, r.Status, r.Reason)
		case r.Status == kit.Skipped && r.Reason != "not declared (unique)":
			t.Errorf("%s: skipped, %q; want \"not declared (unique)\"", r.Rule.ID, r.Reason)
		}
	}
	if len(report.Leftovers) > 0 {
		t.Errorf("the kit left books behind: %s", strings.Join(report.Leftovers, "; "))
	}
}

// startBooksCopy builds the books copy of the service in a folder of the test's and starts it, as
// test.sh starts the service, on a free port with the tests' tokens and the kit's origin. It
// returns its base URL; the copy stops when the test ends.
func startBooksCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files, _ := filepath.Glob("*.go")
	for _, file := range files {
		if !strings.HasSuffix(file, "_test.go") && file != "user.go" {
			copyFile(t, file, filepath.Join(dir, file))
		}
	}
	copyFile(t, "testdata/books/user.go", filepath.Join(dir, "user.go"))
	copyFile(t, "go.mod", filepath.Join(dir, "go.mod"))
	filepath.WalkDir("web", func(path string, entry fs.DirEntry, err error) error { // the files web.go embeds
		if err == nil && !entry.IsDir() {
			os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755)
			copyFile(t, path, filepath.Join(dir, path))
		}
		return err
	})
	build := exec.Command("go", "build", "-o", "books", ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the books copy does not build: %v\n%s", err, out)
	}
	books := exec.Command(filepath.Join(dir, "books"), "-addr", "127.0.0.1:0", "-cors-origin", kitOrigin)
	books.Env = append(os.Environ(), "USERS_TOKENS="+writeToken+":write,"+readToken+":read")
	log, err := books.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := books.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		books.Process.Kill()
		books.Wait()
	})
	lines := bufio.NewScanner(log)
	listening := regexp.MustCompile(`msg=listening addr=(\S+)`)
	for lines.Scan() { // the start-up log names the address the copy bound, as test.sh reads it
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			go io.Copy(io.Discard, log) // the rest of the log, so that the copy never waits to write it
			return "http://" + m[1]
		}
	}
	t.Fatal("the books copy stopped before it listened")
	return ""
}

// copyFile copies a file of the repository into the books copy.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, data, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// A breakage makes the service break a rule on purpose, as a learner's server might.
type breakage struct {
	name  string
	wrap  func(http.Handler) http.Handler
	fails []string // exactly the rules the kit must find broken; every other passes
	skips []string // the rules it cannot check on such a server
}

// A server that breaks one rule on purpose fails exactly the rules that depend on it, and every
// other passes: the kit catches what a learner's server gets wrong, and blames nothing else.
func TestKitFindsWhatAServerBreaks(t *testing.T) {
	if testing.Short() {
		t.Skip("the kit against every broken server takes seconds")
	}
	for _, b := range breakages() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			report := runKit(t, b.wrap(newTestServer(t, "-cors-origin", kitOrigin)))
			var failed, skipped []string
			for _, r := range report.Results {
				switch r.Status {
				case kit.Failed:
					failed = append(failed, r.Rule.ID)
				case kit.Skipped:
					skipped = append(skipped, r.Rule.ID)
				}
			}
			if !slices.Equal(failed, b.fails) {
				t.Errorf("failed: %q\nwant:   %q", failed, b.fails)
			}
			if !slices.Equal(skipped, b.skips) {
				t.Errorf("skipped: %q\nwant:    %q", skipped, b.skips)
			}
		})
	}
}

// breakages are the broken servers the kit must catch, each the service behind one small
// middleware, with the rules it must fail, in the kit's order.
func breakages() []breakage {
	userPath := regexp.MustCompile(`^/api/users/[0-9]+$`)
	total := regexp.MustCompile(`"total":([0-9]+)`)
	nextPage := regexp.MustCompile(`(<[^>]*[?&]page=)([0-9]+)([^>]*>; rel="next")`)
	return []breakage{
		{
			name: "POST is 200, not 201",
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				if r.Method == http.MethodPost && a.Code == http.StatusCreated {
					a.Code = http.StatusOK
				}
			}),
			fails: []string{"create/201"},
		},
		{
			name:  "no Location",
			wrap:  rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) { a.Header().Del("Location") }),
			fails: []string{"create/201-location"},
			skips: []string{"create/location-reads-back"},
		},
		{
			name: "a 201 with an ETag of its own", // so a client that reads its own write finds another tag
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				if a.Code == http.StatusCreated {
					a.Header().Set("ETag", `"created"`)
				}
			}),
			fails: []string{"create/location-reads-back", "create/201-etag"},
		},
		{
			name: "total off by one",
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				if r.Method == http.MethodGet && r.URL.Path == "/api/users" && a.Code == http.StatusOK {
					body := total.ReplaceAllStringFunc(a.Body.String(), func(member string) string {
						n, _ := strconv.Atoi(total.FindStringSubmatch(member)[1])
						return fmt.Sprintf(`"total":%d`, n+1)
					})
					a.Body.Reset()
					a.Body.WriteString(body)
				}
			}),
			fails: []string{"list/total-is-length", "list/empty-is-an-array", "list/pages-of-the-whole-list", "list/page-total-counts-matches"},
		},
		{
			name: "If-Match ignored",
			wrap: withoutHeader("If-Match"),
			fails: []string{"precondition/if-match-412", "precondition/if-match-strong", "precondition/if-match-on-reads",
				"precondition/if-match-on-post", "precondition/if-match-on-patch", "precondition/if-match-before-if-none-match",
				"precondition/412-before-409", "precondition/non-tag-matches-nothing"},
		},
		{
			name: "If-None-Match ignored",
			wrap: withoutHeader("If-None-Match"),
			// The rules about a 304's headers and body cannot run without a 304: they fail too,
			// saying so, since a rule that could not run never passes quietly.
			fails: []string{"list/304-carries-link", "precondition/list-over-several-lines", "precondition/if-none-match-304",
				"precondition/if-none-match-weak", "precondition/if-none-match-star-304", "precondition/304-no-body",
				"precondition/304-headers", "precondition/if-none-match-on-writes-412", "precondition/if-none-match-on-post-412",
				"precondition/if-none-match-on-patch-412", "precondition/if-match-before-if-none-match", "precondition/non-tag-matches-nothing"},
		},
		{
			name: "error body says message", // {"message": ...}, not {"error": ...}
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				if a.Code >= 400 {
					body := strings.Replace(a.Body.String(), `{"error":`, `{"message":`, 1)
					a.Body.Reset()
					a.Body.WriteString(body)
				}
			}),
			fails: []string{"errors/error-message", "errors/error-body-of-every-status"},
		},
		{
			name: "404 and 405 in text plain", // as ServeMux writes them
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				if a.Code == http.StatusNotFound || a.Code == http.StatusMethodNotAllowed {
					a.Header().Set("Content-Type", "text/plain; charset=utf-8")
					a.Body.Reset()
					a.Body.WriteString(strings.ToLower(http.StatusText(a.Code)) + "\n")
				}
			}),
			fails: []string{"reachable/content-type-json", "errors/error-body", "errors/error-message", "errors/error-body-of-every-status"},
		},
		{
			name: "405 without Allow",
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				if a.Code == http.StatusMethodNotAllowed {
					a.Header().Del("Allow")
				}
			}),
			fails: []string{"errors/405-allow", "errors/unknown-method-405", "errors/allow-is-the-routes-methods"},
		},
		{
			name: "401 without WWW-Authenticate",
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				if a.Code == http.StatusUnauthorized {
					a.Header().Del("WWW-Authenticate")
				}
			}),
			fails: []string{"auth/401-www-authenticate", "auth/invalid-token-error", "auth/challenge-realm", "auth/challenges-exact"},
		},
		{
			name: "Bearer case-sensitive",
			wrap: func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " "); strings.EqualFold(scheme, "Bearer") && scheme != "Bearer" {
						r.Header.Set("Authorization", "Bearer of-the-wrong-case")
					}
					next.ServeHTTP(w, r)
				})
			},
			fails: []string{"auth/scheme-any-case"},
		},
		{
			name: "a missing user is 200",
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				if a.Code == http.StatusNotFound && userPath.MatchString(r.URL.Path) {
					a.Code = http.StatusOK
				}
			}),
			fails: []string{"read/missing-404", "delete/again-404", "precondition/missing-item-404",
				"reachable/options-unknown-404", "read/non-canonical-id-404", "replace/missing-404", "patch/missing-404"},
		},
		{
			name: "unknown methods are 501",
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				known := map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true}
				if a.Code == http.StatusMethodNotAllowed && !known[r.Method] {
					a.Code = http.StatusNotImplemented
					a.Header().Del("Allow")
				}
			}),
			fails: []string{"errors/unknown-method-405"},
		},
		{
			name: "PUT with an ETag",
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				if r.Method == http.MethodPut && a.Code == http.StatusOK {
					a.Header().Set("ETag", `"put"`)
				}
			}),
			fails: []string{"replace/no-etag"},
		},
		{
			name: "preflight of an unknown path 404",
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" && r.URL.Path != "/api/users" && !userPath.MatchString(r.URL.Path) {
					a.Code = http.StatusNotFound
				}
			}),
			fails: []string{"cors/preflight-on-every-api-path"},
		},
		{
			name:  "415 without Accept-Encoding",
			wrap:  rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) { a.Header().Del("Accept-Encoding") }),
			fails: []string{"errors/content-encoding-accept-encoding", "errors/accept-encoding-identity"},
		},
		{
			name: "a query echoed",
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				if a.Code == http.StatusBadRequest && r.URL.RawQuery != "" {
					body := strings.Replace(a.Body.String(), `{"error":"`, `{"error":"`+strings.ReplaceAll(r.URL.RawQuery, `"`, "")+`: `, 1)
					a.Body.Reset()
					a.Body.WriteString(body)
				}
			}),
			fails: []string{"auth/token-not-echoed", "auth/query-value-not-echoed"},
		},
		{
			name: "routing before permission",
			wrap: func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("Authorization") == "Bearer "+readToken && r.Method != "GET" && r.Method != "HEAD" && r.Method != "OPTIONS" &&
						r.URL.Path != "/api/users" && !userPath.MatchString(r.URL.Path) {
						w.Header().Set("Content-Type", "application/json")
						w.WriteHeader(http.StatusNotFound)
						w.Write([]byte(`{"error":"not found"}`))
						return
					}
					next.ServeHTTP(w, r)
				})
			},
			fails: []string{"errors/permission-before-routing"},
		},
		{
			name: "a query on a user is 400",
			wrap: func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if userPath.MatchString(r.URL.Path) && r.URL.RawQuery != "" && r.Header.Get("Authorization") != "" && r.Method != "OPTIONS" {
						w.Header().Set("Content-Type", "application/json")
						w.WriteHeader(http.StatusBadRequest)
						w.Write([]byte(`{"error":"no query here"}`))
						return
					}
					next.ServeHTTP(w, r)
				})
			},
			fails: []string{"errors/query-ignored"},
		},
		{
			name: "next skips a page", // a client that follows next misses the items of the page between
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				if link := a.Header().Get("Link"); link != "" {
					a.Header().Set("Link", nextPage.ReplaceAllStringFunc(link, func(next string) string {
						m := nextPage.FindStringSubmatch(next)
						n, _ := strconv.Atoi(m[2])
						return fmt.Sprintf("%s%d%s", m[1], n+1, m[3])
					}))
				}
			}),
			fails: []string{"list/link-relations", "list/link-next-visits-each-once"},
		},
		{
			name:  "HEAD with a body",
			wrap:  headWithABody,
			fails: []string{"read/head-no-body"},
		},
	}
}

// rewriteAnswers lets edit change each answer of the service before it is sent.
func rewriteAnswers(edit func(r *http.Request, answer *httptest.ResponseRecorder)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			answer := httptest.NewRecorder()
			next.ServeHTTP(answer, r)
			edit(r, answer)
			for name, values := range answer.Header() {
				for _, value := range values {
					w.Header().Add(name, value)
				}
			}
			if w.Header().Get("Content-Length") != "" {
				w.Header().Set("Content-Length", strconv.Itoa(answer.Body.Len()))
			}
			w.WriteHeader(answer.Code)
			w.Write(answer.Body.Bytes())
		})
	}
}

// withoutHeader drops a request header before the service sees it.
func withoutHeader(name string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Del(name)
			next.ServeHTTP(w, r)
		})
	}
}

// headWithABody answers HEAD as GET, body and all, writing to the connection itself: net/http would
// drop the body, as the RFC says.
func headWithABody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		answer := httptest.NewRecorder()
		next.ServeHTTP(answer, r)
		conn, out, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		fmt.Fprintf(out, "HTTP/1.1 %d %s\r\n", answer.Code, http.StatusText(answer.Code))
		answer.Header().Write(out)
		fmt.Fprintf(out, "Connection: close\r\n\r\n%s", answer.Body)
		out.Flush()
	})
}
