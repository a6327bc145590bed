package kit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
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

// isJSON checks that the answer says Content-Type: application/json, parameters allowed.
func (x *reply) isJSON() error {
	mediaType, _, err := mime.ParseMediaType(x.responseHeader.Get("Content-Type"))
	if err != nil || mediaType != mediaTypeJSON {
		return failf(x, "Content-Type: application/json", describeHeader(x.responseHeader, "Content-Type")+" on "+x.summary())
	}
	return nil
}

// errorBody checks the error body: a JSON object whose error member is a non-empty string. Its
// wording is never checked.
func (x *reply) errorBody() error {
	var body map[string]json.RawMessage
	var message string
	if json.Unmarshal(x.responseBody, &body) != nil || json.Unmarshal(body["error"], &message) != nil || strings.TrimSpace(message) == "" {
		return failf(x, `the error body, {"error": "<a message>"}`, x.summary())
	}
	return nil
}

// errorMessage is the message of an error body, or "" when there is none.
func (x *reply) errorMessage() string {
	var body struct{ Error string }
	json.Unmarshal(x.responseBody, &body)
	return body.Error
}

// fieldsAre checks the fields object of a 400: a non-empty string for each of names and no other
// member, or no fields at all when names is empty.
func (x *reply) fieldsAre(names ...string) error {
	var body struct {
		Fields map[string]json.RawMessage `json:"fields"`
	}
	json.Unmarshal(x.responseBody, &body)
	ok := len(body.Fields) == len(names)
	for _, name := range names {
		var problem string
		ok = ok && json.Unmarshal(body.Fields[name], &problem) == nil && problem != ""
	}
	if ok {
		return nil
	}
	if len(names) == 0 {
		return failf(x, "no fields member", x.summary())
	}
	return failf(x, "fields naming only "+strings.Join(names, " and ")+", each with its problem", x.summary())
}

// refused checks a request the field rules refuse: 400, with fields naming names. The error body
// itself is the errors rules' to check.
func (x *reply) refused(names ...string) error {
	return firstError(x.statusIs(http.StatusBadRequest), x.fieldsAre(names...))
}

// succeeded checks that a request went ahead: a 2xx, whichever. Rules about the status itself say
// which one.
func (x *reply) succeeded() error {
	if x.err == nil && x.status/100 == 2 {
		return nil
	}
	return failf(x, "a 2xx: the request goes ahead", x.summary())
}

// decodeUser reads the answer as a user: an object with an integer id, a name and an e-mail.
func (x *reply) decodeUser() (user, error) {
	var u struct {
		ID    json.RawMessage `json:"id"`
		Name  *string         `json:"name"`
		Email *string         `json:"email"`
	}
	if json.Unmarshal(x.responseBody, &u) != nil || u.Name == nil || u.Email == nil {
		return user{}, failf(x, `a user, {"id": <integer>, "name": "...", "email": "..."}`, x.summary())
	}
	id, err := strconv.ParseInt(string(u.ID), 10, 64) // a JSON number in integer form: "7" in quotes is a string
	if err != nil || id <= 0 {
		return user{}, failf(x, "a user whose id is a positive integer, such as 7", x.summary())
	}
	return user{ID: id, Name: *u.Name, Email: *u.Email}, nil
}

// isUser checks that the answer is this user.
func (x *reply) isUser(want user) error {
	got, err := x.decodeUser()
	if err != nil {
		return err
	}
	if got != want {
		return failf(x, "the user "+want.String(), x.summary())
	}
	return nil
}

// list is the list envelope; the paging members are nil when absent.
type list struct {
	Data       []user
	Total      int64
	Page       *int64
	PerPage    *int64
	TotalPages *int64
}

func (l list) ids() []int64 {
	ids := []int64{}
	for _, u := range l.Data {
		ids = append(ids, u.ID)
	}
	return ids
}

// decodeList reads the answer as the list envelope: data, an array of users, and total, an integer.
func (x *reply) decodeList() (list, error) {
	var raw struct {
		Data       []json.RawMessage `json:"data"`
		Total      *int64            `json:"total"`
		Page       *int64            `json:"page"`
		PerPage    *int64            `json:"per_page"`
		TotalPages *int64            `json:"total_pages"`
	}
	if err := x.statusIs(http.StatusOK); err != nil {
		return list{}, err
	}
	if json.Unmarshal(x.responseBody, &raw) != nil || raw.Data == nil || raw.Total == nil {
		return list{}, failf(x, `the list envelope, {"data": [<users>], "total": <integer>}`, x.summary())
	}
	l := list{Total: *raw.Total, Page: raw.Page, PerPage: raw.PerPage, TotalPages: raw.TotalPages}
	for _, item := range raw.Data {
		u, err := (&reply{responseBody: item}).decodeUser()
		if err != nil {
			return list{}, failf(x, "a list whose data are users", "data holding "+excerpt(item))
		}
		l.Data = append(l.Data, u)
	}
	return l, nil
}

// listIDs checks that the answer is a list of exactly these users, in this order.
func (x *reply) listIDs(want ...int64) error {
	l, err := x.decodeList()
	if err != nil {
		return err
	}
	if want == nil {
		want = []int64{}
	}
	if !slices.Equal(l.ids(), want) {
		return failf(x, "data holding the users "+l.describe(want)+", in that order", "the users "+l.describe(l.ids()))
	}
	return nil
}

// describe names users by id, each with the name and e-mail the list gives it, so that a failure
// of an order shows what was compared, not ids alone.
func (l list) describe(ids []int64) string {
	parts := []string{}
	for _, id := range ids {
		part := strconv.FormatInt(id, 10)
		if i := slices.IndexFunc(l.Data, func(u user) bool { return u.ID == id }); i >= 0 {
			part += fmt.Sprintf(" (name %q, email %q)", l.Data[i].Name, l.Data[i].Email)
		}
		parts = append(parts, part)
	}
	return "[" + strings.Join(parts, ", ") + "]"
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

// currentTag reads the ETag of a target by GET; without one the rule cannot be checked.
func (c *Client) currentTag(target string) (string, error) {
	what := "the user"
	if strings.HasPrefix(target, collection+"?") || target == collection {
		what = "the list"
	}
	x := c.get(target)
	if x.status != http.StatusOK {
		return "", skipf("GET of %s answered %s, so there is no ETag to send back", what, x.statusLine())
	}
	etag, err := x.etag()
	if err != nil {
		return "", skipf("GET of %s has no strong ETag to send back: see read/etag", what)
	}
	return etag, nil
}

// memberNames returns the names of a JSON object's members, in the order they were sent.
func memberNames(body []byte) ([]string, error) {
	decoder := json.NewDecoder(bytes.NewReader(body))
	if token, err := decoder.Token(); err != nil || token != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var names []string
	for decoder.More() {
		name, err := decoder.Token()
		if err != nil {
			return nil, err
		}
		names = append(names, name.(string))
		var value json.RawMessage
		if err := decoder.Decode(&value); err != nil {
			return nil, err
		}
	}
	if _, err := decoder.Token(); err != nil {
		return nil, err
	}
	if _, err := decoder.Token(); err != io.EOF {
		return nil, errors.New("something after the object")
	}
	return names, nil
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

// mentionsWord reports whether a message holds word with no letter, digit or _ on either side, so
// that name is not found within a longer word such as username.
func mentionsWord(message, word string) bool {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(word) + `($|[^A-Za-z0-9_])`).MatchString(message)
}
