package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// The rules of body.go, in the order a body is judged (docs/api.md, "Request bodies"): its media
// type (415), its size (413), then the JSON itself (400). body.go knows nothing of users: most
// tests decode with decodeUserBody (user.go), which reads the one body the API takes through
// decodeJSON, and one decodes a book. An error is compared whole with the *apiError the client
// would get: status, message, fields, header fields.

// POST and PUT take application/json, PATCH also application/merge-patch+json (RFC 7396), read as
// mime.ParseMediaType reads them: in any case, with charset utf-8 (in any case) or none. Anything
// else is 415, naming what the method takes: in Accept-Post on POST, in Accept-Patch on PATCH (RFC
// 5789 §3.1); HTTP has no such header for PUT.
func TestMediaTypeNotTakenIs415(t *testing.T) {
	const (
		asJSON      = "send the body as JSON, with Content-Type: application/json"
		asJSONPatch = "send the body as JSON, with Content-Type: application/json or application/merge-patch+json"
		inUTF8      = "send the body as JSON in UTF-8: charset may only be utf-8"
	)
	acceptPost := http.Header{"Accept-Post": {"application/json"}}
	acceptPatch := http.Header{"Accept-Patch": {"application/json, application/merge-patch+json"}}
	tests := []struct {
		method      string
		contentType []string // each one header line; nil sends none
		want        error    // nil when the type is taken
	}{
		{"POST", []string{"application/json"}, nil},
		{"POST", []string{"Application/JSON"}, nil},
		{"POST", []string{"application/json; charset=utf-8"}, nil},
		{"POST", []string{`application/json; charset="UTF-8"`}, nil},
		{"POST", nil, &apiError{status: 415, message: asJSON, header: acceptPost}},
		{"POST", []string{"text/plain"}, &apiError{status: 415, message: asJSON, header: acceptPost}},
		{"POST", []string{"application/merge-patch+json"}, &apiError{status: 415, message: asJSON, header: acceptPost}},
		{"POST", []string{"application/json;;"}, &apiError{status: 415, message: asJSON, header: acceptPost}},
		{"POST", []string{"application/json; charset=iso-8859-1"}, &apiError{status: 415, message: inUTF8, header: acceptPost}},
		{"PUT", []string{"application/json"}, nil},
		{"PUT", []string{"text/plain"}, &apiError{status: 415, message: asJSON}},
		{"PUT", []string{"application/merge-patch+json"}, &apiError{status: 415, message: asJSON}},
		{"PUT", []string{"application/json; charset=utf-16"}, &apiError{status: 415, message: inUTF8}},
		{"PATCH", []string{"application/json"}, nil},
		{"PATCH", []string{"application/merge-patch+json; charset=UTF-8"}, nil},
		{"PATCH", nil, &apiError{status: 415, message: asJSONPatch, header: acceptPatch}},
		{"PATCH", []string{"application/json-patch+json"}, &apiError{status: 415, message: asJSONPatch, header: acceptPatch}},
		{"PATCH", []string{"application/merge-patch+json; charset=latin1"}, &apiError{status: 415, message: inUTF8, header: acceptPatch}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %q", tt.method, tt.contentType), func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/api/users/1", strings.NewReader("{}"))
			for _, line := range tt.contentType {
				r.Header.Add("Content-Type", line)
			}
			if err := checkMediaType(r); !reflect.DeepEqual(err, tt.want) {
				t.Errorf("error %#v\nwant  %#v", err, tt.want)
			}
		})
	}
}

// A body with a Content-Encoding, any (an empty one too), is 415 with Accept-Encoding: identity,
// the one coding taken (RFC 9110 §15.5.16), and on POST and PATCH the media types taken as well,
// whatever else is wrong with its headers: the client learns at once every change its next try
// needs.
func TestContentEncodingIs415(t *testing.T) {
	const uncompressed = "send the body uncompressed, without a Content-Encoding"
	onPost := http.Header{"Accept-Encoding": {"identity"}, "Accept-Post": {"application/json"}}
	onPatch := http.Header{"Accept-Encoding": {"identity"}, "Accept-Patch": {"application/json, application/merge-patch+json"}}
	onPut := http.Header{"Accept-Encoding": {"identity"}}
	for _, tt := range []struct {
		method, contentType, encoding string
		header                        http.Header // of the 415
	}{
		{"POST", "application/json", "gzip", onPost},
		{"POST", "text/plain", "gzip", onPost},
		{"PATCH", "application/merge-patch+json", "br", onPatch},
		{"PATCH", "application/json; charset=latin1", "gzip", onPatch},
		{"PUT", "application/json", "identity", onPut},
		{"PUT", "application/json", "", onPut},
		{"PUT", "", "gzip", onPut},
	} {
		t.Run(fmt.Sprintf("%s %q %q", tt.method, tt.contentType, tt.encoding), func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/api/users/1", strings.NewReader(`{"name":"Ann"}`))
			r.Header.Set("Content-Type", tt.contentType)
			r.Header.Set("Content-Encoding", tt.encoding)
			want := &apiError{status: 415, message: uncompressed, header: tt.header}
			if err := checkMediaType(r); !reflect.DeepEqual(err, error(want)) {
				t.Errorf("error %#v\nwant  %#v", err, want)
			}
		})
	}
}

// The body is read whole before it is judged, so its size decides before its content: 1 MiB is
// read, one byte more is 413, whether its length is declared or not (a chunked body's is not). A
// body that breaks off is 400: a part of a body is never judged as if it were all of it.
func TestBodyOver1MiBIs413(t *testing.T) {
	const oneMiB = 1 << 20 // 1,048,576 bytes
	tests := []struct {
		name     string
		size     int
		declared int64 // the request's ContentLength: -1 for unknown, 0 for the body's own
		want     error // nil when the whole body is read
	}{
		{"no body", 0, 0, nil},
		{"exactly 1 MiB", oneMiB, 0, nil},
		{"exactly 1 MiB, length unknown", oneMiB, -1, nil},
		{"1 MiB + 1", oneMiB + 1, 0, errBodyTooLarge},
		{"1 MiB + 1, length unknown", oneMiB + 1, -1, errBodyTooLarge},
		{"2 bytes sent, 1 MiB + 1 declared", 2, oneMiB + 1, errBodyTooLarge}, // refused before a byte is read
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/users", strings.NewReader(strings.Repeat("x", tt.size)))
			r.Header.Set("Content-Type", "application/json")
			if tt.declared != 0 {
				r.ContentLength = tt.declared
			}
			body, err := readBody(httptest.NewRecorder(), r)
			if err != tt.want || tt.want == nil && len(body) != tt.size {
				t.Errorf("read %d bytes, error %v; want %d bytes, error %v", len(body), err, tt.size, tt.want)
			}
		})
	}
	t.Run("a body that breaks off", func(t *testing.T) {
		broken := io.MultiReader(strings.NewReader(`{"name":"Cy","email":"cy@`), iotest.ErrReader(io.ErrUnexpectedEOF))
		r := httptest.NewRequest("POST", "/api/users", broken)
		r.Header.Set("Content-Type", "application/json")
		_, err := readBody(httptest.NewRecorder(), r)
		if want := badRequest("the body could not be read to its end"); !reflect.DeepEqual(err, error(want)) {
			t.Errorf("error %#v, want %#v", err, want)
		}
	})
}

// Each way a body can fail to be one JSON object that fits has a 400 of its own (docs/api.md,
// "Request bodies"): each body below has one problem, since of several, which one is named is the
// decoder's choice. Invalid UTF-8 is found even inside a string, where encoding/json would quietly
// put U+FFFD; a wrong type of name or email is reported alone, in fields too, though the other
// field breaks its rules.
func TestMalformedBodyIs400(t *testing.T) {
	const (
		badUTF8   = "the body is not valid UTF-8"
		empty     = `the body is empty: send a JSON object such as {"name": "Ann", "email": "ann@example.com"}`
		endsEarly = "the body is not valid JSON: it ends before the object does"
		notObject = `the body must be a JSON object, such as {"name": "Ann", "email": "ann@example.com"}`
		trailing  = "the body must hold one JSON object and nothing after it"
	)
	wrongType := func(field string) error {
		problem := field + " must be a string"
		return &apiError{status: 400, message: problem, fields: map[string]string{field: problem}}
	}
	const ann = `{"name":"Ann","email":"ann@example.com"}`
	tests := []struct {
		name string
		body string
		want error
	}{
		{"invalid UTF-8 in a string", "{\"name\":\"A\xffnn\",\"email\":\"ann@example.com\"}", badRequest(badUTF8)},
		{"empty", "", badRequest(empty)},
		{"white space only", " \r\n\t", badRequest(empty)},
		{"ends inside a string", `{"name":"Ann`, badRequest(endsEarly)},
		{"ends after a member", `{"name":"Ann",`, badRequest(endsEarly)},
		{"a brace alone", `{`, badRequest(endsEarly)},
		{"a number for name", `{"name":5,"email":"not an address"}`, wrongType("name")},
		{"an object for name", `{"name":{"first":"Ann"},"email":"ann@example.com"}`, wrongType("name")},
		{"an array for email", `{"name":"Ann","email":["ann@example.com"]}`, wrongType("email")},
		{"true for email", `{"name":"Ann","email":true}`, wrongType("email")},
		{"an unknown field", `{"name":"Ann","email":"ann@example.com","age":36}`, badRequest(`unknown field "age": leave it out of the body`)},
		{"an array", `[` + ann + `]`, badRequest(notObject)},
		{"a string", `"Ann"`, badRequest(notObject)},
		{"a number", `42`, badRequest(notObject)},
		{"true", `true`, badRequest(notObject)},
		{"a second object", ann + ` {}`, badRequest(trailing)},
		{"text after the object", ann + ` x`, badRequest(trailing)},
		{"a comma after the object", ann + `,`, badRequest(trailing)},
		{"a second null after null", `null null`, badRequest(trailing)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := decodeUserBody([]byte(tt.body)); !reflect.DeepEqual(err, tt.want) {
				t.Errorf("error %#v\nwant  %#v", err, tt.want)
			}
		})
	}
}

// A syntax error says where: N in "(at byte N)" counts the bytes read up to and including the bad
// one (json.SyntaxError.Offset). What comes before it is encoding/json's own description, not
// ours: the test takes it from json.Unmarshal of the same body rather than writing it out.
func TestSyntaxErrorSaysWhere(t *testing.T) {
	for _, tt := range []struct {
		body string
		at   int // the bad byte, counting from 1
	}{
		{`{"name":tru}`, 12},
		{`   x`, 4},
		{`{"name":"Ann",}`, 15},
		{`{"name" "Ann"}`, 9},
		{`{"name":"A\qnn"}`, 12},
		{`{'name':'Ann'}`, 2},
		{`{"name":"` + strings.Repeat("a", 5000) + `",,}`, 5012},
	} {
		t.Run(tt.body[:min(len(tt.body), 20)], func(t *testing.T) {
			var syntaxError *json.SyntaxError
			if err := json.Unmarshal([]byte(tt.body), new(any)); !errors.As(err, &syntaxError) {
				t.Fatalf("json.Unmarshal: %v, want a syntax error", err)
			}
			want := badRequest(fmt.Sprintf("the body is not valid JSON: %v (at byte %d)", syntaxError, tt.at))
			if _, err := decodeUserBody([]byte(tt.body)); !reflect.DeepEqual(err, error(want)) {
				t.Errorf("error %#v\nwant  %#v", err, want)
			}
		})
	}
}

// Member names match as encoding/json matches them, in any case, and a member given twice keeps
// its last value, null included (docs/api.md, "Notes for a port"). White space around the object
// is not part of it (RFC 8259 §2), and null for the whole body is an object with no members.
func TestMembersAreReadAsEncodingJSONReadsThem(t *testing.T) {
	show := func(value *string, null bool) string { // a member: absent, null, or its string quoted
		switch {
		case null:
			return "null"
		case value == nil:
			return "absent"
		}
		return strconv.Quote(*value)
	}
	for _, tt := range []struct {
		name, body     string
		id, nameMember string
		emailMember    string
	}{
		{"names in any case", `{"ID":7,"NAME":"Ann","Email":"ann@example.com"}`, "7", `"Ann"`, `"ann@example.com"`},
		{"the last of a name given twice", `{"name":"Ann","email":"ann@example.com","name":"Bob"}`, "", `"Bob"`, `"ann@example.com"`},
		{"the last, in another case", `{"name":"Ann","Name":"Bob"}`, "", `"Bob"`, "absent"},
		{"the last, when it is null", `{"email":"ann@example.com","email":null}`, "", "absent", "null"},
		{"white space around", " \r\n\t{ \"id\" : 7 , \"name\":\"Ann\"}\n ", "7", `"Ann"`, "absent"},
		{"null for the whole body", `null`, "", "absent", "absent"},
		{"id null", `{"id":null}`, "null", "absent", "absent"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := decodeUserBody([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			name, email := show(b.name, b.nameIsNull), show(b.email, b.emailIsNull)
			if string(b.id) != tt.id || name != tt.nameMember || email != tt.emailMember {
				t.Errorf("id %s, name %s, email %s; want id %s, name %s, email %s", b.id, name, email, tt.id, tt.nameMember, tt.emailMember)
			}
		})
	}
}

// decodeJSON knows nothing of users: a wrong type is named in JSON's words, never Go's, for
// whatever type the field has. A copy that serves another resource gets these messages as they are.
func TestWrongTypeIsNamedInJSONWords(t *testing.T) {
	type book struct {
		Title   string            `json:"title"`
		Year    int               `json:"year"`
		Price   float64           `json:"price"`
		InPrint bool              `json:"in_print"`
		Authors []string          `json:"authors"`
		Notes   map[string]string `json:"notes"`
	}
	for _, tt := range []struct{ body, message string }{
		{`{"title":1}`, "title must be a string"},
		{`{"year":"1999"}`, "year must be a whole number"},
		{`{"year":19.5}`, "year must be a whole number"},
		{`{"price":"cheap"}`, "price must be a number"},
		{`{"in_print":"yes"}`, "in_print must be true or false"},
		{`{"authors":"Ann"}`, "authors must be an array"},
		{`{"notes":[]}`, "notes must be an object"},
	} {
		t.Run(tt.body, func(t *testing.T) {
			err := decodeJSON([]byte(tt.body), new(book))
			field, _, _ := strings.Cut(tt.message, " ")
			want := &apiError{status: 400, message: tt.message, fields: map[string]string{field: tt.message}}
			if !reflect.DeepEqual(err, error(want)) {
				t.Errorf("error %#v\nwant  %#v", err, want)
			}
		})
	}
}
