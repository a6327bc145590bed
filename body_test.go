package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// The rules of body.go: a request body's media type, size, JSON and field rules (docs/api.md,
// "Request bodies"), proved on readJSONBody, readUserBody, decodeUserBody and the rules of each
// method: newUser, replacement and patch.

const oneMiB = 1 << 20 // 1,048,576 bytes: the largest body the API reads

// bodyRequest is a request with this body and these header pairs; an unknown length is sent as a
// chunked body is, without Content-Length.
func bodyRequest(method, target, body string, unknownLength bool, headers ...string) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if unknownLength {
		r.ContentLength = -1
		r.Body = io.NopCloser(strings.NewReader(body))
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	return r
}

// decoded is a body as decodeUserBody reads it, failing the test if it cannot.
func decoded(t *testing.T, body string) userBody {
	t.Helper()
	u, err := decodeUserBody([]byte(body))
	if err != nil {
		t.Fatalf("decodeUserBody(%s): %v", body, err)
	}
	return u
}

// describe writes the fields a write sets, "kept" for one it leaves as stored.
func describe(f userFields) string {
	show := func(s *string) string {
		if s == nil {
			return "kept"
		}
		return strconv.Quote(*s)
	}
	return "name " + show(f.name) + ", email " + show(f.email)
}

// wantProblems checks that err is the 400 of these field problems: each in fields, in this order,
// and all of them in the message, joined in the same order.
func wantProblems(t *testing.T, err error, problems ...fieldProblem) {
	t.Helper()
	sentences := make([]string, len(problems))
	for i, p := range problems {
		sentences[i] = p.problem
	}
	wantAPIError(t, err, http.StatusBadRequest, strings.Join(sentences, "; "), problems...)
}

// Each method names the media types it takes: POST and PUT application/json, PATCH also
// application/merge-patch+json (RFC 7396), in any case, with charset utf-8 or none. Anything else
// is 415, which names what the method takes, in Accept-Post for POST and Accept-Patch for PATCH.
func TestBodyInAMediaTypeTheMethodDoesNotTakeIs415(t *testing.T) {
	const (
		asJSON      = "send the body as JSON, with Content-Type: application/json"
		asJSONPatch = "send the body as JSON, with Content-Type: application/json or application/merge-patch+json"
	)
	tests := []struct {
		method      string
		contentType []string // each is one Content-Type line; nil: no Content-Type
		refusal     string   // "" when the body is taken
	}{
		{"POST", []string{"application/json"}, ""},
		{"POST", []string{"Application/JSON"}, ""},
		{"POST", []string{"application/json; charset=utf-8"}, ""},
		{"POST", []string{`application/json; charset="UTF-8"`}, ""},
		{"POST", nil, asJSON},
		{"POST", []string{""}, asJSON},
		{"POST", []string{"text/plain"}, asJSON},
		{"POST", []string{"text/json"}, asJSON},
		{"POST", []string{"application/json;;"}, asJSON},
		{"POST", []string{"application/json; charset=iso-8859-1"}, asJSON},
		{"POST", []string{"application/json; charset=utf-16"}, asJSON},
		{"POST", []string{"application/merge-patch+json"}, asJSON},
		{"PUT", []string{"application/json"}, ""},
		{"PUT", []string{"text/plain"}, asJSON},
		{"PUT", []string{"application/merge-patch+json"}, asJSON},
		{"PUT", []string{"application/json; charset=latin1"}, asJSON},
		{"PATCH", []string{"application/json"}, ""},
		{"PATCH", []string{"application/merge-patch+json"}, ""},
		{"PATCH", []string{"application/merge-patch+json; charset=utf-8"}, ""},
		{"PATCH", nil, asJSONPatch},
		{"PATCH", []string{"text/plain"}, asJSONPatch},
		{"PATCH", []string{"application/json-patch+json"}, asJSONPatch},
		{"PATCH", []string{"application/merge-patch+json; charset=latin1"}, asJSONPatch},
	}
	acceptHeader := map[string][]string{
		"POST":  {"Accept-Post", "application/json"},
		"PATCH": {"Accept-Patch", "application/json, application/merge-patch+json"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.method, " ", tt.contentType), func(t *testing.T) {
			body := userJSON("Carol", "carol@example.com")
			var headers []string
			for _, line := range tt.contentType {
				headers = append(headers, "Content-Type", line)
			}
			got, err := readJSONBody(httptest.NewRecorder(), bodyRequest(tt.method, "/api/users/1", body, false, headers...))
			if tt.refusal == "" {
				if err != nil || string(got) != body {
					t.Errorf("read %q, %v; want the body", got, err)
				}
				return
			}
			e := wantAPIError(t, err, http.StatusUnsupportedMediaType, tt.refusal)
			if accept, ok := acceptHeader[tt.method]; ok {
				wantHeader(t, e.header, accept[0], accept[1])
			}
			if len(e.header) != len(acceptHeader[tt.method])/2 {
				t.Errorf("the 415 of %s carries %v", tt.method, e.header)
			}
		})
	}
}

// A coded body (gzip, say) is refused like a media type the method does not take: POST still names
// what it takes in Accept-Post and PATCH in Accept-Patch (docs/api.md, "Request bodies", rule 1).
func TestBodyWithAContentEncodingIs415(t *testing.T) {
	for _, tt := range []struct {
		method, contentType, encoding string
		accept                        []string // the header that names what the method takes, and its value
	}{
		{"POST", "application/json", "gzip", []string{"Accept-Post", "application/json"}},
		{"PATCH", "application/merge-patch+json", "br", []string{"Accept-Patch", "application/json, application/merge-patch+json"}},
		{"PUT", "application/json", "identity", nil},
	} {
		r := bodyRequest(tt.method, "/api/users/1", `{"name":"Ann Lee"}`, false, "Content-Type", tt.contentType, "Content-Encoding", tt.encoding)
		_, err := readJSONBody(httptest.NewRecorder(), r)
		e := wantAPIError(t, err, http.StatusUnsupportedMediaType, "send the body uncompressed, without a Content-Encoding")
		if tt.accept != nil {
			wantHeader(t, e.header, tt.accept[0], tt.accept[1])
		}
	}
}

// The body is read whole before it is judged, so its size decides before its content does: 1 MiB
// is read, one byte more is 413, whether its length is declared or not.
func TestBodyOfExactly1MiBIsReadAndOneByteMoreIs413(t *testing.T) {
	tests := []struct {
		name          string
		size          int
		unknownLength bool
		declared      int64 // a Content-Length that differs from the body's, or 0
		want          int   // the size read, or 413
	}{
		{"exactly 1 MiB", oneMiB, false, 0, oneMiB},
		{"exactly 1 MiB, length unknown", oneMiB, true, 0, oneMiB},
		{"1 MiB + 1", oneMiB + 1, false, 0, 413},
		{"1 MiB + 1, length unknown", oneMiB + 1, true, 0, 413},
		{"a length over 1 MiB declared is refused before a byte is read", 2, false, oneMiB + 1, 413},
		{"an empty body", 0, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bodyRequest("POST", "/api/users", strings.Repeat("x", tt.size), tt.unknownLength, "Content-Type", "application/json")
			if tt.declared != 0 {
				r.ContentLength = tt.declared
			}
			got, err := readJSONBody(httptest.NewRecorder(), r)
			if tt.want == http.StatusRequestEntityTooLarge {
				wantAPIError(t, err, http.StatusRequestEntityTooLarge, "the body is larger than 1 MiB (1048576 bytes)")
				return
			}
			if err != nil || len(got) != tt.want {
				t.Errorf("read %d bytes, %v; want %d", len(got), err, tt.want)
			}
		})
	}
}

// A body that ends before its declared length, or breaks off while chunked, is 400: the service
// never judges a part of a body as if it were all of it.
func TestBodyCutShortIs400(t *testing.T) {
	for _, length := range []int64{40, -1} { // declared, and unknown (chunked)
		body := io.MultiReader(strings.NewReader(`{"name":"Cy","email":"cy@`), iotest.ErrReader(io.ErrUnexpectedEOF))
		r := httptest.NewRequest("POST", "/api/users", body)
		r.ContentLength = length
		r.Header.Set("Content-Type", "application/json")
		_, err := readJSONBody(httptest.NewRecorder(), r)
		wantAPIError(t, err, http.StatusBadRequest, "the body could not be read to its end")
	}
}

// readUserBody judges a write's body in the order of docs/api.md, "The order of the checks": the
// media type (415), the size (413), the query (400), then what the body holds (400).
func TestUserBodyIsJudgedByMediaTypeThenSizeThenQueryThenContent(t *testing.T) {
	huge := strings.Repeat("x", oneMiB+1)
	tests := []struct {
		name                string
		target, body, ctype string
		status              int
		message             string
	}{
		{"text/plain, too large, a query, not an object", "/api/users?x=1", huge, "text/plain", 415,
			"send the body as JSON, with Content-Type: application/json"},
		{"too large, a query, not an object", "/api/users?x=1", huge, "application/json", 413,
			"the body is larger than 1 MiB (1048576 bytes)"},
		{"a query, not an object", "/api/users?x=1", "[]", "application/json", 400,
			`this request takes no query parameters, but the query has "x": only the list (GET /api/users) takes page, per_page, q, email and sort`},
		{"not an object", "/api/users", "[]", "application/json", 400,
			`the body must be a JSON object, such as {"name": "Ann", "email": "ann@example.com"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readUserBody(httptest.NewRecorder(), bodyRequest("POST", tt.target, tt.body, true, "Content-Type", tt.ctype))
			wantAPIError(t, err, tt.status, tt.message)
		})
	}
}

// Each way a body can fail to be one JSON object has its own 400 and message (docs/api.md, "Request
// bodies", rule 3). A syntax error says where, in our words around encoding/json's: "*" below
// stands for its description, which must not show Go's names.
func TestMalformedBodyIs400WithAMessageNamingTheProblem(t *testing.T) {
	const (
		empty     = `the body is empty: send a JSON object such as {"name": "Ann", "email": "ann@example.com"}`
		notObject = `the body must be a JSON object, such as {"name": "Ann", "email": "ann@example.com"}`
		cutOff    = "the body is not valid JSON: it ends before the object does"
		trailing  = "the body must hold one JSON object and nothing after it"
		badUTF8   = "the body is not valid UTF-8"
	)
	valid := `{"name":"Carol","email":"carol@example.com"}`
	tests := []struct {
		name    string
		body    string
		message string
	}{
		{"empty body", "", empty},
		{"only white space", " \r\n\t ", empty},
		{"byte-order mark", "\uFEFF" + valid, "the body starts with a byte-order mark: send JSON without one (RFC 8259 §8.1)"},
		{"invalid UTF-8 in a string", `{"name":"Car` + "\xff" + `ol","email":"carol@example.com"}`, badUTF8},
		{"invalid UTF-8 outside strings", valid + "\xc3", badUTF8},
		{"two commas", `{"name":"Carol",,"email":"carol@example.com"}`, "the body is not valid JSON: * (at byte 16)"},
		{"a missing colon", `{"name" "Carol"}`, "the body is not valid JSON: * (at byte 8)"},
		{"a comma before the brace", `{"name":"Carol",}`, "the body is not valid JSON: * (at byte 16)"},
		{"a single quote", `{'name':'Carol'}`, "the body is not valid JSON: * (at byte 1)"},
		{"a cut-off object", `{"name":"Carol","email":"carol@exa`, cutOff},
		{"an object without its brace", `{"name":"Carol"`, cutOff},
		{"a brace alone", `{`, cutOff},
		{"an unknown field is named", `{"name":"Carol","email":"carol@example.com","age":36}`, `unknown field "age": a user has only name and email`},
		{"member names are case-sensitive", `{"Name":"Carol","email":"carol@example.com"}`, `unknown field "Name": a user has only name and email`},
		{"a long unknown field is cut short", `{"` + strings.Repeat("a", 41) + `":1}`,
			`unknown field "` + strings.Repeat("a", 40) + `...": a user has only name and email`},
		{"a member given twice", `{"name":"Carol","name":"Caroline","email":"carol@example.com"}`,
			`the member "name" appears twice: each member may appear once (RFC 8259 §4)`},
		{"a member given twice, null first", `{"email":null,"name":"Carol","email":"carol@example.com"}`,
			`the member "email" appears twice: each member may appear once (RFC 8259 §4)`},
		{"id given twice", `{"id":1,"id":1,"name":"Carol"}`, `the member "id" appears twice: each member may appear once (RFC 8259 §4)`},
		{"null", `null`, notObject},
		{"an array", `[` + valid + `]`, notObject},
		{"a string", `"Carol"`, notObject},
		{"a number", `42`, notObject},
		{"a second object after the first", valid + ` {}`, trailing},
		{"text after the object", valid + `x`, trailing},
		{"a comma after the object", valid + `,`, trailing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeUserBody([]byte(tt.body))
			before, after, described := strings.Cut(tt.message, "*")
			if !described {
				wantAPIError(t, err, http.StatusBadRequest, tt.message)
				return
			}
			var e *apiError
			if !errors.As(err, &e) || e.status != http.StatusBadRequest || e.fields != nil {
				t.Fatalf("error %v, want a 400 without fields", err)
			}
			description := strings.TrimSuffix(strings.TrimPrefix(e.message, before), after)
			if !strings.HasPrefix(e.message, before) || !strings.HasSuffix(e.message, after) || description == "" {
				t.Errorf("message %q, want %q with a description for *", e.message, tt.message)
			}
			for _, leak := range []string{"Go value", "struct", "main.", "json: "} {
				if strings.Contains(description, leak) {
					t.Errorf("message %q leaks Go's wording %q", e.message, leak)
				}
			}
		})
	}
}

// White space around the object is not part of it (RFC 8259 §2), and null is a value that was given.
func TestBodyIsReadAsTheMembersSent(t *testing.T) {
	u := decoded(t, " \r\n\t"+`{"email":null,"name":"Carol","id":7}`+"\n\n \t")
	if !u.name.given || u.name.null || u.name.text != "Carol" || !u.email.given || !u.email.null ||
		!u.id.given || string(u.id.raw) != "7" {
		t.Errorf("decoded %+v: want name Carol, email null and id 7, each given", u)
	}
	if u := decoded(t, `{}`); u.id.given || u.name.given || u.email.given {
		t.Errorf("decoded %+v from {}: want nothing given", u)
	}
}

// A wrong type stops decoding, so only that field is reported, even when another field also fails.
func TestWrongTypeIsReportedOnItsOwn(t *testing.T) {
	for _, tt := range []struct{ body, field string }{
		{`{"name":5,"email":"not an address"}`, "name"},
		{`{"name":["Carol"],"email":"carol@example.com"}`, "name"},
		{`{"name":"","email":{"address":"carol@example.com"}}`, "email"},
		{`{"name":"Carol","email":true}`, "email"},
	} {
		_, err := decodeUserBody([]byte(tt.body))
		wantProblems(t, err, fieldProblem{tt.field, tt.field + " must be a string"})
	}
}

// id is the server's to give: a POST body may not hold one, and a PUT or PATCH body only the id of
// the path written as a JSON integer, as clients send back what they read (docs/api.md, "Request
// bodies", rule 4): 1.0 and 1e0 are other forms of the number, and are refused.
func TestIDInTheBody(t *testing.T) {
	const assigned = "id is assigned by the server: leave it out of the body"
	notThePaths := func(id int64) string {
		return fmt.Sprintf("id in the body must be the id of the path, written as the integer %d, or left out", id)
	}
	put := func(id int64) func(userBody) (userFields, error) {
		return func(u userBody) (userFields, error) { return u.replacement(id) }
	}
	patch := func(id int64) func(userBody) (userFields, error) {
		return func(u userBody) (userFields, error) { return u.patch(id) }
	}
	tests := []struct {
		name    string
		rule    func(userBody) (userFields, error)
		body    string
		refusal string // "" when the body is taken
	}{
		{"POST with an id", userBody.newUser, `{"id":3,"name":"Carol","email":"carol@example.com"}`, assigned},
		{"POST with id null", userBody.newUser, `{"id":null,"name":"Carol","email":"carol@example.com"}`, assigned},
		{"PUT with the path's id", put(1), `{"id":1,"name":"Ann Lee","email":"ann@example.com"}`, ""},
		{"PUT with the path's id as 1.0", put(1), `{"id":1.0,"name":"Ann Lee","email":"ann@example.com"}`, notThePaths(1)},
		{"PUT with the path's id as 1e0", put(1), `{"id":1e0,"name":"Ann Lee","email":"ann@example.com"}`, notThePaths(1)},
		{"PUT with another id", put(1), `{"id":2,"name":"Ann Lee","email":"ann@example.com"}`, notThePaths(1)},
		{"PUT with id null", put(1), `{"id":null,"name":"Ann Lee","email":"ann@example.com"}`, notThePaths(1)},
		{"PUT with the id as a string", put(1), `{"id":"1","name":"Ann Lee","email":"ann@example.com"}`, notThePaths(1)},
		{"PUT with id 1.5", put(1), `{"id":1.5,"name":"Ann Lee","email":"ann@example.com"}`, notThePaths(1)},
		{"PUT with 2^53 + 1 as an integer", put(1<<53 + 1), `{"id":9007199254740993,"name":"Ann","email":"ann@example.com"}`, ""},
		{"PATCH with the path's id", patch(2), `{"id":2,"name":"Bob Lee"}`, ""},
		{"PATCH with another id", patch(2), `{"id":1,"name":"Bob Lee"}`, notThePaths(2)},
		{"PATCH with id null", patch(2), `{"id":null,"name":"Bob Lee"}`, notThePaths(2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.rule(decoded(t, tt.body))
			if tt.refusal == "" {
				if err != nil {
					t.Errorf("%v, want the body taken", err)
				}
				return
			}
			wantAPIError(t, err, http.StatusBadRequest, tt.refusal)
		})
	}
}

// The field rules of docs/api.md, "Request bodies", step 5, on a POST body: the fields set, or the
// 400 with every failing field, name first whatever the order of the body.
func TestFieldRules(t *testing.T) {
	email254 := strings.Repeat("a", 64) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." +
		strings.Repeat("d", 57) + ".com"
	if len(email254) != 254 {
		t.Fatalf("the 254-byte address has %d bytes", len(email254))
	}
	var (
		nameTooLong    = fieldProblem{"name", "name must be at most 100 characters"}
		nameEmpty      = fieldProblem{"name", "name must not be empty"}
		nameControl    = fieldProblem{"name", "name must not contain control characters"}
		nameRequired   = fieldProblem{"name", "name is required"}
		nameNull       = fieldProblem{"name", "name is required and cannot be null"}
		emailTooLong   = fieldProblem{"email", "email must be at most 254 bytes"}
		emailNotPlain  = fieldProblem{"email", "email must be a plain address such as ann@example.com"}
		emailEmpty     = fieldProblem{"email", "email must not be empty"}
		emailRequired  = fieldProblem{"email", "email is required"}
		emailNull      = fieldProblem{"email", "email is required and cannot be null"}
		carolAtExample = `"carol@example.com"`
	)
	tests := []struct {
		name     string
		body     string
		set      string         // the fields set, when the body passes
		problems []fieldProblem // in the order of the 400, when it does not
	}{
		{name: "name and email are trimmed", body: userJSON("  Carol Day \t", " carol@example.com\n"),
			set: `name "Carol Day", email ` + carolAtExample},
		{name: "Unicode white space is trimmed", body: userJSON("\u00a0\u3000Carol\u2003", "\u2009carol@example.com\u00a0"),
			set: `name "Carol", email ` + carolAtExample},
		{name: "white space inside a name is kept", body: userJSON("Carol  Ann Day", "carol@example.com"),
			set: `name "Carol  Ann Day", email ` + carolAtExample},
		{name: "a name of 100 code points", body: userJSON(strings.Repeat("é", 100), "carol@example.com"),
			set: `name "` + strings.Repeat("é", 100) + `", email ` + carolAtExample},
		{name: "a name of 100 code points once trimmed", body: userJSON("  "+strings.Repeat("x", 100)+"  ", "carol@example.com"),
			set: `name "` + strings.Repeat("x", 100) + `", email ` + carolAtExample},
		{name: "a name of 101 code points", body: userJSON(strings.Repeat("é", 101), "carol@example.com"), problems: []fieldProblem{nameTooLong}},
		{name: "an empty name", body: userJSON("", "carol@example.com"), problems: []fieldProblem{nameEmpty}},
		{name: "a name of white space only", body: userJSON(" \t\u00a0", "carol@example.com"), problems: []fieldProblem{nameEmpty}},
		{name: "a name with BEL", body: `{"name":"Car\u0007ol","email":"carol@example.com"}`, problems: []fieldProblem{nameControl}},
		{name: "a name with a tab inside", body: `{"name":"Carol\tDay","email":"carol@example.com"}`, problems: []fieldProblem{nameControl}},
		{name: "a name with a line break inside", body: `{"name":"Carol\nDay","email":"carol@example.com"}`, problems: []fieldProblem{nameControl}},
		{name: "a name with DEL", body: `{"name":"Carol\u007f","email":"carol@example.com"}`, problems: []fieldProblem{nameControl}},
		{name: "a body without name", body: `{"email":"carol@example.com"}`, problems: []fieldProblem{nameRequired}},
		{name: "name null", body: `{"name":null,"email":"carol@example.com"}`, problems: []fieldProblem{nameNull}},
		{name: "an email of 254 bytes", body: userJSON("Carol", email254), set: `name "Carol", email "` + email254 + `"`},
		{name: "an email of 254 bytes once trimmed", body: userJSON("Carol", "  "+email254+"  "), set: `name "Carol", email "` + email254 + `"`},
		{name: "an email of 255 bytes", body: userJSON("Carol", "a"+email254), problems: []fieldProblem{emailTooLong}},
		{name: "an email keeps its case", body: userJSON("Carol", "Carol.Day@Example.COM"), set: `name "Carol", email "Carol.Day@Example.COM"`},
		{name: "an email without @", body: userJSON("Carol", "carol"), problems: []fieldProblem{emailNotPlain}},
		{name: "an email with a display name", body: userJSON("Carol", "Carol <carol@example.com>"), problems: []fieldProblem{emailNotPlain}},
		{name: "an email in angle brackets", body: userJSON("Carol", "<carol@example.com>"), problems: []fieldProblem{emailNotPlain}},
		{name: "an email with a domain in brackets", body: userJSON("Carol", "carol@[192.0.2.1]"), problems: []fieldProblem{emailNotPlain}},
		{name: "two addresses", body: userJSON("Carol", "carol@example.com, ann@example.com"), problems: []fieldProblem{emailNotPlain}},
		{name: "an empty email", body: userJSON("Carol", ""), problems: []fieldProblem{emailEmpty}},
		{name: "a body without email", body: `{"name":"Carol"}`, problems: []fieldProblem{emailRequired}},
		{name: "email null", body: `{"name":"Carol","email":null}`, problems: []fieldProblem{emailNull}},
		{name: "an empty object", body: `{}`, problems: []fieldProblem{nameRequired, emailRequired}},
		{name: "both fail, each reported, name first", body: `{"email":"not an address","name":""}`,
			problems: []fieldProblem{nameEmpty, emailNotPlain}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields, err := decoded(t, tt.body).newUser()
			if tt.problems != nil {
				wantProblems(t, err, tt.problems...)
				return
			}
			if err != nil || describe(fields) != tt.set {
				t.Errorf("set %s, %v; want %s", describe(fields), err, tt.set)
			}
		})
	}
}

// PUT replaces the whole user, so it needs both fields, which the field rules trim as on POST.
func TestPutNeedsBothFields(t *testing.T) {
	for _, tt := range []struct {
		body     string
		set      string
		problems []fieldProblem
	}{
		{userJSON(" Ann Lee ", " Ann.Lee@example.com "), `name "Ann Lee", email "Ann.Lee@example.com"`, nil},
		{`{"name":"Ann Lee"}`, "", []fieldProblem{{"email", "email is required"}}},
		{`{"email":"ann@example.com"}`, "", []fieldProblem{{"name", "name is required"}}},
		{`{}`, "", []fieldProblem{{"name", "name is required"}, {"email", "email is required"}}},
	} {
		fields, err := decoded(t, tt.body).replacement(1)
		if tt.problems != nil {
			wantProblems(t, err, tt.problems...)
			continue
		}
		if err != nil || describe(fields) != tt.set {
			t.Errorf("PUT %s: set %s, %v; want %s", tt.body, describe(fields), err, tt.set)
		}
	}
}

// A PATCH (a JSON Merge Patch, RFC 7396) changes only the fields it names, at least one; null would
// remove a field, and both are required.
func TestPatchNeedsAtLeastOneFieldAndRefusesNull(t *testing.T) {
	const changesNothing = "the patch changes nothing: give name, email or both"
	tests := []struct {
		name     string
		body     string
		set      string
		refusal  string // a refusal without fields
		problems []fieldProblem
	}{
		{name: "name only keeps the email", body: `{"name":" Ann Lee "}`, set: `name "Ann Lee", email kept`},
		{name: "email only keeps the name", body: `{"email":"ann.lee@example.com"}`, set: `name kept, email "ann.lee@example.com"`},
		{name: "both", body: `{"email":"al@example.com","name":"Al"}`, set: `name "Al", email "al@example.com"`},
		{name: "an empty patch changes nothing", body: `{}`, refusal: changesNothing},
		{name: "only the id changes nothing", body: `{"id":1}`, refusal: changesNothing},
		{name: "name null cannot remove a required field", body: `{"name":null}`,
			problems: []fieldProblem{{"name", "name is required and cannot be null"}}},
		{name: "email null cannot remove a required field", body: `{"email":null,"name":"Ann"}`,
			problems: []fieldProblem{{"email", "email is required and cannot be null"}}},
		{name: "an empty name", body: `{"name":""}`, problems: []fieldProblem{{"name", "name must not be empty"}}},
		{name: "a bad email", body: `{"email":"Ann <ann@example.com>"}`,
			problems: []fieldProblem{{"email", "email must be a plain address such as ann@example.com"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields, err := decoded(t, tt.body).patch(1)
			switch {
			case tt.refusal != "":
				wantAPIError(t, err, http.StatusBadRequest, tt.refusal)
			case tt.problems != nil:
				wantProblems(t, err, tt.problems...)
			case err != nil || describe(fields) != tt.set:
				t.Errorf("set %s, %v; want %s", describe(fields), err, tt.set)
			}
		})
	}
}
