package main

import (
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The rules of user.go: what a body may set on a user, field by field and method by method
// (docs/api.md, "Request bodies"), and the keys the store and the list compare users by.

// fieldsText shows the fields a write sets: "kept" for one it leaves as stored.
func fieldsText(f userFields) string {
	show := func(s *string) string {
		if s == nil {
			return "kept"
		}
		return strconv.Quote(*s)
	}
	return "name " + show(f.name) + ", email " + show(f.email)
}

// invalidFields is the 400 of a body whose fields break their rules: every problem in the
// message, name first, and each again in fields under its field's name ("" for a field that
// passes).
func invalidFields(name, email string) error {
	e := &apiError{status: http.StatusBadRequest, fields: map[string]string{}}
	var sentences []string
	if name != "" {
		e.fields["name"], sentences = name, append(sentences, name)
	}
	if email != "" {
		e.fields["email"], sentences = email, append(sentences, email)
	}
	e.message = strings.Join(sentences, "; ")
	return e
}

// A name is trimmed of white space as Unicode defines it, then must be 1 to 100 characters (code
// points, not bytes) with no control character (Unicode category Cc), judged after trimming.
func TestNameRules(t *testing.T) {
	const (
		empty   = "name must not be empty"
		tooLong = "name must be at most 100 characters"
		control = "name must not contain control characters"
	)
	for _, tt := range []struct {
		name, trimmed, problem string
	}{
		{"  Ann Lee \t", "Ann Lee", ""},
		{"\u00a0\u3000Ann\u2003\u0085", "Ann", ""}, // no-break, ideographic and em spaces, and NEL, are white space
		{"Ann  Lee", "Ann  Lee", ""},
		{strings.Repeat("é", 100), strings.Repeat("é", 100), ""}, // 200 bytes, 100 characters
		{" " + strings.Repeat("x", 100) + " ", strings.Repeat("x", 100), ""},
		{"Ann\u200bLee", "Ann\u200bLee", ""}, // a zero-width space is a format character (Cf), not Cc
		{strings.Repeat("é", 101), strings.Repeat("é", 101), tooLong},
		{"", "", empty},
		{" \t\u00a0", "", empty},
		{"Ann\x00", "Ann\x00", control},
		{"Ann\tLee", "Ann\tLee", control},
		{"Ann\nlevel=ERROR", "Ann\nlevel=ERROR", control},
		{"Ann\x7f", "Ann\x7f", control},
		{"A\u0085nn", "A\u0085nn", control}, // NEL inside: white space at an end, a control character within
	} {
		t.Run(fmt.Sprintf("%q", tt.name), func(t *testing.T) {
			if trimmed, problem := checkName(tt.name); trimmed != tt.trimmed || problem != tt.problem {
				t.Errorf("checkName = %q, %q; want %q, %q", trimmed, problem, tt.trimmed, tt.problem)
			}
		})
	}
}

// An e-mail is trimmed, then must be at most 254 bytes, the longest address SMTP carries (RFC 5321
// §4.5.3.1), and a bare address (RFC 5322 addr-spec) that net/mail.ParseAddress gives back
// unchanged: no display name, no angle brackets, no comment, no quotes, and no domain in brackets.
// It is stored as sent, case kept.
func TestEmailRules(t *testing.T) {
	const (
		empty    = "email must not be empty"
		tooLong  = "email must be at most 254 bytes"
		notPlain = "email must be a plain address such as ann@example.com"
	)
	long := strings.Repeat("a", 64) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 57) + ".com"
	if len(long) != 254 {
		t.Fatalf("the long address has %d bytes, want 254", len(long))
	}
	for _, tt := range []struct {
		email, trimmed, problem string
	}{
		{" ann@example.com\n", "ann@example.com", ""},
		{"Ann.O'Hara+news@Example.COM", "Ann.O'Hara+news@Example.COM", ""},
		{"ann@localhost", "ann@localhost", ""},
		{"zoë@müller.example", "zoë@müller.example", ""},
		{long, long, ""},
		{"  " + long + "\u00a0", long, ""},
		{"a" + long, "a" + long, tooLong},
		{"", "", empty},
		{" \t", "", empty},
		{"ann", "ann", notPlain},
		{"Ann <ann@example.com>", "Ann <ann@example.com>", notPlain},
		{"<ann@example.com>", "<ann@example.com>", notPlain},
		{"ann@example.com (Ann)", "ann@example.com (Ann)", notPlain},
		{`"ann lee"@example.com`, `"ann lee"@example.com`, notPlain},
		{`"ann"@example.com`, `"ann"@example.com`, notPlain},
		{"ann@[192.0.2.1]", "ann@[192.0.2.1]", notPlain},
		{"ann@example.com, bob@example.com", "ann@example.com, bob@example.com", notPlain},
		{"ann..lee@example.com", "ann..lee@example.com", notPlain},
		{"ann @example.com", "ann @example.com", notPlain},
	} {
		t.Run(fmt.Sprintf("%.40q", tt.email), func(t *testing.T) {
			if trimmed, problem := checkEmail(tt.email); trimmed != tt.trimmed || problem != tt.problem {
				t.Errorf("checkEmail = %q, %q; want %q, %q", trimmed, problem, tt.trimmed, tt.problem)
			}
		})
	}
}

// POST and PUT give the whole user: both fields are required, null counting as absent, and one
// 400 reports every field that fails, name first whatever the body's order, for a form to show
// them all. What passes is stored trimmed.
func TestWholeUserNeedsBothFields(t *testing.T) {
	tests := []struct {
		name, body   string
		set          string // the fields set, as fieldsText shows them, when the body is taken
		nameProblem  string
		emailProblem string
	}{
		{name: "both, trimmed", body: `{"email":" ann@example.com ","name":" Ann "}`, set: `name "Ann", email "ann@example.com"`},
		{name: "no email", body: `{"name":"Ann"}`, emailProblem: "email is required"},
		{name: "no name", body: `{"email":"ann@example.com"}`, nameProblem: "name is required"},
		{name: "name null", body: `{"name":null,"email":"ann@example.com"}`, nameProblem: "name is required"},
		{name: "an empty object", body: `{}`, nameProblem: "name is required", emailProblem: "email is required"},
		{name: "null", body: `null`, nameProblem: "name is required", emailProblem: "email is required"},
		{name: "both fail, email first in the body", body: `{"email":"not an address","name":""}`,
			nameProblem: "name must not be empty", emailProblem: "email must be a plain address such as ann@example.com"},
	}
	for _, tt := range tests {
		for _, method := range []struct {
			name string
			rule func(userBody) (userFields, error)
		}{
			{"POST", userBody.createFields},
			{"PUT", func(b userBody) (userFields, error) { return b.replaceFields(7) }},
		} {
			t.Run(method.name+" "+tt.name, func(t *testing.T) {
				b, err := decodeUserBody([]byte(tt.body))
				if err != nil {
					t.Fatal(err)
				}
				fields, err := method.rule(b)
				if tt.nameProblem != "" || tt.emailProblem != "" {
					if want := invalidFields(tt.nameProblem, tt.emailProblem); !reflect.DeepEqual(err, want) {
						t.Errorf("error %#v\nwant  %#v", err, want)
					}
					return
				}
				if err != nil || fieldsText(fields) != tt.set {
					t.Errorf("set %s, error %v; want %s", fieldsText(fields), err, tt.set)
				}
			})
		}
	}
}

// A PATCH is a JSON Merge Patch (RFC 7396): it changes only the fields it names, and must name at
// least one (else it is 400 without fields: there is no field to show the problem beside). null
// asks to remove a field (RFC 7396 §2), which a required field refuses, field by field.
func TestPatchNeedsAFieldAndRefusesNull(t *testing.T) {
	changesNothing := badRequest("the patch changes nothing: give name, email or both")
	tests := []struct {
		name, body string
		set        string // the fields set, as fieldsText shows them, when the patch is taken
		want       error  // nil when the patch is taken
	}{
		{name: "the name alone", body: `{"name":" Ann Lee "}`, set: `name "Ann Lee", email kept`},
		{name: "the email alone", body: `{"email":"ann.lee@example.com"}`, set: `name kept, email "ann.lee@example.com"`},
		{name: "both", body: `{"email":"al@example.com","name":"Al"}`, set: `name "Al", email "al@example.com"`},
		{name: "an empty patch", body: `{}`, want: changesNothing},
		{name: "null for the whole body", body: `null`, want: changesNothing},
		{name: "the path's id alone", body: `{"id":7}`, want: changesNothing},
		{name: "name null", body: `{"name":null}`, want: invalidFields("name is required and cannot be null", "")},
		{name: "email null beside a good name", body: `{"email":null,"name":"Ann"}`, want: invalidFields("", "email is required and cannot be null")},
		{name: "both failing", body: `{"email":null,"name":""}`,
			want: invalidFields("name must not be empty", "email is required and cannot be null")},
		{name: "a bad email", body: `{"email":"Ann <ann@example.com>"}`, want: invalidFields("", "email must be a plain address such as ann@example.com")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := decodeUserBody([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			fields, err := b.patchFields(7)
			switch {
			case tt.want != nil:
				if !reflect.DeepEqual(err, tt.want) {
					t.Errorf("error %#v\nwant  %#v", err, tt.want)
				}
			case err != nil || fieldsText(fields) != tt.set:
				t.Errorf("set %s, error %v; want %s", fieldsText(fields), err, tt.set)
			}
		})
	}
}

// id is the server's: a POST body may not hold one, whatever its value, null included. A PUT or
// PATCH body may hold the path's id written as a JSON integer, as clients send back what they
// read, and no other: 7.0 and 7e0 are the same number written otherwise, and refused.
func TestIDInTheBodyIsThePathsOrNone(t *testing.T) {
	assigned := badRequest("id is assigned by the server: leave it out of the body")
	notThePaths := badRequest("id in the body must be the id of the path, written as the integer 7, or left out")
	rules := map[string]func(userBody) (userFields, error){
		"POST":  userBody.createFields,
		"PUT":   func(b userBody) (userFields, error) { return b.replaceFields(7) },
		"PATCH": func(b userBody) (userFields, error) { return b.patchFields(7) },
	}
	const ann = `"name":"Ann","email":"ann@example.com"`
	for _, tt := range []struct {
		method, body string
		want         error // nil when the body is taken
	}{
		{"POST", `{"id":1,` + ann + `}`, assigned},
		{"POST", `{"id":null,` + ann + `}`, assigned},
		{"PUT", `{"id":7,` + ann + `}`, nil},
		{"PATCH", `{"id":7,"name":"Ann"}`, nil},
		{"PUT", `{"id":7.0,` + ann + `}`, notThePaths},
		{"PATCH", `{"id":7e0,"name":"Ann"}`, notThePaths},
		{"PUT", `{"id":"7",` + ann + `}`, notThePaths},
		{"PATCH", `{"id":null,"name":"Ann"}`, notThePaths},
		{"PUT", `{"id":8,` + ann + `}`, notThePaths},
		{"PUT", `{"id":[7],` + ann + `}`, notThePaths},
	} {
		t.Run(tt.method+" "+tt.body, func(t *testing.T) {
			b, err := decodeUserBody([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rules[tt.method](b); !reflect.DeepEqual(err, tt.want) {
				t.Errorf("error %#v\nwant  %#v", err, tt.want)
			}
		})
	}
}

// Two users may not share an e-mail in any case: the unique key is the e-mail lower-cased, and
// the list's filters compare lower-cased too: ?email= the whole address, ?q= a part of the name
// or the e-mail (an empty q finds everyone).
func TestKeysAreLowerCased(t *testing.T) {
	ann := user{ID: 1, Name: "Ann Lee", Email: "Ann.Lee@Example.COM"}
	if got := ann.uniqueKey(); got != "ann.lee@example.com" {
		t.Errorf("uniqueKey = %q, want the e-mail lower-cased", got)
	}
	for _, tt := range []struct {
		filter, text string
		found        bool
	}{
		{"email", "ann.lee@example.com", true},
		{"email", "ANN.LEE@EXAMPLE.COM", true},
		{"email", "ann.lee@example", false},
		{"q", "LEE", true},
		{"q", "example.c", true},
		{"q", "ann lee@", false},
		{"q", "", true},
	} {
		t.Run(tt.filter+"="+tt.text, func(t *testing.T) {
			found := ann.contains(tt.text)
			if tt.filter == "email" {
				found = ann.hasEmail(tt.text)
			}
			if found != tt.found {
				t.Errorf("found %v, want %v", found, tt.found)
			}
		})
	}
}
