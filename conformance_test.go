package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"users/conformance/kit"
)

// The conformance kit (conformance/kit) states the rules of docs/api.md over HTTP, once. These
// tests run every rule of every tier against the service, and prove that the kit catches a server
// that breaks a rule on purpose, and only that rule.

const (
	kitWriteToken = "kit-write-token"
	kitReadToken  = "kit-read-token"
	kitOrigin     = "http://localhost:3000"
)

// serviceForKit is the whole service on a fresh, empty store, with a write and a read token and
// CORS on for the kit's origin: the one place these tests build it.
func serviceForKit(t *testing.T) http.Handler {
	t.Helper()
	tokens, err := parseTokens(kitWriteToken + ":write," + kitReadToken + ":read")
	if err != nil {
		t.Fatal(err)
	}
	cors, err := parseCORSOrigins(kitOrigin)
	if err != nil {
		t.Fatal(err)
	}
	store := newUserStore()
	return newServer(config{cors: cors}, newLogger("text", io.Discard), tokens, store, nil)
}

// runKit serves handler over a real connection (a body after HEAD or 304 shows only there), runs
// every rule against it, and checks that the kit left the users as it found them.
func runKit(t *testing.T, handler http.Handler) *kit.Report {
	t.Helper()
	server := httptest.NewServer(handler)
	defer server.Close()
	list := func() string {
		resp, body := sendTo(t, server.Client(), "GET", server.URL+"/api/users", "", "Authorization", "Bearer "+kitReadToken)
		var users listBody
		if err := json.Unmarshal(body, &users); resp.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("GET /api/users: %d %s", resp.StatusCode, body)
		}
		return fmt.Sprint(users.Data)
	}
	before := list()
	report, err := kit.Run(context.Background(), kit.Config{URL: server.URL, WriteToken: kitWriteToken, ReadToken: kitReadToken,
		Origin: kitOrigin}, kit.Rules())
	if err != nil {
		t.Fatalf("the kit could not run: %v", err)
	}
	if len(report.Leftovers) > 0 {
		t.Errorf("the kit left users behind: %s", strings.Join(report.Leftovers, "; "))
	}
	if after := list(); after != before {
		t.Errorf("the users were\n%.500s\nbefore the run, and are\n%.500s\nafter it", before, after)
	}
	return report
}

func TestServiceMeetsEveryRuleOfTheKit(t *testing.T) {
	wantEveryRuleMet(t, runKit(t, serviceForKit(t)))
}

// The kit looks only at the users it creates, so the users already on a server, however many,
// change nothing in its results, and are left as they were.
func TestKitLeavesTheUsersItFindsAlone(t *testing.T) {
	service := serviceForKit(t)
	for i := 1; i <= 2000; i++ {
		r := httptest.NewRequest("POST", "/api/users", strings.NewReader(userJSON(fmt.Sprint("User ", i), fmt.Sprintf("user%d@example.com", i))))
		r.Header.Set("Authorization", "Bearer "+kitWriteToken)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		service.ServeHTTP(w, r)
		if w.Code != http.StatusCreated {
			t.Fatalf("creating user %d: %d %s", i, w.Code, w.Body)
		}
	}
	wantEveryRuleMet(t, runKit(t, service))
}

// wantEveryRuleMet fails the test for each rule of the report that failed or was skipped.
func wantEveryRuleMet(t *testing.T, report *kit.Report) {
	t.Helper()
	for _, r := range report.Results {
		switch r.Status {
		case kit.Failed:
			t.Errorf("%s: %s\n  expected %s\n  got      %s\n  %s", r.Rule.ID, r.Rule.Requirement, r.Expected, r.Got, r.Exchange.Curl())
		case kit.Skipped:
			t.Errorf("%s was skipped: %s", r.Rule.ID, r.Reason)
		}
	}
	if len(report.Results) != len(kit.Rules()) {
		t.Errorf("%d results for %d rules", len(report.Results), len(kit.Rules()))
	}
}

// A breakage makes the service break a rule on purpose, as a learner's server might.
type breakage struct {
	name  string
	wrap  func(http.Handler) http.Handler
	fails []string // exactly the rules the kit must find broken; every other passes
	skips []string // the rules it cannot check on such a server
}

func TestKitFindsExactlyTheRulesAServerBreaks(t *testing.T) {
	for _, b := range breakages() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			report := runKit(t, b.wrap(serviceForKit(t)))
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
	return []breakage{
		{
			name: "POST answers 200, not 201",
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
			fails: []string{"reachable/unclean-path-redirected", "create/201-location"},
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
			fails: []string{"list/total-is-length", "list/pages-of-the-whole-list", "list/empty-is-an-array", "list/page-total-counts-matches"},
		},
		{
			name: "If-Match ignored",
			wrap: withoutHeader("If-Match"),
			fails: []string{"precondition/if-match-412", "precondition/if-match-strong", "precondition/if-match-on-reads",
				"precondition/if-match-on-post", "precondition/if-match-on-patch", "precondition/if-match-before-if-none-match",
				"precondition/412-before-409", "precondition/unquoted-is-not-a-tag", "precondition/nothing-matches-after-a-non-tag",
				"precondition/space-is-not-in-a-tag"},
		},
		{
			name: "If-None-Match ignored",
			wrap: withoutHeader("If-None-Match"),
			fails: []string{"precondition/list-over-several-lines", "precondition/if-none-match-304", "precondition/if-none-match-weak",
				"precondition/if-none-match-star-304", "precondition/if-none-match-on-writes-412", "precondition/if-none-match-on-post-412",
				"precondition/if-none-match-on-patch-412", "precondition/if-match-before-if-none-match", "precondition/tag-may-hold-a-comma"},
			skips: []string{"precondition/304-no-body", "precondition/304-headers"},
		},
		{
			name: `the error body says "message", not "error"`,
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				if a.Code >= 400 {
					body := strings.Replace(a.Body.String(), `{"error":`, `{"message":`, 1)
					a.Body.Reset()
					a.Body.WriteString(body)
				}
			}),
			fails: []string{"errors/error-body", "errors/error-body-of-every-status"},
		},
		{
			name: "404 and 405 in text/plain, as ServeMux writes them",
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				if a.Code == http.StatusNotFound || a.Code == http.StatusMethodNotAllowed {
					a.Header().Set("Content-Type", "text/plain; charset=utf-8")
					a.Body.Reset()
					a.Body.WriteString(strings.ToLower(http.StatusText(a.Code)) + "\n")
				}
			}),
			fails: []string{"reachable/content-type-json", "errors/error-body", "errors/error-body-of-every-status"},
		},
		{
			name: "405 without Allow",
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				if a.Code == http.StatusMethodNotAllowed {
					a.Header().Del("Allow")
				}
			}),
			fails: []string{"errors/405-allow", "errors/allow-is-the-routes-methods"},
		},
		{
			name: "401 without WWW-Authenticate",
			wrap: rewriteAnswers(func(r *http.Request, a *httptest.ResponseRecorder) {
				if a.Code == http.StatusUnauthorized {
					a.Header().Del("WWW-Authenticate")
				}
			}),
			fails: []string{"auth/401-www-authenticate", "auth/invalid-token-error", "auth/challenges-exact"},
		},
		{
			name: "Bearer compared case-sensitively",
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
			fails: []string{"reachable/options-unknown-404", "read/missing-404", "read/non-canonical-id-404", "replace/missing-404",
				"patch/missing-404", "delete/again-404", "precondition/missing-user-404"},
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
