package kit

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// usersCreateRules: the rules of this reference only, written for users, of the topic create.
func usersCreateRules() []Rule {
	return []Rule{
		{
			ID: "create/ids-never-reused", Tier: Reference, Scope: ThisReference, Source: docRoutes, Doc: docRoutes, Needs: OwnItems,
			Requirement: "Ids increase and are never reused: a user created after the newest was deleted gets a higher id.",
			check: func(c *Client) error {
				newest, err := c.goneUser()
				if err != nil {
					return err
				}
				x := c.write(http.MethodPost, usersCollection, userJSON("Kit Ann", c.email()))
				next, err := x.decodeUser()
				if err != nil {
					return err
				}
				if next.ID <= newest.ID {
					return failf(x, "an id above "+strconv.FormatInt(newest.ID, 10)+", the deleted user's", x.summary())
				}
				return nil
			},
		},
		bodyRefused("create/empty-body-400", "An empty body, or one of white space only, is 400.",
			func(c *Client) []string { return []string{"", " \r\n\t "} }),
		bodyRefused("create/invalid-utf8-400", "A body that is not valid UTF-8 is 400, and creates nothing.",
			func(c *Client) []string {
				return []string{`{"name":"Kit ` + "\xff" + `","email":` + jsonString(c.email()) + `}`, c.validBody() + "\xc3"}
			}),
		bodyRefused("create/not-an-object-400", "A body that is an array, a string or a number is 400, and creates nothing.",
			func(c *Client) []string { return []string{`[` + c.validBody() + `]`, `"Kit Ann"`, `42`} }),
		bodyRefused("create/trailing-data-400", "Anything after the object (a second object, text, a comma) is 400, and creates nothing.",
			func(c *Client) []string {
				return []string{c.validBody() + ` {}`, c.validBody() + `x`, c.validBody() + `,`}
			}),
		bodyRefused("create/unknown-field-400", "A member other than name and email is 400, and creates nothing.",
			func(c *Client) []string {
				return []string{`{"name":"Kit Ann","email":` + jsonString(c.email()) + `,"age":36}`}
			}),
		{
			ID: "create/white-space-around-ok", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "White space before and after the object is fine: the user is created.",
			check: func(c *Client) error {
				return c.write(http.MethodPost, usersCollection, " \r\n\t"+c.validBody()+"\n\n \t").succeeded()
			},
		},
		typeRule("create/wrong-type-400", "A value of the wrong type (a number or an array for name, an object or true for email) is 400, naming that field, "+
			"in its message or in fields, and creates nothing.",
			func(c *Client) []typeCase {
				email := jsonString(c.email())
				return []typeCase{
					{`{"name":5,"email":` + email + `}`, "name"},
					{`{"name":["Kit Ann"],"email":` + email + `}`, "name"},
					{`{"name":"Kit Ann","email":{"address":` + email + `}}`, "email"},
					{`{"name":"Kit Ann","email":true}`, "email"},
				}
			}),
		typeRule("create/wrong-type-alone", `A value of the wrong type is reported on its own, before the field rules: {"name": 5, "email": "not an address"} is 400 naming name, `+
			"with no fields member or one that names only name.",
			func(c *Client) []typeCase {
				return []typeCase{{`{"name":5,"email":"not an address ` + c.group + `"}`, "name"}}
			}),
		{
			ID: "create/id-400", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "id is the server's to give: in a POST body, null included, it is 400, and creates nothing.",
			check: func(c *Client) error {
				for _, id := range []string{"3", "null"} {
					email := c.email()
					x := c.write(http.MethodPost, usersCollection, `{"id":`+id+`,"name":"Kit Ann","email":`+jsonString(email)+`}`)
					if err := firstError(x.statusIs(http.StatusBadRequest), c.userNotCreated(x, email)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		fieldRule("create/name-required", "A body without name, or with name null, is 400 with fields naming name.",
			func(c *Client) []fieldCase {
				return []fieldCase{
					{`{"email":` + jsonString(c.email()) + `}`, []string{"name"}},
					{`{"name":null,"email":` + jsonString(c.email()) + `}`, []string{"name"}},
				}
			}),
		fieldRule("create/email-required", "A body without email, or with email null, is 400 with fields naming email.",
			func(c *Client) []fieldCase {
				name := jsonString("Kit " + c.group)
				return []fieldCase{{`{"name":` + name + `}`, []string{"email"}}, {`{"name":` + name + `,"email":null}`, []string{"email"}}}
			}),
		fieldRule("create/name-not-blank", "A name that is empty or only white space is 400 with fields naming name.",
			func(c *Client) []fieldCase {
				return []fieldCase{{userJSON("", c.email()), []string{"name"}}, {userJSON(" \t \r\n", c.email()), []string{"name"}}}
			}),
		{
			ID: "create/values-trimmed", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "White space around the name and the e-mail is trimmed, and the trimmed values are stored; white space inside a name stays.",
			check: func(c *Client) error {
				email := c.email()
				x := c.write(http.MethodPost, usersCollection, userJSON("\t Kit  Carol Day \n", " "+email+"\r\n"))
				u, err := x.decodeUser()
				if err != nil {
					return err
				}
				return firstError(x.isUser(user{ID: u.ID, Name: "Kit  Carol Day", Email: email}), c.userStored(x, user{ID: u.ID, Name: "Kit  Carol Day", Email: email}))
			},
		},
		{
			ID: "create/name-100-characters", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A name may have up to 100 characters (Unicode code points), counted after trimming; 101 is 400 with fields naming name.",
			check: func(c *Client) error {
				for _, name := range []string{strings.Repeat("é", 100), "  " + strings.Repeat("k", 100) + "  "} {
					email := c.email()
					x := c.write(http.MethodPost, usersCollection, userJSON(name, email))
					u, err := x.decodeUser()
					if err := firstError(x.succeeded(), err); err != nil {
						return err
					}
					if err := x.isUser(user{ID: u.ID, Name: strings.TrimSpace(name), Email: email}); err != nil {
						return err
					}
				}
				return c.write(http.MethodPost, usersCollection, userJSON(strings.Repeat("é", 101), c.email())).refused("name")
			},
		},
		fieldRule("create/name-no-control-characters", "A name holding a control character (tab, line feed, BEL, DEL) is 400 with fields naming name.",
			func(c *Client) []fieldCase {
				var cases []fieldCase
				for _, name := range []string{"Kit\tCarol", "Kit\nCarol", "Kit\u0007Carol", "Kit Carol\u007f"} {
					cases = append(cases, fieldCase{userJSON(name, c.email()), []string{"name"}})
				}
				return cases
			}),
		fieldRule("create/email-plain-address", "An e-mail that is not a bare address (no @, two @, a space inside, a display name, angle brackets, a domain in brackets, two addresses) is 400 with fields naming email.",
			func(c *Client) []fieldCase {
				name := "Kit " + c.group
				var cases []fieldCase
				for _, email := range []string{c.group + "-no-at", c.group + "@kit@example.com", c.group + " kit@example.com",
					"Kit <" + c.email() + ">", "<" + c.email() + ">", c.group + "@[192.0.2.1]", c.email() + ", " + c.email()} {
					cases = append(cases, fieldCase{userJSON(name, email), []string{"email"}})
				}
				return cases
			}),
		{
			ID: "create/email-plus-and-dots-taken", Tier: Reference, Scope: ThisReference, Source: "RFC 5322 §3.4.1; " + docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "An address with dots, an apostrophe, a plus sign and capitals, kit.O'Hara+news@Example.COM, is taken and stored as sent.",
			check: func(c *Client) error {
				email := c.group + ".O'Hara+news@Example.COM"
				x := c.write(http.MethodPost, usersCollection, userJSON("Kit Ann", email))
				u, err := x.decodeUser()
				if err := firstError(x.succeeded(), err); err != nil {
					return err
				}
				return x.isUser(user{ID: u.ID, Name: "Kit Ann", Email: email})
			},
		},
		{
			ID: "create/email-254-bytes", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "An e-mail may have up to 254 bytes, counted after trimming; 255 is 400 with fields naming email.",
			check: func(c *Client) error {
				local := c.group + "-" + strings.Repeat("a", 64-len(c.group)-1)
				domain := strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 57) + ".com"
				email := local + "@" + domain // 64 + 1 + 189 = 254 bytes
				x := c.write(http.MethodPost, usersCollection, userJSON("Kit Ann", "  "+email+" "))
				u, err := x.decodeUser()
				if err := firstError(x.succeeded(), err); err != nil {
					return err
				}
				if err := x.isUser(user{ID: u.ID, Name: "Kit Ann", Email: email}); err != nil {
					return err
				}
				return c.write(http.MethodPost, usersCollection, userJSON("Kit Ann", "a"+email)).refused("email")
			},
		},
		{
			ID: "create/email-case-kept", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "An e-mail is stored as sent, its case kept.",
			check: func(c *Client) error {
				email := strings.ToUpper(c.group) + "-Carol.Day@Example.COM"
				x := c.write(http.MethodPost, usersCollection, userJSON("Kit Carol", email))
				u, err := x.decodeUser()
				if err != nil {
					return err
				}
				return firstError(x.isUser(user{ID: u.ID, Name: "Kit Carol", Email: email}), c.userStored(x, user{ID: u.ID, Name: "Kit Carol", Email: email}))
			},
		},
		fieldRule("create/fields-every-failure", "One 400 reports every field that fails: with both bad, fields names name and email.",
			func(c *Client) []fieldCase {
				return []fieldCase{{`{"name":"","email":"not an address ` + c.group + `"}`, []string{"name", "email"}}}
			}),
		{
			ID: "create/media-type-415", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A POST whose Content-Type is missing or not application/json (text/plain, application/merge-patch+json) is 415, and creates nothing.",
			check: func(c *Client) error {
				for _, contentType := range [][]string{nil, {"Content-Type", "text/plain"}, {"Content-Type", mediaTypeMerge}} {
					email := c.email()
					x := c.send(request{method: http.MethodPost, target: usersCollection, as: writer, body: userJSON("Kit Ann", email), header: contentType})
					if err := firstError(x.statusIs(http.StatusUnsupportedMediaType), c.userNotCreated(x, email)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "create/charset-415", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A POST whose Content-Type names a charset other than utf-8 is 415.",
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.statusIs(http.StatusUnsupportedMediaType) },
					c.postAs("application/json; charset=iso-8859-1"), c.postAs("application/json; charset=utf-16"))
			},
		},
		{
			ID: "create/415-accept-post", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A 415 to POST, for its media type or for a Content-Encoding, carries Accept-Post: application/json.",
			check: func(c *Client) error {
				answers := statusIn([]*reply{c.postAs("text/plain"), c.write(http.MethodPost, usersCollection, c.validBody(), "Content-Encoding", "gzip")},
					http.StatusUnsupportedMediaType)
				if len(answers) == 0 {
					return skipf("no 415 to look at: see create/media-type-415")
				}
				return every(func(x *reply) error { return x.listIs("Accept-Post", mediaTypeJSON) }, answers...)
			},
		},
		{
			ID: "create/content-encoding-415", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A POST whose body has a Content-Encoding (gzip, deflate) is 415, and creates nothing: the API takes bodies as they are.",
			check: func(c *Client) error {
				for _, coding := range []string{"gzip", "deflate"} {
					email := c.email()
					x := c.write(http.MethodPost, usersCollection, userJSON("Kit Ann", email), "Content-Encoding", coding)
					if err := firstError(x.statusIs(http.StatusUnsupportedMediaType), c.userNotCreated(x, email)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "create/over-1-mib-413", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A body of 1 MiB and one byte is 413, whatever it holds and whether its length is declared or chunked, and creates nothing.",
			check: func(c *Client) error {
				for _, framing := range []framing{declared, chunked} {
					email := c.email()
					x := c.send(request{method: http.MethodPost, target: usersCollection, as: writer, framing: framing,
						header: []string{"Content-Type", mediaTypeJSON}, body: padded(userJSON("Kit Ann", email), maxBodyBytes+1)})
					if err := firstError(x.statusIs(http.StatusRequestEntityTooLarge), c.userNotCreated(x, email)); err != nil {
						return err
					}
				}
				x := c.send(request{method: http.MethodPost, target: usersCollection, as: writer, framing: chunked,
					header: []string{"Content-Type", mediaTypeJSON}, body: strings.Repeat("x", maxBodyBytes+1)})
				return x.statusIs(http.StatusRequestEntityTooLarge)
			},
		},
		{
			ID: "create/1-mib-taken", Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems,
			Requirement: "A body of exactly 1 MiB is read whole and judged: valid JSON padded with white space to 1 MiB creates the user.",
			check: func(c *Client) error {
				return c.write(http.MethodPost, usersCollection, padded(userJSON("Kit Ann", c.email()), maxBodyBytes)).succeeded()
			},
		},
	}
}

// bodyRefused makes a rule that each of a set of bodies POSTed is 400 with the error body, and that
// none of them creates a user.
func bodyRefused(id, requirement string, bodies func(c *Client) []string) Rule {
	return Rule{ID: id, Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems, Requirement: requirement,
		check: func(c *Client) error {
			for _, body := range bodies(c) {
				x := c.write(http.MethodPost, usersCollection, body)
				if err := firstError(x.statusIs(http.StatusBadRequest), c.noUserLike(x, func(u user) bool { return strings.Contains(strings.ToLower(u.Email), c.group) })); err != nil {
					return err
				}
			}
			return nil
		}}
}

// A fieldCase is a POST body the field rules refuse, and the fields its 400 must name.
type fieldCase struct {
	body   string
	fields []string
}

// fieldRule makes a rule that each body POSTed is 400 with fields naming what fails.
func fieldRule(id, requirement string, cases func(c *Client) []fieldCase) Rule {
	return Rule{ID: id, Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems, Requirement: requirement,
		check: func(c *Client) error {
			for _, fc := range cases(c) {
				if err := c.write(http.MethodPost, usersCollection, fc.body).refused(fc.fields...); err != nil {
					return err
				}
			}
			return nil
		}}
}

// A typeCase is a POST body with a value of the wrong type, and the field that has it.
type typeCase struct {
	body, field string
}

// typeRule makes a rule that each body POSTed is 400 naming the field of the wrong type, and creates
// nothing. Decoding stops at the wrong type, before the field rules: the 400 names that field alone,
// in a fields member or, without one, in its message. The error body itself is the errors rules' to
// check.
func typeRule(id, requirement string, cases func(c *Client) []typeCase) Rule {
	return Rule{ID: id, Tier: Reference, Scope: ThisReference, Source: docBodies, Doc: docBodies, Needs: OwnItems, Requirement: requirement,
		check: func(c *Client) error {
			for _, tc := range cases(c) {
				x := c.write(http.MethodPost, usersCollection, tc.body)
				if err := firstError(x.statusIs(http.StatusBadRequest), x.namesField(tc.field),
					c.noUserLike(x, func(u user) bool { return strings.Contains(strings.ToLower(u.Email), c.group) })); err != nil {
					return err
				}
			}
			return nil
		}}
}

// namesField checks that a 400 names one field: in its fields member, which then names it alone, or,
// without one, as a word of its message.
func (x *reply) namesField(field string) error {
	var body struct {
		Fields map[string]json.RawMessage `json:"fields"`
	}
	json.Unmarshal(x.responseBody, &body)
	if body.Fields != nil {
		return x.fieldsAre(field)
	}
	if !mentionsWord(x.errorMessage(), field) {
		return failf(x, "a message that names the field "+field, x.summary())
	}
	return nil
}
