package kit

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The catalogue: each rule one requirement, with a stable id, a source and a section of docs/api.md.

func TestEveryRuleIsWellFormed(t *testing.T) {
	id := regexp.MustCompile(`^[a-z]+/[a-z0-9-]+$`)
	source := regexp.MustCompile(`^(RFC \d+|docs/api\.md#|W3C |Fetch standard)`)
	seen := map[string]bool{}
	scope, topic := Convention, 0
	for _, r := range Rules() {
		if !id.MatchString(r.ID) || seen[r.ID] {
			t.Errorf("%q: want a new id of the form topic/name", r.ID)
		}
		seen[r.ID] = true
		if r.Scope != scope { // the catalogue goes scope by scope: the conventions, then this reference's
			if r.Scope < scope {
				t.Errorf("%s: a convention rule after the rules of this reference only", r.ID)
			}
			scope, topic = r.Scope, 0
		}
		for topic < len(Topics()) && Topics()[topic] != r.Topic() {
			topic++ // and topic by topic, in the order of Topics
		}
		if topic == len(Topics()) {
			t.Errorf("%s: its topic is unknown, or out of the order of Topics", r.ID)
		}
		if !strings.HasSuffix(r.Requirement, ".") || regexp.MustCompile(`[.!?] [A-Z]`).MatchString(r.Requirement) {
			t.Errorf("%s: the requirement %q is not one sentence", r.ID, r.Requirement)
		}
		if !source.MatchString(r.Source) || !strings.HasPrefix(r.Doc, "docs/api.md#") || r.check == nil {
			t.Errorf("%s: source %q, doc %q: want an RFC or a docs/api.md section, and a check", r.ID, r.Source, r.Doc)
		}
	}
}

// A convention rule runs against any API, so its id names no field of users: unique/taken-409, not
// create/email-taken-409.
func TestConventionRulesNameNoFieldOfUsers(t *testing.T) {
	usersWords := regexp.MustCompile(`\b(users?|e-?mails?|names?)\b`)
	for _, r := range Rules() {
		if r.Scope == Convention && usersWords.MatchString(strings.ReplaceAll(r.ID, "-", " ")) {
			t.Errorf("%s: a convention rule's id names users or a field of theirs", r.ID)
		}
	}
}

// The rules of this reference only are its choices: every one is of the tier reference, and
// RulesFor gives them for this reference's description alone.
func TestRulesOfThisReferenceRunOnlyAgainstIt(t *testing.T) {
	books := description(t, booksJSON)
	for _, r := range Rules() {
		inUsers := slices.ContainsFunc(RulesFor(UsersDescription()), func(u Rule) bool { return u.ID == r.ID })
		inBooks := slices.ContainsFunc(RulesFor(books), func(b Rule) bool { return b.ID == r.ID })
		if !inUsers || inBooks != (r.Scope == Convention) {
			t.Errorf("%s (%s): for users.json %v, for books %v", r.ID, r.Scope, inUsers, inBooks)
		}
		if r.Scope == ThisReference && r.Tier != Reference {
			t.Errorf("%s: a rule of this reference only is of the tier %s, not reference", r.ID, r.Tier)
		}
	}
}

// Every key of a description turns on at least one rule, and users.json declares every key, so
// that against this reference every rule runs.
func TestEveryKeyTurnsOnARuleAndUsersDeclaresThemAll(t *testing.T) {
	for _, kn := range keyNames {
		if !slices.ContainsFunc(Rules(), func(r Rule) bool { return r.Keys&kn.key != 0 }) {
			t.Errorf("the key %s turns on no rule", kn.name)
		}
		if missing := UsersDescription().missing(kn.key); missing != 0 {
			t.Errorf("users.json does not declare %s", missing)
		}
	}
}

func TestTiersReadByName(t *testing.T) {
	for _, tier := range []Tier{Must, Should, Reference} {
		if got, err := ParseTier(tier.String()); got != tier || err != nil {
			t.Errorf("ParseTier(%q) = %v, %v", tier, got, err)
		}
	}
	if _, err := ParseTier("strict"); err == nil {
		t.Error("ParseTier(strict) took it")
	}
}

// Every rule cites one of the sections of docs/api.md, and docs/api.md has each of them.
func TestEveryRuleCitesASectionOfTheDocs(t *testing.T) {
	sections := docsSections(t)
	for _, section := range docSections {
		if _, ok := sections[section]; !ok {
			t.Errorf("docs/api.md has no section %s", section)
		}
	}
	for _, r := range Rules() {
		if !slices.Contains(docSections, r.Doc) || r.Doc == docNotes {
			t.Errorf("%s cites %s, which is not a section a rule may cite", r.ID, r.Doc)
		}
	}
}

// Every section of docs/api.md ends with the ids of the rules that check it, the convention rules
// first and then those of this reference only, and every rule names the section it is listed in: a
// learner can go from a rule to its section and back. docs/api.md says which version of the kit its
// lists are of ("conformance kit 3.0.0"); while it names another, its lists are of that one, and the
// test shows the lines of this version to put in instead.
func TestEveryDocsSectionNamesTheRulesThatCheckIt(t *testing.T) {
	listed := docsSections(t)
	ids := map[string]map[Scope][]string{}
	for _, r := range Rules() {
		if ids[r.Doc] == nil {
			ids[r.Doc] = map[Scope][]string{}
		}
		ids[r.Doc][r.Scope] = append(ids[r.Doc][r.Scope], "`"+r.ID+"`")
	}
	want := map[string]string{}
	var lines []string
	for _, section := range docSections {
		conventions, reference := strings.Join(ids[section][Convention], ", "), strings.Join(ids[section][ThisReference], ", ")
		switch {
		case conventions != "" && reference != "":
			want[section] = "Checked by the kit: " + conventions + "; of this reference only: " + reference + "."
		case conventions != "":
			want[section] = "Checked by the kit: " + conventions + "."
		case reference != "":
			want[section] = "Checked by the kit, of this reference only: " + reference + "."
		}
		if want[section] != "" {
			lines = append(lines, "## "+section+"\n"+want[section])
		}
	}
	if !strings.Contains(docsText(t), "conformance kit "+Version) {
		t.Skipf("docs/api.md does not name the conformance kit %s: its lists are of another version. Those of %s, section by section:\n\n%s",
			Version, Version, strings.Join(lines, "\n\n"))
	}
	for section, line := range listed {
		if line != want[section] {
			t.Errorf("%s has\n%s\nbut the rules that cite it make\n%s", section, line, want[section])
		}
	}
}

// docsText is docs/api.md.
func docsText(t *testing.T) string {
	t.Helper()
	text, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// docsSections reads the sections of docs/api.md, by anchor, each with its "Checked by the kit"
// line ("" when it has none).
func docsSections(t *testing.T) map[string]string {
	t.Helper()
	listed := map[string]string{}
	var anchor string
	for _, line := range strings.Split(docsText(t), "\n") {
		if title, ok := strings.CutPrefix(line, "## "); ok {
			anchor = "docs/api.md#" + strings.ReplaceAll(regexp.MustCompile(`[^a-z0-9 -]`).ReplaceAllString(strings.ToLower(title), ""), " ", "-")
			listed[anchor] = ""
		}
		if strings.HasPrefix(line, "Checked by the kit") {
			listed[anchor] = line
		}
	}
	return listed
}

// The runner, against a small server of users in memory.

const (
	testWriteToken = "test-write-secret"
	testReadToken  = "test-read-secret"
)

// fakeServer is the least of the users API: tokens, create, read, list and delete.
type fakeServer struct {
	mu     sync.Mutex
	users  map[int64]user
	nextID int64
	// createdStatus is what a create answers, 201 unless a test says otherwise: a server that
	// creates and answers 500 leaves the kit only the list to find its user in.
	createdStatus int
	tokens        map[string]bool
}

// newFakeServer starts a fakeServer that takes the test tokens, stopped when the test ends.
func newFakeServer(t *testing.T) (*fakeServer, *httptest.Server) {
	f := &fakeServer{users: map[int64]user{}, nextID: 1, createdStatus: http.StatusCreated,
		tokens: map[string]bool{testWriteToken: true, testReadToken: true}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/users", f.list)
	mux.HandleFunc("POST /api/users", f.create)
	mux.HandleFunc("GET /api/users/{id}", f.get)
	mux.HandleFunc("DELETE /api/users/{id}", f.remove)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !f.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")] {
			w.Header().Set("X-Echo", r.Header.Get("Authorization")) // a careless server, to prove the report hides tokens
			w.Header().Set("WWW-Authenticate", `Bearer realm="users", error="invalid_token"`)
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"unknown token ` + r.Header.Get("Authorization") + `"}`))
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(server.Close)
	return f, server
}

func (f *fakeServer) add(name, email string) user {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := user{ID: f.nextID, Name: name, Email: email}
	f.users[u.ID] = u
	f.nextID++
	return u
}

func (f *fakeServer) all() []user {
	f.mu.Lock()
	defer f.mu.Unlock()
	all := []user{}
	for _, u := range f.users {
		all = append(all, u)
	}
	slices.SortFunc(all, func(a, b user) int { return int(a.ID - b.ID) })
	return all
}

func (f *fakeServer) list(w http.ResponseWriter, r *http.Request) {
	all := f.all()
	json.NewEncoder(w).Encode(map[string]any{"data": all, "total": len(all)})
}

func (f *fakeServer) create(w http.ResponseWriter, r *http.Request) {
	var in user
	json.NewDecoder(r.Body).Decode(&in)
	u := f.add(in.Name, in.Email)
	w.WriteHeader(f.createdStatus)
	if f.createdStatus == http.StatusCreated {
		json.NewEncoder(w).Encode(u)
	}
}

func (f *fakeServer) get(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	f.mu.Lock()
	u, ok := f.users[id]
	f.mu.Unlock()
	if !ok {
		http.Error(w, `{"error":"no such user"}`, http.StatusNotFound)
		return
	}
	json.NewEncoder(w).Encode(u)
}

func (f *fakeServer) remove(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.users[id]; !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	delete(f.users, id)
	w.WriteHeader(http.StatusNoContent)
}

// rule is a rule of a test's own.
func rule(id string, needs Need, check func(c *Client) error) Rule {
	return Rule{ID: id, Tier: Must, Requirement: "A rule of a test.", Source: "docs/api.md#routes", Doc: "docs/api.md#routes",
		Needs: needs, check: check}
}

func run(t *testing.T, cfg Config, rules ...Rule) *Report {
	t.Helper()
	report, err := Run(context.Background(), cfg, rules)
	if err != nil {
		t.Fatal(err)
	}
	return report
}

func TestRunDeletesTheUsersItCreatedAndOnlyThose(t *testing.T) {
	fake, server := newFakeServer(t)
	ada := fake.add("Ada", "ada@example.com") // someone else's
	report := run(t, Config{URL: server.URL, Description: UsersDescription(), WriteToken: testWriteToken},
		rule("test/fails-after-creating", OwnItems, func(c *Client) error {
			if _, err := c.newUsers("Kit Ann", "Kit Bob"); err != nil {
				return err
			}
			return failf(nil, "something", "something else")
		}),
		rule("test/panics-after-creating", OwnItems, func(c *Client) error {
			c.newUser("Kit Carol")
			panic("a mistake in a check")
		}),
		rule("test/creates-on-a-500", OwnItems, func(c *Client) error {
			fake.createdStatus = http.StatusInternalServerError // the kit learns no id: the list is where it finds the user
			defer func() { fake.createdStatus = http.StatusCreated }()
			c.write(http.MethodPost, usersCollection, userJSON("Kit Dan", c.email()))
			return nil
		}))
	if got := fake.all(); len(got) != 1 || got[0] != ada {
		t.Errorf("after the run the server holds %v, want only %v", got, ada)
	}
	statuses := []Status{report.Results[0].Status, report.Results[1].Status, report.Results[2].Status}
	if !slices.Equal(statuses, []Status{Failed, Failed, Passed}) || !strings.Contains(report.Results[1].Got, "a mistake in a check") {
		t.Errorf("results %v, the panic reported as %q", statuses, report.Results[1].Got)
	}
	if len(report.Leftovers) != 0 {
		t.Errorf("leftovers %q", report.Leftovers)
	}
}

func TestRuleThatCreatesUsersMustSaySo(t *testing.T) {
	_, server := newFakeServer(t)
	report := run(t, Config{URL: server.URL, Description: UsersDescription(), WriteToken: testWriteToken}, rule("test/creates-unannounced", 0, func(c *Client) error {
		c.newUser("Kit Ann")
		return nil
	}))
	if r := report.Results[0]; r.Status != Failed || !strings.Contains(r.Got, "OwnItems") {
		t.Errorf("%v: %s", r.Status, r.Got)
	}
}

func TestReportNeverShowsAToken(t *testing.T) {
	_, server := newFakeServer(t)
	report := run(t, Config{URL: server.URL, Description: UsersDescription(), WriteToken: testWriteToken, ReadToken: testReadToken},
		rule("test/token-echoed", 0, func(c *Client) error {
			// bearer in lower case is unknown to the fake: it answers 401 and echoes the token
			return c.anonymously(http.MethodGet, usersCollection, "Authorization", "bearer "+writeTokenVar).statusIs(http.StatusOK)
		}))
	r := report.Results[0]
	if r.Status != Failed || r.Exchange == nil {
		t.Fatalf("%v, exchange %v", r.Status, r.Exchange)
	}
	shown, _ := json.Marshal(r)
	for _, secret := range []string{testWriteToken, testReadToken} {
		if strings.Contains(string(shown), secret) || strings.Contains(r.Exchange.Curl(), secret) {
			t.Errorf("the report shows the token %s:\n%s\n%s", secret, shown, r.Exchange.Curl())
		}
	}
	if !strings.Contains(r.Got, "bearer $USERS_WRITE_TOKEN") || r.Exchange.ResponseHeader.Get("X-Echo") != "bearer $USERS_WRITE_TOKEN" ||
		!strings.Contains(r.Exchange.Curl(), `"Authorization: bearer $USERS_WRITE_TOKEN"`) {
		t.Errorf("the token's variable is not where the token was: %s\n%v\n%s", r.Got, r.Exchange.ResponseHeader, r.Exchange.Curl())
	}
}

func TestRunSkipsTheRulesItCannotCheck(t *testing.T) {
	fake, server := newFakeServer(t)
	report := run(t, Config{URL: server.URL, Description: UsersDescription(), WriteToken: testWriteToken, Origin: "http://localhost:3000"},
		rule("test/roles", ReadToken, func(c *Client) error { return nil }),
		rule("test/cors", AllowedOrigin, func(c *Client) error { return nil }),
		shouldRule("test/no-user", OwnItems, func(c *Client) error {
			fake.createdStatus = http.StatusInternalServerError
			defer func() { fake.createdStatus = http.StatusCreated }()
			_, err := c.newUser("Kit Ann")
			return err
		}))
	for i, want := range []string{"USERS_READ_TOKEN is not set", `does not allow the origin "http://localhost:3000"`,
		"could not create an item to check it: POST /api/users answered 500 Internal Server Error"} {
		if r := report.Results[i]; r.Status != Skipped || !strings.Contains(r.Reason, want) {
			t.Errorf("%s: %v, %q; want skipped, saying %q", r.Rule.ID, r.Status, r.Reason, want)
		}
	}
	if users := fake.all(); len(users) != 0 {
		t.Errorf("the user a failed create made is still there: %v", users)
	}
}

// A must rule that an answer stopped before its check fails the run, saying why, with the curl
// line of that answer: a port's own bug must not pass a must rule by quietly skipping it. A rule
// the run was not given what it needs (a read token) is skipped, whatever its tier.
func TestMustRuleThatCannotRunFails(t *testing.T) {
	fake, server := newFakeServer(t)
	report := run(t, Config{URL: server.URL, Description: UsersDescription(), WriteToken: testWriteToken},
		rule("test/no-user", OwnItems, func(c *Client) error {
			fake.createdStatus = http.StatusInternalServerError
			defer func() { fake.createdStatus = http.StatusCreated }()
			_, err := c.newUser("Kit Ann")
			return err
		}),
		rule("test/roles", ReadToken, func(c *Client) error { return nil }))
	r := report.Results[0]
	if r.Status != Failed || !strings.Contains(r.Got, "could not run: could not create an item") || r.Exchange == nil || r.Exchange.Status != 500 {
		t.Errorf("%s: %v, got %q, exchange %v; want a failure that says it could not run, with the POST", r.Rule.ID, r.Status, r.Got, r.Exchange)
	}
	if !report.Failed() || report.Results[1].Status != Skipped {
		t.Errorf("the run failed %v, the rule of roles %v: want a failed run and a skip", report.Failed(), report.Results[1].Status)
	}
}

func shouldRule(id string, needs Need, check func(c *Client) error) Rule {
	r := rule(id, needs, check)
	r.Tier = Should
	return r
}

func TestBaselineMakesAFailureKnown(t *testing.T) {
	_, server := newFakeServer(t)
	baseline, err := ParseBaseline(strings.NewReader("# known\n\ntest/fails\n  test/other  \n"))
	if err != nil || !baseline["test/fails"] || !baseline["test/other"] || len(baseline) != 2 {
		t.Fatalf("ParseBaseline: %v, %v", baseline, err)
	}
	failing := rule("test/fails", 0, func(c *Client) error { return failf(nil, "this", "that") })
	report := run(t, Config{URL: server.URL, Description: UsersDescription(), WriteToken: testWriteToken, Baseline: baseline}, failing)
	if r := report.Results[0]; r.Status != Failed || !r.Known || report.Failed() {
		t.Errorf("%v, known %v, the run failed: %v", r.Status, r.Known, report.Failed())
	}
	if report = run(t, Config{URL: server.URL, Description: UsersDescription(), WriteToken: testWriteToken}, failing); !report.Failed() {
		t.Error("without the baseline the run did not fail")
	}
	if unknown := baseline.Unknown([]Rule{failing}); !slices.Equal(unknown, []string{"test/other"}) {
		t.Errorf("Unknown = %q", unknown)
	}
}

func TestRunCannotProceedWithoutAServerThatTakesTheTokens(t *testing.T) {
	_, server := newFakeServer(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no server at the URL", Config{URL: closed.URL, Description: UsersDescription(), WriteToken: testWriteToken}, "no server answers at " + closed.URL},
		{"the write token refused", Config{URL: server.URL, Description: UsersDescription(), WriteToken: "wrong"}, "refused USERS_WRITE_TOKEN on the first request"},
		{"the read token refused", Config{URL: server.URL, Description: UsersDescription(), WriteToken: testWriteToken, ReadToken: "wrong"}, "refused USERS_READ_TOKEN"},
		{"no API at the URL", Config{URL: server.URL + "/api/users", Description: UsersDescription(), WriteToken: testWriteToken}, "without /api/users"},
		{"not a URL", Config{URL: "localhost:8080", Description: UsersDescription(), WriteToken: testWriteToken}, "base URL such as http://localhost:8080"},
		{"no write token", Config{URL: server.URL, Description: UsersDescription()}, "no write token"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			report, err := Run(context.Background(), tt.cfg, Rules())
			if err == nil || !strings.Contains(err.Error(), tt.want) || report != nil {
				t.Errorf("Run: %v; want an error saying %q", err, tt.want)
			}
			if strings.Contains(err.Error(), testWriteToken) {
				t.Errorf("the error shows the token: %v", err)
			}
		})
	}
}
