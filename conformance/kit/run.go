package kit

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
)

// Config says which server to check, what it serves, and with which tokens.
type Config struct {
	// URL is the base URL of the server: the collection is at URL + Description.Collection.
	URL string
	// Description names the collection and what its API declares (description.go).
	Description *Description
	// WriteToken may read and write. ReadToken may only read; a server with one token for both
	// roles has none, and the rules of roles are then skipped. An API whose description declares
	// no auth is sent neither.
	WriteToken, ReadToken string
	// Origin is the page origin the CORS rules send. A server that does not allow it skips them.
	Origin string
	// CACert is a PEM file of the certificates to trust for an https URL, such as a server's own
	// self-signed one, as curl's --cacert: only these are trusted, and the server's name is still
	// checked. Empty, the system's certificates are trusted.
	CACert string
	// Baseline lists the rules known to fail: they are reported, but do not fail the run.
	Baseline Baseline
	// Keep leaves the items of the run in place at its end, so that a failure's curl line can be
	// sent again afterwards; the report says so, and how to find them.
	Keep bool
}

// A Baseline is a set of rule ids known to fail.
type Baseline map[string]bool

// ParseBaseline reads a baseline file: one rule id a line; blank lines and lines that begin with #
// are ignored.
func ParseBaseline(r io.Reader) (Baseline, error) {
	baseline := Baseline{}
	lines := bufio.NewScanner(r)
	for lines.Scan() {
		if id := strings.TrimSpace(lines.Text()); id != "" && !strings.HasPrefix(id, "#") {
			baseline[id] = true
		}
	}
	return baseline, lines.Err()
}

// Unknown returns the ids of the baseline that name no rule of the catalogue, sorted.
func (b Baseline) Unknown(catalogue []Rule) []string {
	var unknown []string
	for id := range b {
		if !slices.ContainsFunc(catalogue, func(r Rule) bool { return r.ID == id }) {
			unknown = append(unknown, id)
		}
	}
	slices.Sort(unknown)
	return unknown
}

// A Status is what became of a rule.
type Status int

const (
	Passed Status = iota
	Failed
	Skipped
)

func (s Status) String() string { return [...]string{"passed", "failed", "skipped"}[s] }

// A Result is what became of one rule, and why.
type Result struct {
	Rule   Rule
	Status Status
	// Known is true for a failure the baseline lists: it does not fail the run.
	Known bool
	// Expected and Got say what the failing answer should have been, and what it was; Exchange is
	// that request and its answer.
	Expected, Got string
	Exchange      *Exchange
	// Reason says why a rule was skipped, or why a must rule could not run.
	Reason   string
	Duration time.Duration
}

// An Exchange is a request the kit sent and the answer it got, as a report shows them: the tokens
// appear as $USERS_WRITE_TOKEN and $USERS_READ_TOKEN, never as themselves.
type Exchange struct {
	Method  string
	URL     string
	Header  http.Header // the header lines the kit set (net/http adds Host, User-Agent, Content-Length)
	Body    []byte
	Chunked bool   // the body was sent chunked, its length undeclared
	CACert  string // the file of the certificates the run trusted (Config.CACert), for the curl line

	Status         int // 0 when no answer came
	ResponseHeader http.Header
	ResponseBody   []byte
	Error          string // why no answer came
}

// A Report is the outcome of a run.
type Report struct {
	Version     string
	URL         string
	Description *Description
	Tag         string // in every item the run created
	Results     []Result
	Duration    time.Duration
	// Leftovers names the items the run created and could not delete, and why.
	Leftovers []string
	// Kept is true when the run left its items in place, as Config.Keep asked.
	Kept bool
}

// Counts returns how many rules passed, failed (known failures included) and were skipped.
func (r *Report) Counts() (passed, failed, skipped int) {
	for _, result := range r.Results {
		switch result.Status {
		case Passed:
			passed++
		case Failed:
			failed++
		case Skipped:
			skipped++
		}
	}
	return passed, failed, skipped
}

// Failed reports whether a rule failed that the baseline does not list: the run fails.
func (r *Report) Failed() bool {
	return slices.ContainsFunc(r.Results, func(result Result) bool { return result.Status == Failed && !result.Known })
}

// runner is one run: the configuration, the HTTP client, the run's tag, and the items it made.
// Rules run one after another, so nothing here is shared between goroutines.
type runner struct {
	cfg  Config
	desc *Description // cfg.Description
	base string       // cfg.URL without a trailing slash
	http *http.Client
	tag  string // kit-<8 hex digits>

	createdIDs []string // every id a POST answered 2xx with, to delete at the end

	rootCAs        *x509.CertPool    // the certificates of cfg.CACert; nil for the system's
	tokens         *strings.Replacer // puts the tokens in for their variables (tokens.go)
	sentWithTokens map[string]string // each value sent with a token in it, to the value as the kit wrote it

	corsProbed  bool
	corsRefusal error // why the CORS rules are skipped, once probed; nil when the origin is allowed
}

// Run checks the rules against the server in cfg, one after another, then deletes every item the
// run created, even when rules failed. The rules are those RulesFor gives for the description, or
// some of them. It returns an error only when the run could not proceed: a configuration that
// names no server or no description, no server at the URL, a token refused on the first request,
// or ctx ended.
func Run(ctx context.Context, cfg Config, rules []Rule) (*Report, error) {
	base, err := baseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.Description == nil:
		return nil, errors.New("no description: the kit needs one to know what to check")
	case cfg.Description.Auth != nil && cfg.WriteToken == "":
		return nil, errors.New("no write token: the description declares auth, and the kit needs a token that may read and write")
	}
	rootCAs, err := loadCACert(cfg.CACert)
	if err != nil {
		return nil, err
	}
	r := &runner{
		cfg:  cfg,
		desc: cfg.Description,
		base: base,
		tag:  "kit-" + randomHex(4),
		http: &http.Client{
			Timeout: requestTimeout,
			// A redirect is an answer to check, not to follow.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			// Nor is any coding asked for, or any proxy used: what comes back is what the server sent.
			// HTTP/2 is offered over TLS, as net/http does without a TLS configuration of its own.
			Transport: &http.Transport{DisableCompression: true, TLSClientConfig: &tls.Config{RootCAs: rootCAs}, ForceAttemptHTTP2: true},
		},
		rootCAs:        rootCAs,
		tokens:         tokenReplacer(cfg.WriteToken, cfg.ReadToken),
		sentWithTokens: map[string]string{},
	}
	defer r.http.CloseIdleConnections()
	start := time.Now()
	if err := r.reach(ctx); err != nil {
		return nil, err
	}
	report := &Report{Version: Version, URL: cfg.URL, Description: cfg.Description, Tag: r.tag}
	for i, rule := range rules {
		if ctx.Err() != nil {
			break
		}
		report.Results = append(report.Results, r.check(ctx, i, rule))
	}
	if report.Kept = cfg.Keep; !cfg.Keep {
		report.Leftovers = r.cleanUp()
	}
	report.Duration = time.Since(start)
	if ctx.Err() != nil {
		return report, fmt.Errorf("the run was interrupted after %d of %d rules: %w", len(report.Results), len(rules), ctx.Err())
	}
	return report, nil
}

// baseURL checks the URL a run is given and returns it without a trailing slash.
func baseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("the URL must be a base URL such as http://localhost:8080, not %q", raw)
	}
	return strings.TrimSuffix(raw, "/"), nil
}

// reach makes the first request: the run cannot proceed without a server that answers it. On an
// API with authentication it makes it with each token, which the server must take; on one without,
// it makes it with none, which the server must not ask for.
func (r *runner) reach(ctx context.Context) error {
	if r.desc.Auth == nil {
		x := r.firstRequest(ctx, http.Header{})
		if x.err == nil && (x.status == http.StatusUnauthorized || x.status == http.StatusForbidden) {
			return fmt.Errorf("GET %s answered %d, asking for a token: if the API takes bearer tokens, declare auth in the description", r.desc.Collection, x.status)
		}
		return r.answered(x)
	}
	for _, t := range []struct{ name, token string }{{"USERS_WRITE_TOKEN", r.cfg.WriteToken}, {"USERS_READ_TOKEN", r.cfg.ReadToken}} {
		if t.token == "" {
			continue
		}
		x := r.firstRequest(ctx, http.Header{"Authorization": {"Bearer $" + t.name}})
		if x.err == nil && (x.status == http.StatusUnauthorized || x.status == http.StatusForbidden) {
			return fmt.Errorf("the server refused %s on the first request: GET %s answered %d", t.name, r.desc.Collection, x.status)
		}
		if err := r.answered(x); err != nil {
			return err
		}
	}
	return nil
}

// firstRequest GETs the collection with these header lines.
func (r *runner) firstRequest(ctx context.Context, header http.Header) *reply {
	x := &reply{method: http.MethodGet, url: r.base + r.desc.Collection, header: header}
	r.exchange(ctx, x)
	return x
}

// answered says why the first request shows that the run cannot proceed, or returns nil.
func (r *runner) answered(x *reply) error {
	switch {
	case x.err != nil && untrustedCertificate(x.err) != "":
		return fmt.Errorf("the server at %s answered, but %s", r.cfg.URL, untrustedCertificate(x.err))
	case x.err != nil:
		return fmt.Errorf("no server answers at %s: %v", r.cfg.URL, x.err)
	case x.status == http.StatusNotFound:
		return fmt.Errorf("GET %s%s answered 404: give the base URL, without %s, and the description's collection as the server has it",
			r.cfg.URL, r.desc.Collection, r.desc.Collection)
	}
	return nil
}

// loadCACert reads the certificates of a -cacert file: nil, for the system's, when there is none.
func loadCACert(file string) (*x509.CertPool, error) {
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("-cacert: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("-cacert %s holds no certificate in PEM form (-----BEGIN CERTIFICATE-----)", file)
	}
	return pool, nil
}

// untrustedCertificate says why the server's certificate failed the TLS check, and what to do,
// or returns "" when err is something else. The server did answer: only its certificate is in
// question.
func untrustedCertificate(err error) string {
	var unknownAuthority x509.UnknownAuthorityError
	var otherName x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &unknownAuthority):
		return fmt.Sprintf("its certificate is not trusted (%v): give the kit the certificate to trust, "+
			"such as the server's own, with -cacert FILE (a PEM file, as curl's --cacert)", unknownAuthority)
	case errors.As(err, &otherName):
		return fmt.Sprintf("its certificate is not for the name in the URL (%v): give the URL with a name the certificate is for", otherName)
	case errors.As(err, &invalid):
		return fmt.Sprintf("its certificate is not valid (%v)", invalid)
	}
	return ""
}

// check runs one rule, the i-th of the run, and says what became of it.
func (r *runner) check(ctx context.Context, i int, rule Rule) (result Result) {
	start := time.Now()
	result = Result{Rule: rule}
	defer func() { result.Duration = time.Since(start) }()
	if err := r.unmetNeed(ctx, rule); err != nil { // the run was not given what the rule needs
		result.Status, result.Reason = Skipped, r.hide(err.Error())
		return result
	}
	// Three digits, so that no rule's tag holds another's: kit-1a2b3c4d-005 is not in kit-1a2b3c4d-057.
	c := &Client{run: r, ctx: ctx, rule: rule, group: fmt.Sprintf("%s-%03d", r.tag, i+1)}
	err := runCheck(c)
	var failed *failure
	var skipped *skip
	switch {
	case err == nil:
		result.Status = Passed
	case errors.As(err, &skipped) && rule.Tier == Must:
		// A must rule that an answer of the server stopped is not met: a port's own bug (a
		// connection left in a bad state, a create that fails) must not pass it by quietly.
		result.Status, result.Known = Failed, r.cfg.Baseline[rule.ID]
		result.Expected, result.Got = "the rule to run", r.hide("it could not run: "+skipped.reason)
		result.Reason = r.hide(skipped.reason)
		result.Exchange = r.reportExchange(skipped.exchange)
	case errors.As(err, &skipped):
		result.Status, result.Reason = Skipped, r.hide(skipped.reason)
		result.Exchange = r.reportExchange(skipped.exchange)
	case errors.As(err, &failed):
		result.Status, result.Known = Failed, r.cfg.Baseline[rule.ID]
		result.Expected, result.Got = r.hide(failed.expected), r.hide(failed.got)
		result.Exchange = r.reportExchange(failed.exchange)
	default:
		result.Status, result.Known, result.Got = Failed, r.cfg.Baseline[rule.ID], r.hide(err.Error())
	}
	return result
}

// runCheck runs a rule's check; a check that panics is a mistake in the kit, reported as a failure
// so that the run goes on and still deletes its users.
func runCheck(c *Client) (err error) {
	defer func() {
		if recovered := recover(); recovered != nil {
			err = fmt.Errorf("the check of %s stopped: %v", c.rule.ID, recovered)
		}
	}()
	return c.rule.check(c)
}

// unmetNeed returns a skip when the description does not declare a key the rule needs, or the run
// cannot give it what it needs.
func (r *runner) unmetNeed(ctx context.Context, rule Rule) error {
	if missing := r.desc.missing(rule.Keys); missing != 0 {
		return skipf("not declared (%s)", missing)
	}
	if rule.Needs&ReadToken != 0 && r.cfg.ReadToken == "" {
		return skipf("USERS_READ_TOKEN is not set: give a token that may only read to check the rules of roles")
	}
	if rule.Needs&AllowedOrigin != 0 {
		return r.originAllowed(ctx)
	}
	return nil
}

// originAllowed asks the server once whether it allows the kit's origin: without CORS, the CORS
// rules are skipped.
func (r *runner) originAllowed(ctx context.Context) error {
	if !r.corsProbed {
		r.corsProbed = true
		x := &reply{method: http.MethodGet, url: r.base + r.desc.Collection, header: http.Header{"Origin": {r.cfg.Origin}}}
		if r.desc.Auth != nil {
			x.header.Set("Authorization", "Bearer "+r.readTokenVariable())
		}
		r.exchange(ctx, x)
		if allowed := x.responseHeader.Get("Access-Control-Allow-Origin"); r.cfg.Origin == "" || allowed != r.cfg.Origin && allowed != "*" {
			r.corsRefusal = skipf("the server does not allow the origin %q: start it with CORS on for that origin to check these", r.cfg.Origin)
		}
	}
	return r.corsRefusal
}

// created notes the id of an item a POST made, to delete it at the end.
func (r *runner) created(body []byte) {
	value, _ := decodeValue(body)
	if it, ok := itemOf(value); ok {
		r.createdIDs = append(r.createdIDs, it.ID)
	}
}

// cleanUp deletes every item the run created: the ids POSTs answered with, and any item in the
// list that carries the run's tag (a server may create an item and answer otherwise), looked for
// in the whole list and through the tag filter. It returns what it could not delete.
func (r *runner) cleanUp() []string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := &Client{run: r, ctx: ctx, rule: Rule{ID: "clean-up", Needs: OwnItems}, group: r.tag}
	ids := slices.Clone(r.createdIDs)
	lists := []*reply{c.get(r.desc.Collection)}
	if r.desc.Tag != nil {
		lists = append(lists, c.mine(""))
	}
	for _, x := range lists {
		l, err := c.decodeListing(x)
		if err != nil {
			continue
		}
		for _, it := range l.items {
			if holdsTag(it, r.tag) {
				ids = append(ids, it.ID)
			}
		}
	}
	slices.Sort(ids)
	var leftovers []string
	for _, id := range slices.Compact(ids) {
		x := c.remove(c.itemPath(id))
		if x.status/100 != 2 && x.status != http.StatusNotFound {
			leftovers = append(leftovers, fmt.Sprintf("%s: DELETE answered %s", c.itemPath(id), x.summary()))
		}
	}
	return leftovers
}

// holdsTag reports whether one of an item's strings holds the tag, in any case.
func holdsTag(it item, tag string) bool {
	for _, value := range it.members {
		if s, ok := value.(string); ok && strings.Contains(strings.ToLower(s), tag) {
			return true
		}
	}
	return false
}

// reportExchange is the report's copy of x: the request as the kit wrote it, with the tokens'
// variables, and the answer with any echo of a sent token hidden.
func (r *runner) reportExchange(x *reply) *Exchange {
	if x == nil {
		return nil
	}
	e := &Exchange{Method: x.method, URL: x.url, Header: x.header.Clone(), Body: []byte(x.body), Chunked: x.framing == chunked,
		CACert: r.cfg.CACert, Status: x.status, ResponseHeader: r.hideHeader(x.responseHeader), ResponseBody: []byte(r.hide(string(x.responseBody)))}
	if x.err != nil {
		e.Error = r.hide(x.err.Error())
	}
	return e
}

// randomHex returns n random bytes as 2n hex digits: the run's tag.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on the systems Go supports
	}
	return hex.EncodeToString(b)
}
