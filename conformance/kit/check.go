package kit

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A failure is a rule that does not hold: what was expected of the answer to one request, and what
// came back.
type failure struct {
	exchange *reply
	expected string
	got      string
}

func (f *failure) Error() string { return "expected " + f.expected + ", got " + f.got }

func failf(x *reply, expected, got string) error {
	return &failure{exchange: x, expected: expected, got: got}
}

// A skip is a rule that could not be checked, and why; exchange is the answer that stopped it, if
// one did. A must rule that could not be checked fails the run (runner.check).
type skip struct {
	reason   string
	exchange *reply
}

func (s *skip) Error() string { return s.reason }

func skipf(format string, args ...any) error { return &skip{reason: fmt.Sprintf(format, args...)} }

// cannotRun is the skip of a rule that an answer stopped before its check: x is that answer.
func cannotRun(x *reply, format string, args ...any) error {
	return &skip{reason: fmt.Sprintf(format, args...), exchange: x}
}

// firstError returns the first of errs that is not nil: checks read as a list of what must hold.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// summary tells the status of an answer and the start of its body, for a failure's "got".
func (x *reply) summary() string {
	if x.err != nil {
		return "no answer: " + x.err.Error()
	}
	s := fmt.Sprintf("%d %s", x.status, http.StatusText(x.status))
	if len(x.responseBody) > 0 {
		s += ", body " + excerpt(x.responseBody)
	}
	return s
}

// excerpt shows a body in a line, quoted when it holds bytes that would not print, and cut short
// when it is long.
func excerpt(body []byte) string {
	const most = 200
	s := string(body)
	if !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
		s = strconv.Quote(s)
	}
	if len(s) > most {
		return strings.ToValidUTF8(s[:most], "") + fmt.Sprintf("... (%d bytes)", len(body)) // no character cut in two
	}
	return s
}

// statusLine is the status of an answer, or why there is none.
func (x *reply) statusLine() string {
	if x.err != nil {
		return "nothing (" + x.err.Error() + ")"
	}
	return fmt.Sprintf("%d %s", x.status, http.StatusText(x.status))
}

// statusIs checks the answer's status is one of want.
func (x *reply) statusIs(want ...int) error {
	if x.err == nil && slices.Contains(want, x.status) {
		return nil
	}
	names := make([]string, len(want))
	for i, w := range want {
		names[i] = fmt.Sprintf("%d %s", w, http.StatusText(w))
	}
	return failf(x, strings.Join(names, " or "), x.summary())
}

// headerIs checks that the answer has exactly one line of the header, with this value.
func (x *reply) headerIs(name, want string) error {
	if got := x.responseHeader.Values(name); len(got) != 1 || got[0] != want {
		return failf(x, name+": "+want, describeHeader(x.responseHeader, name))
	}
	return nil
}

// headerPresent checks that the answer has the header, with a value.
func (x *reply) headerPresent(name string) error {
	if strings.TrimSpace(x.responseHeader.Get(name)) == "" {
		return failf(x, "a "+name+" header", describeHeader(x.responseHeader, name)+" in "+x.summary())
	}
	return nil
}

// headerAbsent checks that the answer has no such header.
func (x *reply) headerAbsent(name string) error {
	if got := x.responseHeader.Values(name); len(got) > 0 {
		return failf(x, "no "+name+" header", describeHeader(x.responseHeader, name))
	}
	return nil
}

func describeHeader(h http.Header, name string) string {
	values := h.Values(name)
	if len(values) == 0 {
		return "no " + name + " header"
	}
	return name + ": " + strings.Join(values, "\n"+name+": ")
}

// listItems returns the comma-separated items of a header, over all its lines.
func listItems(h http.Header, name string) []string {
	var items []string
	for _, line := range h.Values(name) {
		for _, item := range strings.Split(line, ",") {
			if item = strings.TrimSpace(item); item != "" {
				items = append(items, item)
			}
		}
	}
	return items
}

// listHolds checks that a list header holds each of want, in any order and any case.
func (x *reply) listHolds(name string, want ...string) error {
	items := listItems(x.responseHeader, name)
	for _, w := range want {
		if !slices.ContainsFunc(items, func(item string) bool { return strings.EqualFold(item, w) }) {
			return failf(x, name+" naming "+strings.Join(want, ", "), describeHeader(x.responseHeader, name))
		}
	}
	return nil
}

// listIs checks that a list header holds exactly want, in any order.
func (x *reply) listIs(name string, want ...string) error {
	items := listItems(x.responseHeader, name)
	if len(items) != len(want) || x.listHolds(name, want...) != nil {
		return failf(x, name+": "+strings.Join(want, ", ")+" (in any order)", describeHeader(x.responseHeader, name))
	}
	return nil
}

// noBody checks what 204, 304 and HEAD answers must be: no body.
func (x *reply) noBody() error {
	if len(x.responseBody) > 0 {
		return failf(x, "no body", "a body of "+strconv.Itoa(len(x.responseBody))+" bytes: "+excerpt(x.responseBody))
	}
	return nil
}

// isJSON checks that the answer says Content-Type: application/json, parameters allowed, or a
// media type of JSON's own such as RFC 9457's application/problem+json (RFC 6839 §3.1).
func (x *reply) isJSON() error {
	mediaType, _, err := mime.ParseMediaType(x.responseHeader.Get("Content-Type"))
	if err != nil || mediaType != mediaTypeJSON && !(strings.HasPrefix(mediaType, "application/") && strings.HasSuffix(mediaType, "+json")) {
		return failf(x, "Content-Type: application/json", describeHeader(x.responseHeader, "Content-Type")+" on "+x.summary())
	}
	return nil
}

// succeeded checks that a request went ahead: a 2xx, whichever. Rules about the status itself say
// which one.
func (x *reply) succeeded() error {
	if x.err == nil && x.status/100 == 2 {
		return nil
	}
	return failf(x, "a 2xx: the request goes ahead", x.summary())
}

// strongTag matches a strong entity tag (RFC 9110 §8.8.3): etagc is %x21 / %x23-7E / obs-text.
var strongTag = regexp.MustCompile(`^"[\x21\x23-\x7e\x80-\xff]*"$`)

// etag returns the answer's ETag, which must be strong.
func (x *reply) etag() (string, error) {
	etag := x.responseHeader.Get("ETag")
	if len(x.responseHeader.Values("ETag")) != 1 || !strongTag.MatchString(etag) {
		return "", failf(x, `a strong ETag, such as "abc"`, describeHeader(x.responseHeader, "ETag")+" on "+x.summary())
	}
	return etag, nil
}

// every checks each answer in turn and returns the first failure.
func every(check func(*reply) error, answers ...*reply) error {
	for _, x := range answers {
		if err := check(x); err != nil {
			return err
		}
	}
	return nil
}

// statusIn returns the answers whose status is one of statuses: a rule about 405s looks only at the
// answers that are 405.
func statusIn(answers []*reply, statuses ...int) []*reply {
	var in []*reply
	for _, x := range answers {
		if x.err == nil && slices.Contains(statuses, x.status) {
			in = append(in, x)
		}
	}
	return in
}

// currentTag reads the ETag of a target by GET, strong or weak: If-None-Match compares tags
// weakly (RFC 9110 §13.1.2). Without one the rule cannot be checked.
func (c *Client) currentTag(target string) (string, error) {
	x := c.get(target)
	if x.status != http.StatusOK {
		return "", skipf("GET %s answered %s, so there is no ETag to send back", target, x.statusLine())
	}
	if x.responseHeader.Get("ETag") == "" {
		return "", skipf("GET %s has no ETag to send back: see read/etag", target)
	}
	return x.responseHeader.Get("ETag"), nil
}

// currentStrongTag reads the strong ETag of a target by GET: If-Match compares tags strongly (RFC
// 9110 §13.1.1), so a weak one never matches. Without one the rule cannot be checked.
func (c *Client) currentStrongTag(target string) (string, error) {
	x := c.get(target)
	if x.status != http.StatusOK {
		return "", skipf("GET %s answered %s, so there is no ETag to send back", target, x.statusLine())
	}
	etag, err := x.etag()
	if err != nil {
		return "", skipf("GET %s has no strong ETag to send back: see read/etag", target)
	}
	return etag, nil
}

// weak is an entity tag marked weak (RFC 9110 §8.8.3): "abc" is W/"abc".
func weak(etag string) string {
	if strings.HasPrefix(etag, "W/") {
		return etag
	}
	return "W/" + etag
}

// namesURI checks that a header (Location, Content-Location) names the URI of path on the server,
// relative or absolute (RFC 9110 §10.2.2, §8.7).
func (x *reply) namesURI(header, path string) error {
	if target, ok := x.uriOf(header); !ok || target.Path != path || target.RawQuery != "" {
		return failf(x, header+": "+path, describeHeader(x.responseHeader, header))
	}
	return nil
}

// uriOf returns the URI a header names, resolved against the request's, when it is on the same
// server: the kit sends requests to one server alone.
func (x *reply) uriOf(header string) (*url.URL, bool) {
	value := x.responseHeader.Get(header)
	base, _ := url.Parse(x.url)
	target, err := base.Parse(value)
	return target, value != "" && err == nil && target.Scheme == base.Scheme && target.Host == base.Host
}

// tagIsCurrent checks that the answer's ETag is the one a GET of path answers with now.
func (x *reply) tagIsCurrent(c *Client, path string) error {
	etag, err := x.etag()
	if err != nil {
		return err
	}
	current := c.get(path)
	if current.responseHeader.Get("ETag") != etag {
		return failf(x, "the ETag a GET of "+path+" answers with, "+current.responseHeader.Get("ETag"), "ETag: "+etag)
	}
	return nil
}

// linkValue matches a link-value of a Link header (RFC 8288 §3): the target, and its relation.
var linkValue = regexp.MustCompile(`<([^>]*)>\s*;\s*rel="?([a-z]+)"?`)

// linkTargets reads the Link header (RFC 8288): the target of each relation, as written.
func linkTargets(x *reply) map[string]string {
	targets := map[string]string{}
	for _, m := range linkValue.FindAllStringSubmatch(strings.Join(x.responseHeader.Values("Link"), ", "), -1) {
		targets[m[2]] = m[1]
	}
	return targets
}
