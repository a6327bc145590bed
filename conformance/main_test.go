package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"users/conformance/kit"
)

const token = "main-test-secret"

// listOnly is a server that has only an empty list, and answers 401 without a challenge: it meets
// reachable/list-200 and breaks auth/401-www-authenticate.
func listOnly(t *testing.T) (url string, requests *atomic.Int64) {
	requests = &atomic.Int64{}
	server := httptest.NewServer(listOnlyHandler(requests))
	t.Cleanup(server.Close)
	return server.URL, requests
}

// listOnlyOverTLS is listOnly on https, with a certificate of its own for 127.0.0.1 and
// example.com, which it writes to a PEM file: no system trusts it.
func listOnlyOverTLS(t *testing.T) (url, certFile string) {
	server := httptest.NewUnstartedServer(listOnlyHandler(&atomic.Int64{}))
	server.Config.ErrorLog = log.New(io.Discard, "", 0) // a client that refuses the certificate is what some cases are about
	server.StartTLS()
	t.Cleanup(server.Close)
	certFile = filepath.Join(t.TempDir(), "cert.pem")
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return server.URL, certFile
}

func listOnlyHandler(requests *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"who are you?"}`))
			return
		}
		w.Write([]byte(`{"data":[],"total":0}`))
	})
}

// openList is a server of an API without authentication whose collection, /things, is empty, and
// which has nothing else: the description of notes.json fits it.
func openList(t *testing.T) (url, description string) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/things" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`[]`))
	}))
	t.Cleanup(server.Close)
	description = filepath.Join(t.TempDir(), "things.json")
	os.WriteFile(description, []byte(`{"collection": "/things", "create": {"note": "{tag}-{n}"}, "replace": {"note": "{tag}-{n}"},
		"invalid": [{"note": ["{tag}"]}]}`), 0o600)
	return server.URL, description
}

// A rule each way: one passes, one fails and one is skipped, as no read token is given.
const threeRules = "-run=^(reachable/list-200|auth/401-www-authenticate|auth/read-token-reads)$"

// command runs the command as main would, with this environment.
func command(t *testing.T, env map[string]string, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	var out, errs bytes.Buffer
	status = run(context.Background(), args, func(name string) string { return env[name] }, &out, &errs)
	return status, out.String(), errs.String()
}

func TestExitStatusSaysHowTheRunWent(t *testing.T) {
	url, _ := listOnly(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	withToken := map[string]string{"USERS_WRITE_TOKEN": token}
	openURL, things := openList(t)
	broken := filepath.Join(t.TempDir(), "broken.json")
	os.WriteFile(broken, []byte(`{"collection": "/things", "create": {"note": "x"}}`), 0o600)
	unknownInBaseline := filepath.Join(t.TempDir(), "baseline")
	os.WriteFile(unknownInBaseline, []byte("auth/401-www-authenticate\nauth/no-such-rule\n"), 0o600)
	passingInBaseline := filepath.Join(t.TempDir(), "baseline")
	os.WriteFile(passingInBaseline, []byte("reachable/list-200\n"), 0o600)
	knownInBaseline := filepath.Join(t.TempDir(), "baseline")
	os.WriteFile(knownInBaseline, []byte("# not yet\nauth/401-www-authenticate\n"), 0o600)
	for _, tt := range []struct {
		name   string
		env    map[string]string
		args   []string
		status int
		says   string // on stderr, or on stdout for a run that proceeds
	}{
		{"no rule fails", withToken, []string{"-url", url, "-run", "^reachable/list-200$"}, 0, "1 passed, 0 failed, 0 skipped"},
		{"a rule fails", withToken, []string{"-url", url, threeRules}, 1, "1 passed, 1 failed, 1 skipped"},
		{"the failure is known", withToken, []string{"-url", url, threeRules, "-baseline", knownInBaseline}, 0, "1 of the failures are known"},
		{"a known failure passes", withToken, []string{"-url", url, "-run", "^reachable/list-200$", "-baseline", passingInBaseline}, 0,
			"In the baseline but passing now, so it can lose them: reachable/list-200."},
		{"-h", nil, []string{"-h"}, 0, "Usage: conformance -url URL"},
		{"no -url", withToken, nil, 2, "-url is required"},
		{"an unknown flag", withToken, []string{"-url", url, "-token", "x"}, 2, "flag provided but not defined: -token"},
		{"an argument", withToken, []string{"-url", url, "all"}, 2, `unexpected argument "all"`},
		{"an unknown tier", withToken, []string{"-url", url, "-tier", "strict"}, 2, "-tier: the tier must be must, should or reference"},
		{"a bad -run", withToken, []string{"-url", url, "-run", "("}, 2, "-run: error parsing regexp"},
		{"no write token", nil, []string{"-url", url}, 2, "USERS_WRITE_TOKEN is not set: the description declares auth"},
		{"no token, and a description without auth", nil, []string{"-url", openURL, "-resource", things, "-run", "^reachable/list-200$"}, 0, "1 passed"},
		{"a server that asks for the token a description does not declare", nil, []string{"-url", url, "-resource", things}, 2,
			"asking for a token: if the API takes bearer tokens, declare auth"},
		{"no description at -resource", withToken, []string{"-url", url, "-resource", filepath.Join(t.TempDir(), "none.json")}, 2, "-resource: open"},
		{"a description that cannot drive the rules", withToken, []string{"-url", url, "-resource", broken}, 2, "create must hold {tag} and {n}"},
		{"no server at the URL", withToken, []string{"-url", closed.URL}, 2, "no server answers at " + closed.URL},
		{"the token refused", map[string]string{"USERS_WRITE_TOKEN": "wrong"}, []string{"-url", url}, 2, "the server refused USERS_WRITE_TOKEN on the first request"},
		{"a baseline without its file", withToken, []string{"-url", url, "-baseline", filepath.Join(t.TempDir(), "none")}, 2, "-baseline: open"},
		{"a baseline naming no rule", withToken, []string{"-url", url, "-baseline", unknownInBaseline}, 2, "names rules the kit does not have: auth/no-such-rule"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, stdout, stderr := command(t, tt.env, tt.args...)
			if status != tt.status {
				t.Errorf("exit status %d, want %d\nstdout: %s\nstderr: %s", status, tt.status, stdout, stderr)
			}
			if said := stdout + stderr; !strings.Contains(said, tt.says) {
				t.Errorf("want %q in\nstdout: %s\nstderr: %s", tt.says, stdout, stderr)
			}
			if status == 2 && strings.Count(stderr, "\n") != 1 {
				t.Errorf("a usage mistake is one line on stderr, not %q", stderr)
			}
			if strings.Contains(stdout+stderr, token) {
				t.Error("the output shows the token")
			}
		})
	}
}

// -h says, after the kit's version, that the kit checks the collection a description names, users
// without -resource, and that describe drafts one from an OpenAPI document in JSON.
func TestUsageSaysWhatTheKitChecks(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"describe", "-h"}} {
		status, stdout, stderr := command(t, nil, args...)
		if status != 0 || stderr != "" {
			t.Errorf("%q: exit status %d, stderr %q", args, status, stderr)
		}
		first, _, _ := strings.Cut(stdout, "\n")
		if first != "users conformance kit "+kit.Version || !strings.Contains(stdout, "conformance describe -openapi URL_OR_FILE -collection PATH") ||
			!strings.Contains(stdout, "JSON") {
			t.Errorf("%q: the usage does not begin with the version, or does not show describe and say it reads JSON:\n%s", args, stdout)
		}
	}
	_, stdout, _ := command(t, nil, "-h")
	if !strings.Contains(stdout, "on the collection a\ndescription names (docs/kit.md): this service's users without -resource, any other with it") {
		t.Errorf("the usage does not say what the kit checks:\n%s", stdout)
	}
}

func TestReportForAPerson(t *testing.T) {
	url, _ := listOnly(t)
	_, stdout, _ := command(t, map[string]string{"USERS_WRITE_TOKEN": token}, "-url", url, threeRules)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if lines[0] != "users conformance kit "+kit.Version || lines[1] != "description users.json (built in): the collection /api/users, of this reference" {
		t.Errorf("first lines %q, want the kit's version, then the description it uses", lines[:2])
	}
	if last := lines[len(lines)-1]; last != "1 passed, 1 failed, 1 skipped" {
		t.Errorf("last line %q", last)
	}
	// Topics in the order a learner builds a server, and the failure in full under its topic.
	want := []string{
		`(?m)^reachable +1 passed$`,
		`(?m)^auth +1 failed, 1 skipped$`,
		`(?m)^  FAIL auth/401-www-authenticate \[must\]$`,
		`(?m)^    requirement: Every 401 carries WWW-Authenticate with a Bearer challenge\.$`,
		`(?m)^    sent: +GET ` + regexp.QuoteMeta(url) + `/api/users$`,
		`(?m)^    expected: +WWW-Authenticate: Bearer \.\.\.$`,
		`(?m)^    got: +no WWW-Authenticate header$`,
		`(?m)^    curl -i '` + regexp.QuoteMeta(url) + `/api/users'$`,
		`(?m)^  1 skipped \(auth/read-token-reads \[(must|should|reference)\]\): USERS_READ_TOKEN is not set`,
	}
	at := 0
	for _, pattern := range want {
		loc := regexp.MustCompile(pattern).FindStringIndex(stdout[at:])
		if loc == nil {
			t.Fatalf("no %s after what came before in\n%s", pattern, stdout)
		}
		at += loc[1]
	}
}

func TestVerboseShowsEveryRule(t *testing.T) {
	url, _ := listOnly(t)
	_, stdout, _ := command(t, map[string]string{"USERS_WRITE_TOKEN": token}, "-url", url, threeRules, "-v")
	for _, want := range []string{"  ok   reachable/list-200\n", "  FAIL auth/401-www-authenticate", "  skip auth/read-token-reads [must]: USERS_READ_TOKEN is not set"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
}

// -list shows the rules a run would check, with their tier, what they need, their requirement,
// their source and section, and sends nothing.
func TestListShowsTheRulesAndSendsNothing(t *testing.T) {
	url, requests := listOnly(t)
	musts := 0
	for _, r := range kit.Rules() {
		if r.Tier == kit.Must {
			musts++
		}
	}
	status, stdout, _ := command(t, nil, "-list", "-url", url, "-tier", "must")
	if status != 0 || requests.Load() != 0 {
		t.Errorf("exit status %d, %d requests sent", status, requests.Load())
	}
	if !strings.HasSuffix(stdout, "\n"+strconv.Itoa(musts)+" rules\n") || strings.Contains(stdout, "[should]") || strings.Contains(stdout, "[reference]") {
		t.Errorf("-tier must lists other tiers, or not the %d rules of must:\n%s", musts, stdout)
	}
	_, stdout, _ = command(t, nil, "-list", "-run", "^(precondition/if-match-412|list/sort-by-id|reachable/healthz)$")
	want := "\nlist/sort-by-id [reference] needs own items; keys tag, sort\n" +
		"    Sorting by id orders the items by ascending id, and in descending order by descending id.\n" +
		"    docs/api.md#listing\n" +
		"\nprecondition/if-match-412 [must] needs own items\n" +
		"    PUT or DELETE with an If-Match that names no current tag of the item is 412, and changes nothing.\n" +
		"    RFC 9110 §13.1.1; stated in docs/api.md#conditional-requests\n" +
		"\nreachable/healthz [reference] (this reference only) needs nothing\n" +
		`    GET /healthz answers 200 {"status": "ok"}, without a token.` + "\n" +
		"    docs/api.md#routes\n\n3 rules\n"
	if !strings.HasSuffix(stdout, want) {
		t.Errorf("got\n%s\nwant it to end with\n%s", stdout, want)
	}
}

// With a description that is not this reference's, the run leaves out the rules of this reference
// only and says how many, and the report and -list name the description.
func TestAnotherDescriptionLeavesOutThisReferencesRules(t *testing.T) {
	url, things := openList(t)
	left := len(kit.Rules()) - len(kit.RulesFor(kit.UsersDescription()))
	left += len(kit.RulesFor(kit.UsersDescription())) - len(kit.RulesFor(&kit.Description{}))
	_, stdout, _ := command(t, nil, "-url", url, "-resource", things, "-run", "^reachable/list-200$")
	for _, want := range []string{
		"description " + things + ": the collection /things; the " + strconv.Itoa(left) + " rules of this reference only are left out, as it is not this reference\n",
		"no authentication, as the description declares none (the rules of auth are skipped)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	_, stdout, _ = command(t, nil, "-list", "-resource", things)
	if strings.Contains(stdout, "(this reference only)") || !strings.HasSuffix(stdout, fmt.Sprintf("\n%d rules\n", len(kit.RulesFor(&kit.Description{})))) {
		t.Errorf("-list with another description lists rules of this reference only, or not every convention rule:\n%s", stdout)
	}
}

// Against this reference, the report puts the rules of this reference only apart, after the
// conventions, under a heading of their own.
func TestReportPutsThisReferencesRulesApart(t *testing.T) {
	url, _ := listOnly(t)
	_, stdout, _ := command(t, map[string]string{"USERS_WRITE_TOKEN": token}, "-url", url, "-run", "^(reachable/list-200|reachable/healthz)$")
	conventions := strings.Index(stdout, "The conventions:\nreachable     1 passed\n")
	reference := strings.Index(stdout, "This reference only, its own choices, written for users:\nreachable     1 failed\n")
	if conventions < 0 || reference < conventions || !strings.Contains(stdout[reference:], "FAIL reachable/healthz [reference]") {
		t.Errorf("the rules of this reference only are not apart, after the conventions:\n%s", stdout)
	}
}

func TestJUnitAndJSONHaveARecordPerRule(t *testing.T) {
	url, _ := listOnly(t)
	dir := t.TempDir()
	junitFile, jsonFile := filepath.Join(dir, "report.xml"), filepath.Join(dir, "report.json")
	command(t, map[string]string{"USERS_WRITE_TOKEN": token}, "-url", url, threeRules, "-junit", junitFile, "-json", jsonFile)

	var suites struct {
		Tests   int `xml:"tests,attr"`
		Failed  int `xml:"failures,attr"`
		Skipped int `xml:"skipped,attr"`
		Suites  []struct {
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	junit, _ := os.ReadFile(junitFile)
	if err := xml.Unmarshal(junit, &suites); err != nil || suites.Tests != 3 || suites.Failed != 1 || suites.Skipped != 1 {
		t.Fatalf("JUnit: %v, %+v\n%s", err, suites, junit)
	}
	var cases []string
	for _, suite := range suites.Suites {
		for _, c := range suite.Cases {
			cases = append(cases, c.Name)
			if (c.Failure != nil) != (c.Name == "auth/401-www-authenticate") || (c.Skipped != nil) != (c.Name == "auth/read-token-reads") {
				t.Errorf("JUnit case %s is marked wrongly", c.Name)
			}
		}
	}
	if strings.Join(cases, " ") != "reachable/list-200 auth/401-www-authenticate auth/read-token-reads" {
		t.Errorf("JUnit cases %q", cases)
	}

	var report struct {
		Version     string
		Description string
		Passed      int
		Failed      int
		Skipped     int
		Results     []struct {
			ID, Status, Requirement, Expected, Got, Curl string
			Sent                                         *struct{ Method, URL string }
		}
	}
	raw, _ := os.ReadFile(jsonFile)
	if err := json.Unmarshal(raw, &report); err != nil || report.Version != kit.Version || report.Description != "users.json (built in)" || report.Passed != 1 || report.Failed != 1 ||
		report.Skipped != 1 || len(report.Results) != 3 {
		t.Fatalf("JSON: %v\n%s", err, raw)
	}
	failure := report.Results[1]
	if failure.Status != "failed" || failure.Sent == nil || failure.Sent.URL != url+"/api/users" || failure.Got != "no WWW-Authenticate header" ||
		!strings.HasPrefix(failure.Curl, "curl -i ") {
		t.Errorf("JSON failure %+v", failure)
	}
	if bytes.Contains(junit, []byte(token)) || bytes.Contains(raw, []byte(token)) {
		t.Error("a report file shows the token")
	}
}

// -cacert trusts a server's own certificate, as curl's --cacert does: the run proceeds, and each
// curl line carries the file too. Without it, or with a URL whose name the certificate is not
// for, the server did answer: the command says what is wrong with the certificate, and exits 2.
func TestCACertTrustsTheServersOwnCertificate(t *testing.T) {
	url, certFile := listOnlyOverTLS(t)
	byName := strings.Replace(url, "127.0.0.1", "localhost", 1) // the certificate is for 127.0.0.1 and example.com
	notPEM := filepath.Join(t.TempDir(), "cert.der")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	withToken := map[string]string{"USERS_WRITE_TOKEN": token}
	for _, tt := range []struct {
		name   string
		args   []string
		status int
		says   []string // on stdout or stderr
	}{
		{"trusted", []string{"-url", url, "-cacert", certFile, threeRules}, 1,
			[]string{"1 passed, 1 failed, 1 skipped", "    curl -i --cacert '" + certFile + "' '" + url + "/api/users'\n"}},
		{"not trusted", []string{"-url", url, "-run", "^reachable/list-200$"}, 2,
			[]string{"the server at " + url + " answered, but its certificate is not trusted", "with -cacert FILE"}},
		{"not for the name", []string{"-url", byName, "-cacert", certFile, "-run", "^reachable/list-200$"}, 2,
			[]string{"its certificate is not for the name in the URL", "not localhost"}},
		{"no certificate in the file", []string{"-url", url, "-cacert", notPEM}, 2,
			[]string{"-cacert " + notPEM + " holds no certificate in PEM form"}},
		{"no file", []string{"-url", url, "-cacert", notPEM + ".none"}, 2, []string{"-cacert: open"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, stdout, stderr := command(t, withToken, tt.args...)
			if status != tt.status {
				t.Errorf("exit status %d, want %d\nstdout: %s\nstderr: %s", status, tt.status, stdout, stderr)
			}
			for _, want := range tt.says {
				if !strings.Contains(stdout+stderr, want) {
					t.Errorf("want %q in\nstdout: %s\nstderr: %s", want, stdout, stderr)
				}
			}
			if status == 2 && strings.Count(stderr, "\n") != 1 {
				t.Errorf("the reason is one line on stderr, not %q", stderr)
			}
		})
	}
}

// The exit status of the command itself, built: go run would report any failure as its own 1.
func TestBuiltCommandExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "conformance")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	url, _ := listOnly(t)
	for _, tt := range []struct {
		args   []string
		status int
	}{
		{[]string{"-url", url, "-run", "^reachable/list-200$"}, 0},
		{[]string{"-url", url, threeRules}, 1},
		{[]string{"-tier", "all", "-url", url}, 2},
	} {
		cmd := exec.Command(bin, tt.args...)
		cmd.Env = append(os.Environ(), "USERS_WRITE_TOKEN="+token, "USERS_READ_TOKEN=")
		err := cmd.Run()
		status := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			status = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if status != tt.status {
			t.Errorf("%q: exit status %d, want %d", tt.args, status, tt.status)
		}
	}
}

// -keep leaves the run's items in place, and the report says how to find them: by the tag filter,
// where the description has one.
func TestKeepSaysWhereTheItemsAre(t *testing.T) {
	url, _ := listOnly(t)
	openURL, things := openList(t)
	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
		says *regexp.Regexp
	}{
		{"users", map[string]string{"USERS_WRITE_TOKEN": token}, []string{"-url", url},
			regexp.MustCompile(`they are those that hold (kit-[0-9a-f]{8}) in email \(GET /api/users\?q=(kit-[0-9a-f]{8}) lists them\)\.\n`)},
		{"a description without tag", nil, []string{"-url", openURL, "-resource", things},
			regexp.MustCompile(`they are those that hold kit-[0-9a-f]{8}\.\n`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stdout, _ := command(t, tt.env, append(tt.args, "-keep", "-run", "^reachable/list-200$")...)
			if m := tt.says.FindStringSubmatch(stdout); m == nil || !strings.Contains(stdout, "are kept, as -keep asked") || len(m) == 3 && m[1] != m[2] {
				t.Errorf("the report does not say where the kept items are:\n%s", stdout)
			}
		})
	}
}
