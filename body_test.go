package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
)

// The rules of body.go: a request body's media type, size, JSON and field rules (docs/api.md,
// "Request bodies").

const oneMiB = 1 << 20 // 1,048,576 bytes: the largest body the API reads

func TestContentTypeIsJudgedFirst(t *testing.T) {
	valid := userJSON("Carol", "carol@example.com")
	tests := []struct {
		name         string
		method, path string
		contentType  []string // nil: no Content-Type header
		want         int
		acceptHeader string // the header that names what the method takes, "" for PUT
	}{
		{"POST without Content-Type", "POST", "/api/users", nil, 415, "Accept-Post"},
		{"POST text/plain", "POST", "/api/users", []string{"text/plain"}, 415, "Accept-Post"},
		{"POST text/json", "POST", "/api/users", []string{"text/json"}, 415, "Accept-Post"},
		{"POST a malformed media type", "POST", "/api/users", []string{"application/json;;"}, 415, "Accept-Post"},
		{"POST charset latin1", "POST", "/api/users", []string{"application/json; charset=iso-8859-1"}, 415, "Accept-Post"},
		{"POST charset utf-16", "POST", "/api/users", []string{"application/json; charset=utf-16"}, 415, "Accept-Post"},
		{"POST merge-patch is only for PATCH", "POST", "/api/users", []string{"application/merge-patch+json"}, 415, "Accept-Post"},
		{"POST application/json", "POST", "/api/users", []string{"application/json"}, 201, ""},
		{"POST media types compare case-insensitively", "POST", "/api/users", []string{"Application/JSON"}, 201, ""},
		{"POST charset utf-8", "POST", "/api/users", []string{"application/json; charset=utf-8"}, 201, ""},
		{"POST charset UTF-8 quoted", "POST", "/api/users", []string{`application/json; charset="UTF-8"`}, 201, ""},
		{"PUT text/plain", "PUT", "/api/users/1", []string{"text/plain"}, 415, ""},
		{"PUT merge-patch", "PUT", "/api/users/1", []string{"application/merge-patch+json"}, 415, ""},
		{"PUT charset latin1", "PUT", "/api/users/1", []string{"application/json; charset=latin1"}, 415, ""},
		{"PUT application/json", "PUT", "/api/users/1", []string{"application/json"}, 200, ""},
		{"PATCH text/plain", "PATCH", "/api/users/1", []string{"text/plain"}, 415, "Accept-Patch"},
		{"PATCH without Content-Type", "PATCH", "/api/users/1", nil, 415, "Accept-Patch"},
		{"PATCH charset latin1", "PATCH", "/api/users/1", []string{"application/merge-patch+json; charset=latin1"}, 415, "Accept-Patch"},
		{"PATCH application/json", "PATCH", "/api/users/1", []string{"application/json"}, 200, ""},
		{"PATCH merge-patch", "PATCH", "/api/users/1", []string{"application/merge-patch+json"}, 200, ""},
		{"PATCH merge-patch utf-8", "PATCH", "/api/users/1", []string{"application/merge-patch+json; charset=utf-8"}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t)
			ts.create(t, "Ann", "ann@example.com")
			headers := asWriter
			for _, ct := range tt.contentType {
				headers = join(headers, []string{"Content-Type", ct})
			}
			w := ts.do(tt.method, tt.path, valid, headers...)
			if tt.want != 415 {
				wantStatus(t, w, tt.want)
				return
			}
			wantError(t, w, http.StatusUnsupportedMediaType, "application/json")
			switch tt.acceptHeader {
			case "Accept-Post":
				wantHeaderSet(t, w.Header(), "Accept-Post", "application/json")
			case "Accept-Patch":
				wantHeaderSet(t, w.Header(), "Accept-Patch", "application/json", "application/merge-patch+json")
			}
			for _, name := range []string{"Accept-Post", "Accept-Patch"} {
				if name != tt.acceptHeader && w.Header().Get(name) != "" {
					t.Errorf("%s on a 415 of %s: %q", name, tt.method, w.Header().Get(name))
				}
			}
		})
	}
}

// A coded body (gzip, say) is refused like any media type the method does not take: POST still
// names what it takes in Accept-Post and PATCH in Accept-Patch (docs/api.md, "Request bodies", rule
// 1).
func TestBodyWithAContentEncodingIs415(t *testing.T) {
	tests := []struct {
		method, path, body string
		encoding           string
		acceptHeader       string
		accepted           []string
	}{
		{"POST", "/api/users", userJSON("Carol", "carol@example.com"), "gzip", "Accept-Post", []string{"application/json"}},
		{"PATCH", "/api/users/1", `{"name":"Ann Lee"}`, "br", "Accept-Patch", []string{"application/json", "application/merge-patch+json"}},
		{"PUT", "/api/users/1", userJSON("Ann Lee", "ann@example.com"), "identity", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.encoding, func(t *testing.T) {
			ts := withAnnAndBob(t)
			w := ts.do(tt.method, tt.path, tt.body, join(asWriter, asJSON, []string{"Content-Encoding", tt.encoding})...)
			wantError(t, w, http.StatusUnsupportedMediaType, "Content-Encoding")
			if tt.acceptHeader != "" {
				wantHeaderSet(t, w.Header(), tt.acceptHeader, tt.accepted...)
			}
		})
	}
}

// The body is read whole before it is judged, so its size decides before its content does.
func TestBodyOfExactly1MiBIsReadAndOneByteMoreIs413(t *testing.T) {
	padded := func(size int, object string) string { return object + strings.Repeat(" ", size-len(object)) }
	tests := []struct {
		name          string
		method, path  string
		body          string
		unknownLength bool // sent without Content-Length, as a chunked body is
		want          int
	}{
		{"POST of exactly 1 MiB", "POST", "/api/users", padded(oneMiB, userJSON("Carol", "carol@example.com")), false, 201},
		{"POST of exactly 1 MiB, length unknown", "POST", "/api/users", padded(oneMiB, userJSON("Carol", "carol@example.com")), true, 201},
		{"POST of 1 MiB + 1, valid JSON", "POST", "/api/users", padded(oneMiB+1, userJSON("Carol", "carol@example.com")), false, 413},
		{"POST of 1 MiB + 1, length unknown", "POST", "/api/users", padded(oneMiB+1, userJSON("Carol", "carol@example.com")), true, 413},
		{"POST of 1 MiB + 1 that is not JSON", "POST", "/api/users", strings.Repeat("x", oneMiB+1), true, 413},
		{"POST of 1 MiB + 1 that is broken early", "POST", "/api/users", padded(oneMiB+1, `{"name":`), true, 413},
		{"PUT of 1 MiB + 1", "PUT", "/api/users/1", padded(oneMiB+1, userJSON("Ann", "ann@example.com")), true, 413},
		{"PATCH of 1 MiB + 1", "PATCH", "/api/users/1", padded(oneMiB+1, `{"name":"Ann"}`), true, 413},
		{"PATCH of exactly 1 MiB", "PATCH", "/api/users/1", padded(oneMiB, `{"name":"Ann Lee"}`), true, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := withAnnAndBob(t)
			r := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			r.Header.Set("Authorization", "Bearer "+writeToken)
			r.Header.Set("Content-Type", "application/json")
			if tt.unknownLength {
				r.ContentLength = -1
				r.Body = io.NopCloser(strings.NewReader(tt.body))
			}
			w := ts.serve(r)
			if tt.want == http.StatusRequestEntityTooLarge {
				wantError(t, w, tt.want, "1 MiB")
				if body, _ := ts.list(t, ""); len(body.Data) != 2 || body.Data[0].Name != "Ann" {
					t.Errorf("a refused body changed the store: %+v", body.Data)
				}
				return
			}
			wantStatus(t, w, tt.want)
		})
	}
}

// Each way a body can fail to be one JSON object has its own 400 and message (docs/api.md, "Request
// bodies", rule 3).
func TestMalformedBodyIs400WithAMessageNamingTheProblem(t *testing.T) {
	valid := `{"name":"Carol","email":"carol@example.com"}`
	tests := []struct {
		name     string
		body     string
		mentions []string
		field    string // the member the fields map names, for a value of the wrong type
	}{
		{"empty body", "", []string{"empty"}, ""},
		{"only white space", " \r\n\t ", []string{"empty"}, ""},
		{"byte-order mark", "\uFEFF" + valid, []string{"byte-order mark"}, ""},
		{"invalid UTF-8 in a string", `{"name":"Car` + "\xff" + `ol","email":"carol@example.com"}`, []string{"UTF-8"}, ""},
		{"invalid UTF-8 outside strings", valid + "\xc3", []string{"UTF-8"}, ""},
		{"a syntax error says where", `{"name":"Carol",,"email":"carol@example.com"}`, []string{"not valid JSON", "at byte"}, ""},
		{"a missing colon says where", `{"name" "Carol"}`, []string{"not valid JSON", "at byte"}, ""},
		{"a cut-off object", `{"name":"Carol","email":"carol@exa`, []string{"not valid JSON"}, ""},
		{"a single quote", `{'name':'Carol'}`, []string{"not valid JSON"}, ""},
		{"a number for name", `{"name":5,"email":"carol@example.com"}`, []string{"name", "string"}, "name"},
		{"an object for email", `{"name":"Carol","email":{"address":"carol@example.com"}}`, []string{"email", "string"}, "email"},
		{"a boolean for email", `{"name":"Carol","email":true}`, []string{"email", "string"}, "email"},
		{"an array for name", `{"name":["Carol"],"email":"carol@example.com"}`, []string{"name", "string"}, "name"},
		{"an unknown field is named", `{"name":"Carol","email":"carol@example.com","age":36}`, []string{`"age"`}, ""},
		{"member names are case-sensitive", `{"Name":"Carol","email":"carol@example.com"}`, []string{`"Name"`}, ""},
		{"a member given twice", `{"name":"Carol","name":"Caroline","email":"carol@example.com"}`, []string{`"name"`, "twice"}, ""},
		{"a member given twice, null first", `{"email":null,"name":"Carol","email":"carol@example.com"}`, []string{`"email"`, "twice"}, ""},
		{"null", `null`, []string{"JSON object"}, ""},
		{"an array", `[` + valid + `]`, []string{"JSON object"}, ""},
		{"a string", `"Carol"`, []string{"JSON object"}, ""},
		{"a number", `42`, []string{"JSON object"}, ""},
		{"a second object after the first", valid + ` {}`, []string{"nothing after"}, ""},
		{"text after the object", valid + `x`, []string{"nothing after"}, ""},
		{"a comma after the object", valid + `,`, []string{"nothing after"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := withAnnAndBob(t)
			w := ts.do("POST", "/api/users", tt.body, join(asWriter, asJSON)...)
			message, fields := wantError(t, w, http.StatusBadRequest, tt.mentions...)
			if tt.field != "" && (len(fields) != 1 || fields[tt.field] == "") {
				t.Errorf("fields = %v, want only %q: a value of the wrong type is reported on its own", fields, tt.field)
			}
			if tt.field == "" && fields != nil {
				t.Errorf("fields = %v, want none for a body that is not a user", fields)
			}
			for _, leak := range []string{"Go value", "struct", "main.", "json: "} {
				if strings.Contains(message, leak) {
					t.Errorf("message %q leaks Go's wording %q", message, leak)
				}
			}
		})
	}
}

func TestWhiteSpaceAroundTheObjectIsFine(t *testing.T) {
	ts := newTestServer(t)
	w := ts.do("POST", "/api/users", " \r\n\t"+userJSON("Carol", "carol@example.com")+"\n\n \t", join(asWriter, asJSON)...)
	wantStatus(t, w, http.StatusCreated)
}

// A wrong type stops decoding, so only that field is reported, even when another field also fails.
func TestWrongTypeIsReportedOnItsOwn(t *testing.T) {
	ts := newTestServer(t)
	w := ts.do("POST", "/api/users", `{"name":5,"email":"not an address"}`, join(asWriter, asJSON)...)
	message, fields := wantError(t, w, http.StatusBadRequest, "name")
	if len(fields) != 1 || fields["name"] == "" || strings.Contains(message, "email") {
		t.Errorf("message %q, fields %v: want the wrong type of name alone", message, fields)
	}
}

// id is the server's to give: a client may send back only the id of the path (docs/api.md, "Request
// bodies", rule 4).
func TestIDInTheBody(t *testing.T) {
	tests := []struct {
		name         string
		method, path string
		body         string
		want         int
	}{
		{"POST with an id", "POST", "/api/users", `{"id":3,"name":"Carol","email":"carol@example.com"}`, 400},
		{"POST with id null", "POST", "/api/users", `{"id":null,"name":"Carol","email":"carol@example.com"}`, 400},
		{"PUT with the path's id", "PUT", "/api/users/1", `{"id":1,"name":"Ann Lee","email":"ann@example.com"}`, 200},
		{"PUT with the path's id as 1.0", "PUT", "/api/users/1", `{"id":1.0,"name":"Ann Lee","email":"ann@example.com"}`, 200},
		{"PUT with another id", "PUT", "/api/users/1", `{"id":2,"name":"Ann Lee","email":"ann@example.com"}`, 400},
		{"PUT with id null", "PUT", "/api/users/1", `{"id":null,"name":"Ann Lee","email":"ann@example.com"}`, 400},
		{"PUT with the id as a string", "PUT", "/api/users/1", `{"id":"1","name":"Ann Lee","email":"ann@example.com"}`, 400},
		{"PUT with id 1.5", "PUT", "/api/users/1", `{"id":1.5,"name":"Ann Lee","email":"ann@example.com"}`, 400},
		{"PUT with id given twice", "PUT", "/api/users/1", `{"id":1,"id":1,"name":"Ann Lee","email":"ann@example.com"}`, 400},
		{"PATCH with the path's id", "PATCH", "/api/users/2", `{"id":2,"name":"Bob Lee"}`, 200},
		{"PATCH with another id", "PATCH", "/api/users/2", `{"id":1,"name":"Bob Lee"}`, 400},
		{"PATCH with id null", "PATCH", "/api/users/2", `{"id":null,"name":"Bob Lee"}`, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := withAnnAndBob(t)
			w := ts.do(tt.method, tt.path, tt.body, join(asWriter, asJSON)...)
			if tt.want == http.StatusBadRequest {
				wantError(t, w, tt.want, "id")
				return
			}
			wantStatus(t, w, tt.want)
			var got user
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || userPath(got.ID) != tt.path {
				t.Errorf("body %s is not the user at %s", w.Body, tt.path)
			}
		})
	}
}

// The field rules of docs/api.md, "Request bodies", step 5, on POST: what is stored, or the 400 and
// its fields.
func TestFieldRules(t *testing.T) {
	email254 := strings.Repeat("a", 64) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." +
		strings.Repeat("d", 57) + ".com"
	if len(email254) != 254 {
		t.Fatalf("the 254-byte address has %d bytes", len(email254))
	}
	tests := []struct {
		name               string
		body               string
		wantName           string // what is stored, when the body passes
		wantEmail          string
		wantFields         []string // the fields that fail, when it does not
		mentions           []string
		wantMessageInOrder bool // name's problem before email's
	}{
		{name: "name and email are trimmed", body: userJSON("  Carol Day \t", " carol@example.com\n"),
			wantName: "Carol Day", wantEmail: "carol@example.com"},
		{name: "Unicode white space is trimmed", body: userJSON("\u00a0\u3000Carol\u2003", "\u2009carol@example.com\u00a0"),
			wantName: "Carol", wantEmail: "carol@example.com"},
		{name: "white space inside a name is kept", body: userJSON("Carol  Ann Day", "carol@example.com"),
			wantName: "Carol  Ann Day", wantEmail: "carol@example.com"},
		{name: "a name of 100 code points", body: userJSON(strings.Repeat("é", 100), "carol@example.com"),
			wantName: strings.Repeat("é", 100), wantEmail: "carol@example.com"},
		{name: "a name of 100 code points once trimmed", body: userJSON("  "+strings.Repeat("x", 100)+"  ", "carol@example.com"),
			wantName: strings.Repeat("x", 100), wantEmail: "carol@example.com"},
		{name: "a name of 101 code points", body: userJSON(strings.Repeat("é", 101), "carol@example.com"),
			wantFields: []string{"name"}, mentions: []string{"100"}},
		{name: "an empty name", body: userJSON("", "carol@example.com"), wantFields: []string{"name"}},
		{name: "a name of white space only", body: userJSON(" \t\u00a0", "carol@example.com"), wantFields: []string{"name"}},
		{name: "a name with a control character", body: `{"name":"Car\u0007ol","email":"carol@example.com"}`,
			wantFields: []string{"name"}, mentions: []string{"control"}},
		{name: "a name with a tab inside", body: `{"name":"Carol\tDay","email":"carol@example.com"}`,
			wantFields: []string{"name"}, mentions: []string{"control"}},
		{name: "a name with a line break inside", body: `{"name":"Carol\nDay","email":"carol@example.com"}`,
			wantFields: []string{"name"}, mentions: []string{"control"}},
		{name: "a name with DEL", body: `{"name":"Carol\u007f","email":"carol@example.com"}`,
			wantFields: []string{"name"}, mentions: []string{"control"}},
		{name: "a name without name", body: `{"email":"carol@example.com"}`, wantFields: []string{"name"}, mentions: []string{"required"}},
		{name: "name null counts as absent", body: `{"name":null,"email":"carol@example.com"}`, wantFields: []string{"name"}},
		{name: "an email of 254 bytes", body: userJSON("Carol", email254), wantName: "Carol", wantEmail: email254},
		{name: "an email of 254 bytes once trimmed", body: userJSON("Carol", "  "+email254+"  "), wantName: "Carol", wantEmail: email254},
		{name: "an email of 255 bytes", body: userJSON("Carol", "a"+email254), wantFields: []string{"email"}, mentions: []string{"254"}},
		{name: "an email keeps its case", body: userJSON("Carol", "Carol.Day@Example.COM"), wantName: "Carol", wantEmail: "Carol.Day@Example.COM"},
		{name: "an email without @", body: userJSON("Carol", "carol"), wantFields: []string{"email"}},
		{name: "an email with a display name", body: userJSON("Carol", "Carol <carol@example.com>"), wantFields: []string{"email"}},
		{name: "an email in angle brackets", body: userJSON("Carol", "<carol@example.com>"), wantFields: []string{"email"}},
		{name: "an email with a domain in brackets", body: userJSON("Carol", "carol@[192.0.2.1]"), wantFields: []string{"email"}},
		{name: "two addresses", body: userJSON("Carol", "carol@example.com, ann@example.com"), wantFields: []string{"email"}},
		{name: "an empty email", body: userJSON("Carol", ""), wantFields: []string{"email"}},
		{name: "a body without email", body: `{"name":"Carol"}`, wantFields: []string{"email"}, mentions: []string{"required"}},
		{name: "email null counts as absent", body: `{"name":"Carol","email":null}`, wantFields: []string{"email"}},
		{name: "an empty object", body: `{}`, wantFields: []string{"name", "email"}, wantMessageInOrder: true},
		{name: "both fail, each reported, name first", body: `{"email":"not an address","name":""}`,
			wantFields: []string{"name", "email"}, wantMessageInOrder: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t)
			w := ts.do("POST", "/api/users", tt.body, join(asWriter, asJSON)...)
			if tt.wantFields == nil {
				wantStatus(t, w, http.StatusCreated)
				if got, want := w.Body.String(), userRepresentation(1, tt.wantName, tt.wantEmail); got != want {
					t.Errorf("stored %s, want %s", got, want)
				}
				return
			}
			message, fields := wantError(t, w, http.StatusBadRequest, tt.mentions...)
			if len(fields) != len(tt.wantFields) {
				t.Errorf("fields = %v, want problems with %v", fields, tt.wantFields)
			}
			for _, field := range tt.wantFields {
				problem := fields[field]
				if problem == "" || !strings.Contains(message, problem) || !strings.Contains(problem, field) {
					t.Errorf("fields[%q] = %q: want a problem that names the field and is part of the message %q", field, problem, message)
				}
			}
			if tt.wantMessageInOrder && strings.Index(message, fields["name"]) > strings.Index(message, fields["email"]) {
				t.Errorf("message %q: name's problem must come first", message)
			}
			if ts.store.count() != 0 {
				t.Error("a refused body created a user")
			}
		})
	}
}

func TestPutNeedsBothFields(t *testing.T) {
	for _, body := range []string{`{"name":"Ann Lee"}`, `{"email":"ann@example.com"}`, `{}`} {
		ts := withAnnAndBob(t)
		w := ts.do("PUT", "/api/users/1", body, join(asWriter, asJSON)...)
		_, fields := wantError(t, w, http.StatusBadRequest, "required")
		if len(fields) == 0 {
			t.Errorf("PUT %s: no fields in the 400", body)
		}
	}
}

func TestPutReplacesAndTrims(t *testing.T) {
	ts := withAnnAndBob(t)
	w := ts.do("PUT", "/api/users/1", userJSON(" Ann Lee ", " Ann.Lee@example.com "), join(asWriter, asJSON)...)
	wantStatus(t, w, http.StatusOK)
	if got, want := w.Body.String(), userRepresentation(1, "Ann Lee", "Ann.Lee@example.com"); got != want {
		t.Errorf("PUT stored %s, want %s", got, want)
	}
}

func TestPatchNeedsAtLeastOneFieldAndRefusesNull(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		want       int
		wantFields []string
		stored     string
	}{
		{"name only keeps the email", `{"name":" Ann Lee "}`, 200, nil, userRepresentation(1, "Ann Lee", "ann@example.com")},
		{"email only keeps the name", `{"email":"ann.lee@example.com"}`, 200, nil, userRepresentation(1, "Ann", "ann.lee@example.com")},
		{"both", `{"email":"al@example.com","name":"Al"}`, 200, nil, userRepresentation(1, "Al", "al@example.com")},
		{"an empty patch changes nothing: 400 without fields", `{}`, 400, nil, ""},
		{"name null cannot remove a required field", `{"name":null}`, 400, []string{"name"}, ""},
		{"email null cannot remove a required field", `{"email":null,"name":"Ann"}`, 400, []string{"email"}, ""},
		{"an empty name", `{"name":""}`, 400, []string{"name"}, ""},
		{"a bad email", `{"email":"Ann <ann@example.com>"}`, 400, []string{"email"}, ""},
		{"an unknown field", `{"nickname":"Annie"}`, 400, nil, ""},
		{"only the id changes nothing", `{"id":1}`, 400, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := withAnnAndBob(t)
			w := ts.do("PATCH", "/api/users/1", tt.body, join(asWriter, []string{"Content-Type", "application/merge-patch+json"})...)
			if tt.want == http.StatusOK {
				wantStatus(t, w, http.StatusOK)
				if w.Body.String() != tt.stored {
					t.Errorf("PATCH stored %s, want %s", w.Body, tt.stored)
				}
				return
			}
			_, fields := wantError(t, w, tt.want)
			if len(fields) != len(tt.wantFields) {
				t.Errorf("fields = %v, want problems with %v", fields, tt.wantFields)
			}
			for _, field := range tt.wantFields {
				if fields[field] == "" {
					t.Errorf("fields = %v, want a problem with %s", fields, field)
				}
			}
		})
	}
}

// The error body lists the failing fields name first, as its message does (docs/api.md, "Request
// bodies").
func TestFieldProblemsComeNameFirst(t *testing.T) {
	s := newTestServer(t)
	w := s.do("POST", "/api/users", `{"name": "", "email": "Ann <a@b.c>"}`, join(asWriter, asJSON)...)
	if w.Code != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", w.Code)
	}
	body := w.Body.String()
	name, email := strings.Index(body, `"name":`), strings.Index(body, `"email":`)
	if name < 0 || email < 0 || name > email {
		t.Errorf("body %s: want fields with name before email", body)
	}
}

// A body that ends before its declared length, or breaks off while chunked, is 400 and changes
// nothing: the service never judges a part of a body as if it were all of it.
func TestBodyCutShortIs400(t *testing.T) {
	for _, length := range []int64{40, -1} { // declared, and unknown (chunked)
		t.Run(fmt.Sprint("Content-Length ", length), func(t *testing.T) {
			ts := withAnnAndBob(t)
			before := snapshotOfUsers(t, ts)
			body := io.MultiReader(strings.NewReader(`{"name":"Cy","email":"cy@`), iotest.ErrReader(io.ErrUnexpectedEOF))
			r := httptest.NewRequest("POST", "/api/users", body)
			r.ContentLength = length
			r.Header.Set("Authorization", "Bearer "+writeToken)
			r.Header.Set("Content-Type", "application/json")
			w := ts.serve(r)
			if message, _ := errorBody(t, w); w.Code != http.StatusBadRequest || message != "the body could not be read to its end" {
				t.Errorf("%d %s, want 400: the body could not be read to its end", w.Code, w.Body)
			}
			if after := snapshotOfUsers(t, ts); after != before {
				t.Errorf("the store changed: %s, was %s", after, before)
			}
		})
	}
}
