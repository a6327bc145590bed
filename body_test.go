package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"unicode"
	"unicode/utf8"
)

// The rules of body.go: a request body's media type, size, JSON and field rules (docs/api.md,
// "Request bodies"), proved on readJSONBody, readUserBody, decodeUserBody and the rules of each
// method: newUser, replacement and patch. An error is compared with the *apiError the client
// would get, whole: status, message, fields and headers.

// bodyDecoded is a body as decodeUserBody reads it, failing the test if it cannot.
func bodyDecoded(t *testing.T, body string) userBody {
	t.Helper()
	u, err := decodeUserBody([]byte(body))
	if err != nil {
		t.Fatalf("decodeUserBody(%s): %v", body, err)
	}
	return u
}

// bodyFieldsText shows the fields a write sets, for a message: "kept" for one it leaves as stored.
func bodyFieldsText(f userFields) string {
	show := func(s *string) string {
		if s == nil {
			return "kept"
		}
		return strconv.Quote(*s)
	}
	return "name " + show(f.name) + ", email " + show(f.email)
}

// bodyProblems is the 400 of a body whose fields break their rules: each problem in fields, and
// all of them in the message, name first.
func bodyProblems(name, email string) *apiError {
	var sentences []string
	for _, problem := range []string{name, email} {
		if problem != "" {
			sentences = append(sentences, problem)
		}
	}
	return &apiError{status: http.StatusBadRequest, message: strings.Join(sentences, "; "),
		fields: &fieldProblems{Name: name, Email: email}}
}

// Each method names the media types it takes: POST and PUT application/json, PATCH also
// application/merge-patch+json (RFC 7396), in any case, with charset utf-8 or none. Anything else
// is 415, which names what the method takes, in Accept-Post for POST and Accept-Patch for PATCH;
// another charset is named as the problem.
func TestMediaTypeNotTakenIs415(t *testing.T) {
	const (
		asJSON      = "send the body as JSON, with Content-Type: application/json"
		asJSONPatch = "send the body as JSON, with Content-Type: application/json or application/merge-patch+json"
		inUTF8      = "send the body as JSON in UTF-8: charset may only be utf-8"
	)
	refusedPost := &apiError{status: 415, message: asJSON, header: http.Header{"Accept-Post": {"application/json"}}}
	refusedPut := &apiError{status: 415, message: asJSON}
	refusedPatch := &apiError{status: 415, message: asJSONPatch,
		header: http.Header{"Accept-Patch": {"application/json, application/merge-patch+json"}}}
	refusedCharset := map[string]*apiError{
		"POST":  {status: 415, message: inUTF8, header: refusedPost.header},
		"PUT":   {status: 415, message: inUTF8},
		"PATCH": {status: 415, message: inUTF8, header: refusedPatch.header},
	}
	tests := []struct {
		method      string
		contentType []string  // each is one Content-Type line; nil: no Content-Type
		refusal     *apiError // nil when the body is taken
	}{
		{"POST", []string{"application/json"}, nil},
		{"POST", []string{"Application/JSON"}, nil},
		{"POST", []string{"application/json; charset=utf-8"}, nil},
		{"POST", []string{`application/json; charset="UTF-8"`}, nil},
		{"POST", nil, refusedPost},
		{"POST", []string{""}, refusedPost},
		{"POST", []string{"text/plain"}, refusedPost},
		{"POST", []string{"text/json"}, refusedPost},
		{"POST", []string{"application/json;;"}, refusedPost},
		{"POST", []string{"application/json; charset=iso-8859-1"}, refusedCharset["POST"]},
		{"POST", []string{"application/json; charset=utf-16"}, refusedCharset["POST"]},
		{"POST", []string{"application/merge-patch+json"}, refusedPost},
		{"PUT", []string{"application/json"}, nil},
		{"PUT", []string{"text/plain"}, refusedPut},
		{"PUT", []string{"application/merge-patch+json"}, refusedPut},
		{"PUT", []string{"application/json; charset=latin1"}, refusedCharset["PUT"]},
		{"PATCH", []string{"application/json"}, nil},
		{"PATCH", []string{"application/merge-patch+json"}, nil},
		{"PATCH", []string{"application/merge-patch+json; charset=utf-8"}, nil},
		{"PATCH", nil, refusedPatch},
		{"PATCH", []string{"text/plain"}, refusedPatch},
		{"PATCH", []string{"application/json-patch+json"}, refusedPatch},
		{"PATCH", []string{"application/merge-patch+json; charset=latin1"}, refusedCharset["PATCH"]},
	}
	for _, tt := range tests {
		name := tt.method + " " + strings.ReplaceAll(fmt.Sprintf("%q", tt.contentType), "/", " ")
		t.Run(name, func(t *testing.T) {
			const body = `{"name":"Carol","email":"carol@example.com"}`
			r := httptest.NewRequest(tt.method, "/api/users/1", strings.NewReader(body))
			for _, line := range tt.contentType {
				r.Header.Add("Content-Type", line)
			}
			got, err := readJSONBody(httptest.NewRecorder(), r)
			if tt.refusal == nil {
				if err != nil || string(got) != body {
					t.Errorf("read %q, %v; want the body", got, err)
				}
				return
			}
			if !reflect.DeepEqual(err, tt.refusal) {
				t.Errorf("error %#v\nwant  %#v", err, tt.refusal)
			}
		})
	}
}

// A coded body (gzip, say) is refused like a media type the method does not take: POST still names
// what it takes in Accept-Post and PATCH in Accept-Patch (docs/api.md, "Request bodies", rule 1).
func TestContentEncodingIs415(t *testing.T) {
	const uncompressed = "send the body uncompressed, without a Content-Encoding"
	tests := []struct {
		method, contentType, encoding string
		want                          *apiError
	}{
		{"POST", "application/json", "gzip",
			&apiError{status: 415, message: uncompressed, header: http.Header{"Accept-Post": {"application/json"}}}},
		{"PATCH", "application/merge-patch+json", "br",
			&apiError{status: 415, message: uncompressed, header: http.Header{"Accept-Patch": {"application/json, application/merge-patch+json"}}}},
		{"PUT", "application/json", "identity", &apiError{status: 415, message: uncompressed}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.encoding, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/api/users/1", strings.NewReader(`{"name":"Ann Lee"}`))
			r.Header.Set("Content-Type", tt.contentType)
			r.Header.Set("Content-Encoding", tt.encoding)
			if _, err := readJSONBody(httptest.NewRecorder(), r); !reflect.DeepEqual(err, tt.want) {
				t.Errorf("error %#v\nwant  %#v", err, tt.want)
			}
		})
	}
}

// The body is read whole before it is judged, so its size decides before its content does: 1 MiB
// is read, one byte more is 413, whether its length is declared or not.
func TestBodyOver1MiBIs413(t *testing.T) {
	const oneMiB = 1 << 20 // 1,048,576 bytes: the largest body the API reads
	tests := []struct {
		name          string
		size          int
		unknownLength bool  // sent as a chunked body is, without Content-Length
		declared      int64 // a Content-Length that differs from the body's, or 0
		tooLarge      bool  // 413; otherwise the whole body is read
	}{
		{"exactly 1 MiB", oneMiB, false, 0, false},
		{"exactly 1 MiB, length unknown", oneMiB, true, 0, false},
		{"1 MiB + 1", oneMiB + 1, false, 0, true},
		{"1 MiB + 1, length unknown", oneMiB + 1, true, 0, true},
		{"over 1 MiB declared, 2 bytes sent", 2, false, oneMiB + 1, true}, // refused before a byte is read
		{"an empty body", 0, false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/users", strings.NewReader(strings.Repeat("x", tt.size)))
			r.Header.Set("Content-Type", "application/json")
			if tt.unknownLength {
				r.ContentLength = -1
			}
			if tt.declared != 0 {
				r.ContentLength = tt.declared
			}
			got, err := readJSONBody(httptest.NewRecorder(), r)
			if tt.tooLarge {
				if err != errBodyTooLarge {
					t.Errorf("error %#v, want the 413 %q", err, errBodyTooLarge.message)
				}
				return
			}
			if err != nil || len(got) != tt.size {
				t.Errorf("read %d bytes, %v; want %d", len(got), err, tt.size)
			}
		})
	}
	if errBodyTooLarge.status != 413 || errBodyTooLarge.message != "the body is larger than 1 MiB (1048576 bytes)" {
		t.Errorf("a body too large is answered %d %q", errBodyTooLarge.status, errBodyTooLarge.message)
	}
}

// A body that ends before its declared length, or breaks off while chunked, is 400: the service
// never judges a part of a body as if it were all of it.
func TestBodyCutShortIs400(t *testing.T) {
	for _, tt := range []struct {
		name   string
		length int64
	}{
		{"declared length", 40},
		{"chunked", -1}, // the length unknown
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := io.MultiReader(strings.NewReader(`{"name":"Cy","email":"cy@`), iotest.ErrReader(io.ErrUnexpectedEOF))
			r := httptest.NewRequest("POST", "/api/users", body)
			r.ContentLength = tt.length
			r.Header.Set("Content-Type", "application/json")
			_, err := readJSONBody(httptest.NewRecorder(), r)
			if want := badRequest("the body could not be read to its end"); !reflect.DeepEqual(err, want) {
				t.Errorf("error %#v, want %#v", err, want)
			}
		})
	}
}

// readUserBody judges a write's body in the order of docs/api.md, "The order of the checks": the
// media type (415), the size (413), the query (400), then what the body holds (400).
func TestBodyChecks415Then413Then400(t *testing.T) {
	huge := strings.Repeat("x", maxBodyBytes+1)
	tests := []struct {
		name                string
		target, body, ctype string
		want                *apiError
	}{
		{"text/plain, too large, a query, not an object", "/api/users?x=1", huge, "text/plain",
			&apiError{status: 415, message: "send the body as JSON, with Content-Type: application/json",
				header: http.Header{"Accept-Post": {"application/json"}}}},
		{"too large, a query, not an object", "/api/users?x=1", huge, "application/json", errBodyTooLarge},
		{"a query, not an object", "/api/users?x=1", "[]", "application/json",
			badRequest(`this request takes no query parameters, but the query has "x": only the list (GET /api/users) takes page, per_page, q, email and sort`)},
		{"not an object", "/api/users", "[]", "application/json",
			badRequest(`the body must be a JSON object, such as {"name": "Ann", "email": "ann@example.com"}`)},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.name, "/", " "), func(t *testing.T) {
			r := httptest.NewRequest("POST", tt.target, strings.NewReader(tt.body))
			r.Header.Set("Content-Type", tt.ctype)
			r.ContentLength = -1 // chunked: the size is learnt by reading
			if _, err := readUserBody(httptest.NewRecorder(), r); !reflect.DeepEqual(err, tt.want) {
				t.Errorf("error %#v\nwant  %#v", err, tt.want)
			}
		})
	}
}

// Each way a body can fail to be one JSON object has its own 400 and message (docs/api.md, "Request
// bodies", rule 3). A syntax error says where, in our words around encoding/json's: "*" below
// stands for its description, which must not show Go's names.
func TestMalformedBodyIs400(t *testing.T) {
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
		{"a cut-off object", `{"name":"Carol","email":"carol@exa`, cutOff + " (at byte 34, its length)"},
		{"an object without its brace", `{"name":"Carol"`, cutOff + " (at byte 15, its length)"},
		{"a brace alone", `{`, cutOff + " (at byte 1, its length)"},
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
				if want := badRequest(tt.message); !reflect.DeepEqual(err, want) {
					t.Errorf("error %#v\nwant  %#v", err, want)
				}
				return
			}
			var e *apiError
			if !errors.As(err, &e) || e.status != http.StatusBadRequest || e.fields != nil || e.header != nil {
				t.Fatalf("error %#v, want a 400 without fields or headers", err)
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

// White space around the object is not part of it (RFC 8259 §2), and null is a value that was
// given: each member is read as sent.
func TestBodyIsReadAsTheMembersSent(t *testing.T) {
	u := bodyDecoded(t, " \r\n\t"+`{"email":null,"name":"Carol","id":7}`+"\n\n \t")
	want := userBody{id: []byte("7"), name: bodyField{given: true, text: "Carol"}, email: bodyField{given: true, null: true}}
	if !reflect.DeepEqual(u, want) {
		t.Errorf("decoded %+v\nwant    %+v", u, want)
	}
	if u := bodyDecoded(t, `{}`); !reflect.DeepEqual(u, userBody{}) {
		t.Errorf("decoded %+v from {}: want nothing given", u)
	}
}

// A wrong type stops decoding, so only that field is reported, even when another field also fails.
func TestWrongTypeIsReportedOnItsOwn(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		want       *apiError
	}{
		{"name a number", `{"name":5,"email":"not an address"}`, bodyProblems("name must be a string", "")},
		{"name an array", `{"name":["Carol"],"email":"carol@example.com"}`, bodyProblems("name must be a string", "")},
		{"email an object", `{"name":"","email":{"address":"carol@example.com"}}`, bodyProblems("", "email must be a string")},
		{"email true", `{"name":"Carol","email":true}`, bodyProblems("", "email must be a string")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := decodeUserBody([]byte(tt.body)); !reflect.DeepEqual(err, tt.want) {
				t.Errorf("%s: error %#v\nwant  %#v", tt.body, err, tt.want)
			}
		})
	}
}

// id is the server's to give: a POST body may not hold one, and a PUT or PATCH body only the id of
// the path written as a JSON integer, as clients send back what they read (docs/api.md, "Request
// bodies", rule 4): 1.0 and 1e0 are other forms of the number, and are refused.
func TestIDInBodyMustBeThePaths(t *testing.T) {
	assigned := badRequest("id is assigned by the server: leave it out of the body")
	notThePaths := func(id int64) *apiError {
		return badRequest(fmt.Sprintf("id in the body must be the id of the path, written as the integer %d, or left out", id))
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
		refusal *apiError // nil when the body is taken
	}{
		{"POST with an id", userBody.newUser, `{"id":3,"name":"Carol","email":"carol@example.com"}`, assigned},
		{"POST with id null", userBody.newUser, `{"id":null,"name":"Carol","email":"carol@example.com"}`, assigned},
		{"PUT with the path's id", put(1), `{"id":1,"name":"Ann Lee","email":"ann@example.com"}`, nil},
		{"PUT with the path's id as 1.0", put(1), `{"id":1.0,"name":"Ann Lee","email":"ann@example.com"}`, notThePaths(1)},
		{"PUT with the path's id as 1e0", put(1), `{"id":1e0,"name":"Ann Lee","email":"ann@example.com"}`, notThePaths(1)},
		{"PUT with another id", put(1), `{"id":2,"name":"Ann Lee","email":"ann@example.com"}`, notThePaths(1)},
		{"PUT with id null", put(1), `{"id":null,"name":"Ann Lee","email":"ann@example.com"}`, notThePaths(1)},
		{"PUT with the id as a string", put(1), `{"id":"1","name":"Ann Lee","email":"ann@example.com"}`, notThePaths(1)},
		{"PUT with id 1.5", put(1), `{"id":1.5,"name":"Ann Lee","email":"ann@example.com"}`, notThePaths(1)},
		{"PUT with 2^53 + 1 as an integer", put(1<<53 + 1), `{"id":9007199254740993,"name":"Ann","email":"ann@example.com"}`, nil},
		{"PATCH with the path's id", patch(2), `{"id":2,"name":"Bob Lee"}`, nil},
		{"PATCH with the path's id as 2.0", patch(2), `{"id":2.0,"name":"Bob Lee"}`, notThePaths(2)},
		{"PATCH with another id", patch(2), `{"id":1,"name":"Bob Lee"}`, notThePaths(2)},
		{"PATCH with id null", patch(2), `{"id":null,"name":"Bob Lee"}`, notThePaths(2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.rule(bodyDecoded(t, tt.body))
			if tt.refusal == nil {
				if err != nil {
					t.Errorf("%v, want the body taken", err)
				}
				return
			}
			if !reflect.DeepEqual(err, tt.refusal) {
				t.Errorf("error %#v\nwant  %#v", err, tt.refusal)
			}
		})
	}
}

// The field rules of docs/api.md, "Request bodies", step 5, on a POST body: the fields set,
// trimmed, or the 400 with every failing field, name first whatever the order of the body.
func TestFieldRulesReportEveryField(t *testing.T) {
	email254 := strings.Repeat("a", 64) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." +
		strings.Repeat("d", 57) + ".com"
	if len(email254) != 254 {
		t.Fatalf("the 254-byte address has %d bytes", len(email254))
	}
	const (
		nameTooLong   = "name must be at most 100 characters"
		nameEmpty     = "name must not be empty"
		nameControl   = "name must not contain control characters"
		nameRequired  = "name is required"
		nameNull      = "name is required and cannot be null"
		emailTooLong  = "email must be at most 254 bytes"
		emailNotPlain = "email must be a plain address such as ann@example.com"
		emailEmpty    = "email must not be empty"
		emailRequired = "email is required"
		emailNull     = "email is required and cannot be null"
		carol         = "carol@example.com"
	)
	// set names the fields set, when the body passes; problems the name's and email's problems,
	// when it does not.
	type set struct{ name, email string }
	type problems struct{ name, email string }
	userJSON := func(name, email string) string {
		body, _ := json.Marshal(struct {
			Name  string `json:"name"`
			Email string `json:"email"`
		}{name, email})
		return string(body)
	}
	tests := []struct {
		name     string
		body     string
		set      set
		problems problems
	}{
		{name: "name and email are trimmed", body: userJSON("  Carol Day \t", " carol@example.com\n"), set: set{"Carol Day", carol}},
		{name: "Unicode white space is trimmed", body: userJSON("\u00a0\u3000Carol\u2003", "\u2009carol@example.com\u00a0"),
			set: set{"Carol", carol}},
		{name: "white space inside a name is kept", body: userJSON("Carol  Ann Day", carol), set: set{"Carol  Ann Day", carol}},
		{name: "a name of 100 code points", body: userJSON(strings.Repeat("é", 100), carol), set: set{strings.Repeat("é", 100), carol}},
		{name: "a name of 100 code points once trimmed", body: userJSON("  "+strings.Repeat("x", 100)+"  ", carol),
			set: set{strings.Repeat("x", 100), carol}},
		{name: "a name of 101 code points", body: userJSON(strings.Repeat("é", 101), carol), problems: problems{name: nameTooLong}},
		{name: "an empty name", body: userJSON("", carol), problems: problems{name: nameEmpty}},
		{name: "a name of white space only", body: userJSON(" \t\u00a0", carol), problems: problems{name: nameEmpty}},
		{name: "a name with BEL", body: `{"name":"Car\u0007ol","email":"carol@example.com"}`, problems: problems{name: nameControl}},
		{name: "a name with a tab inside", body: `{"name":"Carol\tDay","email":"carol@example.com"}`, problems: problems{name: nameControl}},
		{name: "a name with a line break inside", body: `{"name":"Carol\nDay","email":"carol@example.com"}`, problems: problems{name: nameControl}},
		{name: "a name with DEL", body: `{"name":"Carol\u007f","email":"carol@example.com"}`, problems: problems{name: nameControl}},
		{name: "a body without name", body: `{"email":"carol@example.com"}`, problems: problems{name: nameRequired}},
		{name: "name null", body: `{"name":null,"email":"carol@example.com"}`, problems: problems{name: nameNull}},
		{name: "an email of 254 bytes", body: userJSON("Carol", email254), set: set{"Carol", email254}},
		{name: "an email of 254 bytes once trimmed", body: userJSON("Carol", "  "+email254+"  "), set: set{"Carol", email254}},
		{name: "an email of 255 bytes", body: userJSON("Carol", "a"+email254), problems: problems{email: emailTooLong}},
		{name: "an email keeps its case", body: userJSON("Carol", "Carol.Day@Example.COM"), set: set{"Carol", "Carol.Day@Example.COM"}},
		{name: "an email without @", body: userJSON("Carol", "carol"), problems: problems{email: emailNotPlain}},
		{name: "an email with a display name", body: userJSON("Carol", "Carol <carol@example.com>"), problems: problems{email: emailNotPlain}},
		{name: "an email in angle brackets", body: userJSON("Carol", "<carol@example.com>"), problems: problems{email: emailNotPlain}},
		{name: "an email with a domain in brackets", body: userJSON("Carol", "carol@[192.0.2.1]"), problems: problems{email: emailNotPlain}},
		{name: "two addresses", body: userJSON("Carol", "carol@example.com, ann@example.com"), problems: problems{email: emailNotPlain}},
		{name: "an empty email", body: userJSON("Carol", ""), problems: problems{email: emailEmpty}},
		{name: "a body without email", body: `{"name":"Carol"}`, problems: problems{email: emailRequired}},
		{name: "email null", body: `{"name":"Carol","email":null}`, problems: problems{email: emailNull}},
		{name: "an empty object", body: `{}`, problems: problems{nameRequired, emailRequired}},
		{name: "both fail, each reported, name first", body: `{"email":"not an address","name":""}`,
			problems: problems{nameEmpty, emailNotPlain}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields, err := bodyDecoded(t, tt.body).newUser()
			if tt.problems != (problems{}) {
				if want := bodyProblems(tt.problems.name, tt.problems.email); !reflect.DeepEqual(err, want) {
					t.Errorf("error %#v\nwant  %#v", err, want)
				}
				return
			}
			if want := (userFields{name: &tt.set.name, email: &tt.set.email}); err != nil || !reflect.DeepEqual(fields, want) {
				t.Errorf("set %s, %v; want %s", bodyFieldsText(fields), err, bodyFieldsText(want))
			}
		})
	}
}

// PUT replaces the whole user, so it needs both fields, which the field rules trim as on POST.
func TestPutNeedsBothFields(t *testing.T) {
	annLee, annLeeEmail := "Ann Lee", "Ann.Lee@example.com"
	for _, tt := range []struct {
		name, body string
		set        userFields
		refusal    *apiError // nil when the body is taken
	}{
		{"both, trimmed", `{"name":" Ann Lee ","email":" Ann.Lee@example.com "}`, userFields{name: &annLee, email: &annLeeEmail}, nil},
		{"no email", `{"name":"Ann Lee"}`, userFields{}, bodyProblems("", "email is required")},
		{"no name", `{"email":"ann@example.com"}`, userFields{}, bodyProblems("name is required", "")},
		{"neither", `{}`, userFields{}, bodyProblems("name is required", "email is required")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fields, err := bodyDecoded(t, tt.body).replacement(1)
			if tt.refusal != nil {
				if !reflect.DeepEqual(err, tt.refusal) {
					t.Errorf("PUT %s: error %#v\nwant  %#v", tt.body, err, tt.refusal)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(fields, tt.set) {
				t.Errorf("PUT %s: set %s, %v; want %s", tt.body, bodyFieldsText(fields), err, bodyFieldsText(tt.set))
			}
		})
	}
}

// A PATCH (a JSON Merge Patch, RFC 7396) changes only the fields it names, at least one; null would
// remove a field, and both are required.
func TestPatchNeedsAFieldAndNoNull(t *testing.T) {
	changesNothing := badRequest("the patch changes nothing: give name, email or both")
	annLee, annLeeEmail, al, alEmail := "Ann Lee", "ann.lee@example.com", "Al", "al@example.com"
	tests := []struct {
		name    string
		body    string
		set     userFields
		refusal *apiError // nil when the patch is taken
	}{
		{name: "name only keeps the email", body: `{"name":" Ann Lee "}`, set: userFields{name: &annLee}},
		{name: "email only keeps the name", body: `{"email":"ann.lee@example.com"}`, set: userFields{email: &annLeeEmail}},
		{name: "both", body: `{"email":"al@example.com","name":"Al"}`, set: userFields{name: &al, email: &alEmail}},
		{name: "an empty patch changes nothing", body: `{}`, refusal: changesNothing},
		{name: "only the id changes nothing", body: `{"id":1}`, refusal: changesNothing},
		{name: "name null cannot remove a required field", body: `{"name":null}`,
			refusal: bodyProblems("name is required and cannot be null", "")},
		{name: "email null cannot remove a required field", body: `{"email":null,"name":"Ann"}`,
			refusal: bodyProblems("", "email is required and cannot be null")},
		{name: "an empty name", body: `{"name":""}`, refusal: bodyProblems("name must not be empty", "")},
		{name: "a bad email", body: `{"email":"Ann <ann@example.com>"}`,
			refusal: bodyProblems("", "email must be a plain address such as ann@example.com")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields, err := bodyDecoded(t, tt.body).patch(1)
			switch {
			case tt.refusal != nil:
				if !reflect.DeepEqual(err, tt.refusal) {
					t.Errorf("error %#v\nwant  %#v", err, tt.refusal)
				}
			case err != nil || !reflect.DeepEqual(fields, tt.set):
				t.Errorf("set %s, %v; want %s", bodyFieldsText(fields), err, bodyFieldsText(tt.set))
			}
		})
	}
}

// A syntax error names the byte offset, counted from 0, of the first byte that cannot continue
// valid JSON; a body that ends too soon names its length. "^" marks the byte in each body that
// has one.
func TestSyntaxErrorNamesItsOffset(t *testing.T) {
	for _, tt := range []struct{ name, body string }{
		{"a bad escape", `{"id":1,   "name":"x\^q"}`},
		{"an unexpected character", `{"name":^x}`},
		{"a decimal point without digits", `{"name": 1.^}`},
		{"a trailing comma", `{"name":"a",^}`},
		{"two commas", `{"name":"a",^,}`},
		{"a missing colon", `{"name" ^"a"}`},
		{"a leading zero", `{"id":0^1}`},
		{"a control character in a string", "{\"name\":\"a^\x01\"}"},
		{"a bad \\u escape", `{"name":"\u12^G4"}`},
		{"a bad literal", `{"name":tru^}`},
		{"a bad byte first", `^x`},
		{"after white space", "  \n{^'name':1}"},
		{"deep in a long body", `{"name":"` + strings.Repeat("a", 5000) + `\^x"}`},
		{"ends after a colon", `{"name":`},
		{"ends after white space", `{"name":"a"   `},
		{"ends after the brace", `{`},
		{"ends after space and brace", `  {`},
		{"ends in an escape", `{"name":"a\`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body, marked := strings.Replace(tt.body, "^", "", 1), strings.Contains(tt.body, "^")
			_, err := decodeUserBody([]byte(body))
			if !marked {
				want := fmt.Sprintf("the body is not valid JSON: it ends before the object does (at byte %d, its length)", len(body))
				if err == nil || err.Error() != want {
					t.Errorf("error %v, want %q", err, want)
				}
				return
			}
			offset := strings.Index(tt.body, "^")
			var e *apiError
			if !errors.As(err, &e) || !strings.HasSuffix(e.message, fmt.Sprintf("(at byte %d)", offset)) {
				t.Errorf("error %v, want one that ends (at byte %d)", err, offset)
			}
		})
	}
}

// Media types compare as ASCII, case-insensitively, with only spaces and tabs around their parts
// (RFC 9110 §8.3.1, §5.6.3): a letter whose Unicode lower case is ASCII, or a no-break space, is 415.
func TestMediaTypeIsComparedAsASCII(t *testing.T) {
	for _, tt := range []struct {
		contentType string
		taken       bool // otherwise 415
	}{
		{"application/json", true}, {"APPLICATION/Json", true}, {"application/json\t;\tcharset=UTF-8", true},
		{"applİcation/json", false}, {"application/json\u00a0", false}, {"\u00a0application/json", false},
		{"application/json; charset=utf-8\u00a0", false}, {"application/json; charset=\"utf-8\u212a\"", false},
		{"application/\u212Aon", false}, {"application/json\v", false},
	} {
		t.Run(strings.ReplaceAll(fmt.Sprintf("%q", tt.contentType), "/", " "), func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/users", strings.NewReader("{}"))
			r.Header.Set("Content-Type", tt.contentType)
			_, err := readJSONBody(httptest.NewRecorder(), r)
			var e *apiError
			switch {
			case tt.taken && err != nil:
				t.Errorf("error %v, want the body read", err)
			case !tt.taken && (!errors.As(err, &e) || e.status != http.StatusUnsupportedMediaType):
				t.Errorf("error %#v, want a 415", err)
			}
		})
	}
}

// encoding/json's limit of 10,000 levels of nesting counts within each member's value: a value
// nested 10,000 deep is read (and is then the wrong type), and the byte that opens level 10,001
// is the syntax error's offset.
func TestNestingLimitIsPerMember(t *testing.T) {
	deep := func(levels int) []byte {
		return []byte(`{"name": ` + strings.Repeat("[", levels) + strings.Repeat("]", levels) + `}`)
	}
	t.Run("10,000 levels", func(t *testing.T) {
		if _, err := decodeUserBody(deep(10000)); err == nil || err.Error() != "name must be a string" {
			t.Errorf("error %v, want name must be a string", err)
		}
	})
	t.Run("10,001 levels", func(t *testing.T) {
		_, err := decodeUserBody(deep(10001))
		if want := fmt.Sprintf("(at byte %d)", len(`{"name": `)+10000); err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("error %v, want one that ends %s", err, want)
		}
	})
}

// fuzzClientAnswer returns what is wrong with err as an answer to the client, or nil: it must be an
// *apiError of the status given, with a short sentence in valid UTF-8, and fields, when it has
// them, that name a problem. FuzzDecodeUserBody and FuzzParseListQuery (list_test.go) judge their
// refusals with it.
func fuzzClientAnswer(err error, status int) (*apiError, error) {
	var e *apiError
	switch {
	case !errors.As(err, &e):
		return nil, fmt.Errorf("%T %v is not an *apiError: the client would get a 500", err, err)
	case e.status != status:
		return e, fmt.Errorf("status %d, want %d (%s)", e.status, status, e.message)
	case e.message == "" || len(e.message) > 400 || !utf8.ValidString(e.message):
		return e, fmt.Errorf("the message %q is empty, too long or not UTF-8", e.message)
	case e.fields != nil && e.fields.Name == "" && e.fields.Email == "":
		return e, fmt.Errorf("fields name no problem: %+v", *e.fields)
	}
	return e, nil
}

// The body decoder and the field rules accept exactly one JSON object in valid UTF-8 whose members
// are name and email (and id, only the path's, written as that integer), and what they accept
// satisfies every field rule. Everything else is a 400, and nothing panics.
func FuzzDecodeUserBody(f *testing.F) {
	for _, body := range []string{
		`{"name":"Ann","email":"ann@example.com"}`,
		`{"id":7,"name":" Ann ","email":" ann@example.com "}`,
		`{"id":7.0,"name":"Ann"}`, `{"id":7e0}`, `{"id":null,"name":"Ann"}`, `{"email":null}`, `{}`, `null`, `[]`, ``,
		`{"name":"Ann","name":"Bob"}`, `{"Name":"Ann"}`, `{"name":5}`, `{"name":"Ann"}x`, "\uFEFF{}", "{\"name\":\"\xff\"}",
		`{"name":"` + strings.Repeat("a", 101) + `","email":"a@b.c"}`, `{"name":"a\u0000b","email":"a@b.c"}`,
		`{"name":"Ann","email":"Ann <ann@example.com>"}`, `{"name":"Ann","email":"ann@[127.0.0.1]"}`,
		`{"name":"Ann","email":"\"a b\"@example.com"}`, `{"name":[[[[[[[[]]]]]]]]}`, `{"name":"\ud800","email":"a@b.c"}`,
		`{"id":9223372036854775807,"name":"Ann","email":"ann@example.com"}`, `{"id":9007199254740993.0}`,
	} {
		f.Add([]byte(body), int64(0), false)
		f.Add([]byte(body), int64(7), false)
		f.Add([]byte(body), int64(7), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, pathID int64, patch bool) {
		if pathID <= 0 {
			pathID, patch = 0, false // the path's id is positive, or 0 for POST
		}
		decoded, err := decodeUserBody(body)
		if err != nil {
			if _, problem := fuzzClientAnswer(err, http.StatusBadRequest); problem != nil {
				t.Fatal(problem)
			}
			return
		}
		var fields userFields
		switch {
		case pathID == 0:
			fields, err = decoded.newUser()
		case patch:
			fields, err = decoded.patch(pathID)
		default:
			fields, err = decoded.replacement(pathID)
		}
		if err != nil {
			if _, problem := fuzzClientAnswer(err, http.StatusBadRequest); problem != nil {
				t.Fatal(problem)
			}
			return
		}
		stored := func(value *string) string {
			if value == nil {
				return ""
			}
			return *value
		}
		name, email := stored(fields.name), stored(fields.email)

		// Accepted: check it against what encoding/json makes of the same bytes.
		if !utf8.Valid(body) || !json.Valid(body) {
			t.Fatalf("accepted %q, which is not valid UTF-8 JSON", body)
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(body, &members); err != nil || members == nil {
			t.Fatalf("accepted %q, which is not a JSON object", body)
		}
		for member, value := range members {
			switch member {
			case "name", "email":
				var text string
				if err := json.Unmarshal(value, &text); err != nil {
					t.Fatalf("accepted %s %s, which is not a string", member, value)
				}
				got := map[string]string{"name": name, "email": email}[member]
				if strings.TrimSpace(text) != got {
					t.Fatalf("%s %q was stored as %q", member, text, got)
				}
			case "id":
				if pathID == 0 || string(value) != strconv.FormatInt(pathID, 10) {
					t.Fatalf("accepted the id %s with the path's id %d", value, pathID)
				}
			default:
				t.Fatalf("accepted the member %q", member)
			}
		}
		_, hasName := members["name"]
		_, hasEmail := members["email"]
		if !patch && (!hasName || !hasEmail) || patch && !hasName && !hasEmail {
			t.Fatalf("accepted %q, which lacks a required field (patch %v)", body, patch)
		}
		if hasName {
			if n := utf8.RuneCountInString(name); n < 1 || n > 100 || strings.ContainsFunc(name, unicode.IsControl) ||
				name != strings.TrimSpace(name) {
				t.Fatalf("accepted the name %q", name)
			}
		}
		if hasEmail {
			address, err := mail.ParseAddress(email)
			if err != nil || address.Name != "" || address.Address != email || len(email) > 254 ||
				strings.Contains(email, "@[") || email != strings.TrimSpace(email) {
				t.Fatalf("accepted the email %q", email)
			}
		}
	})
}
