package kit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// createRules: POST /api/users, and the body rules every write shares, proved on POST.
func createRules() []Rule {
	return []Rule{
		{
			ID: "create/201", Tier: Must, Source: docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "POST /api/users with a name and an e-mail answers 201 Created.",
			check: func(c *Client) error {
				return c.write(http.MethodPost, collection, userJSON("Kit Ann", c.email())).statusIs(http.StatusCreated)
			},
		},
		{
			ID: "create/201-body-is-user", Tier: Must, Source: docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "The answer to a create is the new user: an integer id, and the name and e-mail as sent.",
			check: func(c *Client) error {
				email := c.email()
				x := c.write(http.MethodPost, collection, userJSON("Kit Ann", email))
				u, err := x.decodeUser()
				if err != nil {
					return err
				}
				return x.isUser(user{ID: u.ID, Name: "Kit Ann", Email: email})
			},
		},
		{
			ID: "create/201-location", Tier: Should, Source: "RFC 9110 §15.3.2", Doc: docRoutes, Needs: OwnUsers,
			Requirement: "The answer to a create carries Location, the URI of the new user: /api/users/{id}.",
			check: func(c *Client) error {
				x := c.write(http.MethodPost, collection, userJSON("Kit Ann", c.email()))
				u, err := x.decodeUser()
				if x.status/100 != 2 || err != nil {
					return skipf("no user created to look at: see create/201")
				}
				return x.namesURI("Location", u.path())
			},
		},
		{
			ID: "create/201-etag", Tier: Reference, Source: docConditional, Doc: docConditional, Needs: OwnUsers,
			Requirement: "The answer to a create carries the new user's ETag, the one a GET of the user answers with.",
			check: func(c *Client) error {
				x := c.write(http.MethodPost, collection, userJSON("Kit Ann", c.email()))
				u, err := x.decodeUser()
				if x.status/100 != 2 || err != nil {
					return skipf("no user created to look at: see create/201")
				}
				return x.tagIsCurrent(c, u.path())
			},
		},
		{
			ID: "create/each-post-a-new-user", Tier: Must, Source: docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "Each POST creates another user, with an id of its own.",
			check: func(c *Client) error {
				first, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.write(http.MethodPost, collection, userJSON("Kit Ann", c.email()))
				second, err := x.decodeUser()
				if err != nil {
					return err
				}
				if second.ID == first.ID {
					return failf(x, "an id other than the first user's, "+strconv.FormatInt(first.ID, 10), x.summary())
				}
				return nil
			},
		},
		{
			ID: "create/ids-never-reused", Tier: Reference, Source: docRoutes, Doc: docRoutes, Needs: OwnUsers,
			Requirement: "Ids increase and are never reused: a user created after the newest was deleted gets a higher id.",
			check: func(c *Client) error {
				newest, err := c.gone()
				if err != nil {
					return err
				}
				x := c.write(http.MethodPost, collection, userJSON("Kit Ann", c.email()))
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
		{
			ID: "create/invalid-refused", Tier: Must, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A create whose body lacks the name or the e-mail is refused with 400 (or 422 at this tier), and creates no user.",
			check: func(c *Client) error {
				email, name := c.email(), "Kit "+c.group
				x := c.write(http.MethodPost, collection, `{"email":`+jsonString(email)+`}`)
				if err := firstError(x.statusIs(http.StatusBadRequest, http.StatusUnprocessableEntity), c.notCreated(x, email)); err != nil {
					return err
				}
				x = c.write(http.MethodPost, collection, `{"name":`+jsonString(name)+`}`)
				return firstError(x.statusIs(http.StatusBadRequest, http.StatusUnprocessableEntity), c.noneLike(x, func(u user) bool { return u.Name == name }))
			},
		},
		{
			ID: "create/syntax-error-400", Tier: Must, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A body that is not valid JSON is answered 400.",
			check: func(c *Client) error {
				email := jsonString(c.email())
				return every(func(x *reply) error { return x.statusIs(http.StatusBadRequest) },
					c.write(http.MethodPost, collection, `{"name":"Kit Ann",,"email":`+email+`}`),
					c.write(http.MethodPost, collection, `{"name" "Kit Ann"}`),
					c.write(http.MethodPost, collection, `{"name":"Kit Ann","email":`+email),
					c.write(http.MethodPost, collection, `{'name':'Kit Ann'}`))
			},
		},
		bodyRefused("create/empty-body-400", "An empty body, or one of white space only, is 400.",
			func(c *Client) []string { return []string{"", " \r\n\t "} }),
		bodyRefused("create/byte-order-mark-400", "A body that starts with a byte-order mark is 400 (RFC 8259 §8.1), and creates nothing.",
			func(c *Client) []string { return []string{"\uFEFF" + c.validBody()} }),
		bodyRefused("create/invalid-utf8-400", "A body that is not valid UTF-8 is 400, and creates nothing.",
			func(c *Client) []string {
				return []string{`{"name":"Kit ` + "\xff" + `","email":` + jsonString(c.email()) + `}`, c.validBody() + "\xc3"}
			}),
		bodyRefused("create/not-an-object-400", "A body that is null, an array, a string or a number is 400.",
			func(c *Client) []string { return []string{`null`, `[` + c.validBody() + `]`, `"Kit Ann"`, `42`} }),
		bodyRefused("create/trailing-data-400", "Anything after the object (a second object, text, a comma) is 400, and creates nothing.",
			func(c *Client) []string {
				return []string{c.validBody() + ` {}`, c.validBody() + `x`, c.validBody() + `,`}
			}),
		bodyRefused("create/unknown-field-400", "A member other than name and email is 400, and creates nothing.",
			func(c *Client) []string {
				return []string{`{"name":"Kit Ann","email":` + jsonString(c.email()) + `,"age":36}`}
			}),
		bodyRefused("create/member-names-exact", `Member names are matched exactly: "Name" or "EMAIL" is an unknown member, 400, and creates nothing.`,
			func(c *Client) []string {
				return []string{
					`{"Name":"Kit Ann","email":` + jsonString(c.email()) + `}`,
					`{"name":"Kit Ann","EMAIL":` + jsonString(c.email()) + `}`,
				}
			}),
		bodyRefused("create/duplicate-member-400", "A member given twice is 400 (RFC 8259 §4), and creates nothing.",
			func(c *Client) []string {
				return []string{`{"name":"Kit Ann","name":"Kit Bob","email":` + jsonString(c.email()) + `}`}
			}),
		{
			ID: "create/white-space-around-ok", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "White space before and after the object is fine: the user is created.",
			check: func(c *Client) error {
				return c.write(http.MethodPost, collection, " \r\n\t"+c.validBody()+"\n\n \t").succeeded()
			},
		},
		fieldRule("create/wrong-type-400", "A value of the wrong type (a number or an array for name, an object or true for email) is 400, with fields naming that field.",
			func(c *Client) []fieldCase {
				email := jsonString(c.email())
				return []fieldCase{
					{`{"name":5,"email":` + email + `}`, []string{"name"}},
					{`{"name":["Kit Ann"],"email":` + email + `}`, []string{"name"}},
					{`{"name":"Kit Ann","email":{"address":` + email + `}}`, []string{"email"}},
					{`{"name":"Kit Ann","email":true}`, []string{"email"}},
				}
			}),
		fieldRule("create/wrong-type-alone", `A value of the wrong type is reported on its own: {"name": 5, "email": "not an address"} names only name.`,
			func(c *Client) []fieldCase {
				return []fieldCase{{`{"name":5,"email":"not an address ` + c.group + `"}`, []string{"name"}}}
			}),
		fieldRule("create/first-problem-in-document-order", `The first problem in the body's order is the one reported: {"email":5,"name":6} and {"email":5,"age":1} are type errors of email, with fields naming only email.`,
			func(c *Client) []fieldCase {
				return []fieldCase{{`{"email":5,"name":6}`, []string{"email"}}, {`{"email":5,"age":1}`, []string{"email"}}}
			}),
		fieldRule("create/member-judged-as-read", `Each member is judged as soon as it is read, before the rest of the body: {"name":5, cut short, {"name":{"kit":1,"kit":2}}, and {"id":"7","name":5} are type errors of name, with fields naming it.`,
			func(c *Client) []fieldCase {
				return []fieldCase{
					{`{"name":5, `, []string{"name"}},
					{`{"name":{"kit":1,"kit":2},"email":` + jsonString(c.email()) + `}`, []string{"name"}},
					{`{"id":"7","name":5,"email":` + jsonString(c.email()) + `}`, []string{"name"}},
				}
			}),
		{
			ID: "create/id-400", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "id is the server's to give: in a POST body, null included, it is 400, and creates nothing.",
			check: func(c *Client) error {
				for _, id := range []string{"3", "null"} {
					email := c.email()
					x := c.write(http.MethodPost, collection, `{"id":`+id+`,"name":"Kit Ann","email":`+jsonString(email)+`}`)
					if err := firstError(x.statusIs(http.StatusBadRequest), c.notCreated(x, email)); err != nil {
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
		fieldRule("create/name-not-blank", "A name that is empty or only white space, Unicode's included, is 400 with fields naming name.",
			func(c *Client) []fieldCase {
				return []fieldCase{{userJSON("", c.email()), []string{"name"}}, {userJSON(" \t\u00a0\u3000", c.email()), []string{"name"}}}
			}),
		{
			ID: "create/values-trimmed", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "White space around the name and the e-mail, Unicode's included, is trimmed, and the trimmed values are stored.",
			check: func(c *Client) error {
				email := c.email()
				x := c.write(http.MethodPost, collection, userJSON("\u00a0\u3000 Kit  Carol Day \t", " "+email+"\u2009\n"))
				u, err := x.decodeUser()
				if err != nil {
					return err
				}
				return firstError(x.isUser(user{ID: u.ID, Name: "Kit  Carol Day", Email: email}), c.stored(x, user{ID: u.ID, Name: "Kit  Carol Day", Email: email}))
			},
		},
		{
			ID: "create/name-100-characters", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A name may have up to 100 characters (Unicode code points), counted after trimming; 101 is 400 with fields naming name.",
			check: func(c *Client) error {
				for _, name := range []string{strings.Repeat("é", 100), "  " + strings.Repeat("k", 100) + "  "} {
					email := c.email()
					x := c.write(http.MethodPost, collection, userJSON(name, email))
					u, err := x.decodeUser()
					if err := firstError(x.succeeded(), err); err != nil {
						return err
					}
					if err := x.isUser(user{ID: u.ID, Name: strings.TrimSpace(name), Email: email}); err != nil {
						return err
					}
				}
				return c.write(http.MethodPost, collection, userJSON(strings.Repeat("é", 101), c.email())).refused("name")
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
		{
			ID: "create/white-space-is-unicodes", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "The white space trimmed is Unicode's White_Space property: U+0085, U+1680, U+2028, U+205F and U+000B around a name are trimmed, while U+200B, U+180E and U+FEFF are not white space and stay.",
			check: func(c *Client) error {
				for _, tt := range []struct{ sent, stored string }{
					{"\u0085\u1680 Kit Ann\u2028\u205f\u000b", "Kit Ann"},
					{"\u200bKit Ann\ufeff", "\u200bKit Ann\ufeff"},
					{"\u180eKit Ann", "\u180eKit Ann"},
				} {
					email := c.email()
					x := c.write(http.MethodPost, collection, userJSON(tt.sent, email))
					u, err := x.decodeUser()
					if err := firstError(x.succeeded(), err); err != nil {
						return err
					}
					if err := x.isUser(user{ID: u.ID, Name: tt.stored, Email: email}); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "create/control-characters-are-cc", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A control character is one of general category Cc: a name holding U+0085, U+009F or U+001C is 400 with fields naming name, while one holding U+200B, U+2028 or U+FEFF is taken.",
			check: func(c *Client) error {
				for _, name := range []string{"Kit\u0085Ann", "Kit Ann\u009f", "\u001cKit Ann"} {
					if err := c.write(http.MethodPost, collection, userJSON(name, c.email())).refused("name"); err != nil {
						return err
					}
				}
				return c.write(http.MethodPost, collection, userJSON("Kit\u200bAnn\u2028Lee\ufeff Day", c.email())).succeeded()
			},
		},
		{
			ID: "create/lone-surrogate-replaced", Tier: Reference, Source: "RFC 8259 §8.2; " + docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: `An escaped surrogate that is not half of a pair, \ud800 or \udc00 alone, is read as U+FFFD and stored so, while a pair is the character it encodes.`,
			check: func(c *Client) error {
				email := c.email()
				x := c.write(http.MethodPost, collection, `{"name":"Kit \ud800 \udc00 \ud83d\ude00","email":`+jsonString(email)+`}`)
				u, err := x.decodeUser()
				if err := firstError(x.succeeded(), err); err != nil {
					return err
				}
				want := user{ID: u.ID, Name: "Kit \ufffd \ufffd \U0001f600", Email: email}
				return firstError(x.isUser(want), c.stored(x, want))
			},
		},
		fieldRule("create/email-plain-address", "An e-mail that is not a bare address (no @, a display name, angle brackets, a domain in brackets, two addresses) is 400 with fields naming email.",
			func(c *Client) []fieldCase {
				name := "Kit " + c.group
				var cases []fieldCase
				for _, email := range []string{c.group + "-no-at", "Kit <" + c.email() + ">", "<" + c.email() + ">",
					c.group + "@[192.0.2.1]", c.email() + ", " + c.email()} {
					cases = append(cases, fieldCase{userJSON(name, email), []string{"email"}})
				}
				return cases
			}),
		{
			ID: "create/email-dot-atom-taken", Tier: Reference, Source: "RFC 5322 §3.2.3, §3.4.1; RFC 6532 §3.2; " + docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "An e-mail that is a dot-atom, @ and a dot-atom, with the signs atext allows and non-ASCII characters, is taken and stored as sent: kit.O'Hara+news@Example.COM, !#$%&'*+/=?^_`{|}~-kit@example.com, kit@localhost, zoë-kit@müller.example.",
			check: func(c *Client) error {
				for _, email := range []string{c.group + ".O'Hara+news@Example.COM", "!#$%&'*+/=?^_`{|}~-" + c.group + "@example.com",
					c.group + "@localhost", "zoë-" + c.group + "@müller.example"} {
					x := c.write(http.MethodPost, collection, userJSON("Kit Ann", email))
					u, err := x.decodeUser()
					if err := firstError(x.succeeded(), err); err != nil {
						return err
					}
					if err := x.isUser(user{ID: u.ID, Name: "Kit Ann", Email: email}); err != nil {
						return err
					}
				}
				return nil
			},
		},
		fieldRule("create/email-not-dot-atom-400", `An e-mail with a comment, a quoted local part, a dot at the start or end of a part or two together, white space or a control character inside, one of , ; : \ or a second @ is 400 with fields naming email.`,
			func(c *Client) []fieldCase {
				g := c.group
				var cases []fieldCase
				for _, email := range []string{g + "@example.com (Kit)", "(Kit)" + g + "@example.com", `"` + g + `"@example.com`, `"` + g + ` kit"@example.com`,
					"." + g + "@example.com", g + ".@example.com", g + "..kit@example.com", g + "@example..com", g + "@example.com.",
					g + " kit@example.com", g + "@ example.com", g + "\tkit@example.com", g + "\u007f@example.com",
					g + ",kit@example.com", g + ";kit@example.com", g + ":kit@example.com", g + `\kit@example.com`, g + "@kit@example.com",
					g + "@[IPv6:2001:db8::1]"} {
					cases = append(cases, fieldCase{userJSON("Kit "+g, email), []string{"email"}})
				}
				return cases
			}),
		{
			ID: "create/email-254-bytes", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "An e-mail may have up to 254 bytes, counted after trimming; 255 is 400 with fields naming email.",
			check: func(c *Client) error {
				local := c.group + "-" + strings.Repeat("a", 64-len(c.group)-1)
				domain := strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 57) + ".com"
				email := local + "@" + domain // 64 + 1 + 189 = 254 bytes
				x := c.write(http.MethodPost, collection, userJSON("Kit Ann", "  "+email+" "))
				u, err := x.decodeUser()
				if err := firstError(x.succeeded(), err); err != nil {
					return err
				}
				if err := x.isUser(user{ID: u.ID, Name: "Kit Ann", Email: email}); err != nil {
					return err
				}
				return c.write(http.MethodPost, collection, userJSON("Kit Ann", "a"+email)).refused("email")
			},
		},
		{
			ID: "create/email-case-kept", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "An e-mail is stored as sent, its case kept.",
			check: func(c *Client) error {
				email := strings.ToUpper(c.group) + "-Carol.Day@Example.COM"
				x := c.write(http.MethodPost, collection, userJSON("Kit Carol", email))
				u, err := x.decodeUser()
				if err != nil {
					return err
				}
				return firstError(x.isUser(user{ID: u.ID, Name: "Kit Carol", Email: email}), c.stored(x, user{ID: u.ID, Name: "Kit Carol", Email: email}))
			},
		},
		fieldRule("create/fields-every-failure", "One 400 reports every field that fails: with both bad, fields names name and email.",
			func(c *Client) []fieldCase {
				return []fieldCase{{`{"name":"","email":"not an address ` + c.group + `"}`, []string{"name", "email"}}}
			}),
		{
			ID: "create/fields-name-first", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "The fields object lists the failing fields in the order of the rules, name first, whatever the order of the body.",
			check: func(c *Client) error {
				x := c.write(http.MethodPost, collection, `{"email":"not an address `+c.group+`","name":""}`)
				var body struct{ Fields json.RawMessage }
				json.Unmarshal(x.responseBody, &body)
				if names, _ := memberNames(body.Fields); strings.Join(names, ",") != "name,email" {
					return failf(x, `"fields": {"name": ..., "email": ...}, name first`, x.summary())
				}
				return nil
			},
		},
		{
			ID: "create/email-taken-409", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A create with an e-mail another user has, compared case-insensitively and after trimming, is 409, and creates nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				for _, email := range []string{u.Email, strings.ToUpper(u.Email), " " + u.Email + " "} {
					x := c.write(http.MethodPost, collection, userJSON("Kit Ann Two", email))
					if err := firstError(x.statusIs(http.StatusConflict),
						c.noneLike(x, func(other user) bool { return other.ID != u.ID && strings.EqualFold(other.Email, u.Email) })); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "create/email-taken-lower-cased-per-character", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "E-mails compare lower-cased a character at a time by Unicode's simple mapping: İZMIR-kit@EXAMPLE.COM is 409 once izmir-kit@example.com exists, while STRASSE-kit@example.com and straße-kit@example.com are two addresses.",
			check: func(c *Client) error {
				u, err := c.newUserWith("Kit Ann", "izmir-"+c.group+"@example.com")
				if err != nil {
					return err
				}
				x := c.write(http.MethodPost, collection, userJSON("Kit Bob", strings.ToUpper("İzmir-"+c.group+"@example.com")))
				if err := firstError(x.statusIs(http.StatusConflict),
					c.noneLike(x, func(other user) bool {
						return other.ID != u.ID && strings.Contains(strings.ToLower(other.Email), "-"+c.group+"@")
					})); err != nil {
					return err
				}
				return every(func(x *reply) error { return x.succeeded() },
					c.write(http.MethodPost, collection, userJSON("Kit Carol", "STRASSE-"+c.group+"@example.com")),
					c.write(http.MethodPost, collection, userJSON("Kit Dan", "straße-"+c.group+"@example.com")))
			},
		},
		{
			ID: "create/media-type-415", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A POST whose Content-Type is missing, malformed or not application/json (text/plain, application/merge-patch+json) is 415, and creates nothing.",
			check: func(c *Client) error {
				for _, contentType := range [][]string{nil, {"Content-Type", "text/plain"}, {"Content-Type", mediaTypeMerge}, {"Content-Type", "application/json;;"}} {
					email := c.email()
					x := c.send(request{method: http.MethodPost, target: collection, as: writer, body: userJSON("Kit Ann", email), header: contentType})
					if err := firstError(x.statusIs(http.StatusUnsupportedMediaType), c.notCreated(x, email)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "create/media-type-parameters-taken", Tier: Reference, Source: "RFC 9110 §8.3.1; " + docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: `A Content-Type of application/json with one empty parameter at its end, white space around ; and =, an empty charset or another parameter is taken: application/json; and application/json ; charset = utf-8 ; and charset="" and version=2.`,
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.succeeded() },
					c.postAs("application/json;"), c.postAs("application/json ; charset = utf-8 ;"), c.postAs(`application/json; charset=""`),
					c.postAs("application/json; version=2"))
			},
		},
		{
			ID: "create/media-type-parameters-415", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A Content-Type of application/json whose parameters do not parse is 415, and creates nothing: an empty parameter but at the end (;; or ; ; or ;;charset=utf-8), a parameter without = or without a value, an unquoted value with a space, or charset given twice with two values.",
			check: func(c *Client) error {
				for _, contentType := range []string{"application/json;;", "application/json; ;", "application/json;;charset=utf-8",
					"application/json; charset", "application/json; charset=", "application/json; version=2 3",
					"application/json; charset=utf-8; charset=iso-8859-1"} {
					email := c.email()
					x := c.send(request{method: http.MethodPost, target: collection, as: writer, body: userJSON("Kit Ann", email),
						header: []string{"Content-Type", contentType}})
					if err := firstError(x.statusIs(http.StatusUnsupportedMediaType), c.notCreated(x, email)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "create/charset-415", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A POST whose Content-Type names a charset other than utf-8 is 415.",
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.statusIs(http.StatusUnsupportedMediaType) },
					c.postAs("application/json; charset=iso-8859-1"), c.postAs("application/json; charset=utf-16"))
			},
		},
		{
			ID: "create/charset-utf-8-taken", Tier: Should, Source: "RFC 8259 §11", Doc: docBodies, Needs: OwnUsers,
			Requirement: "A POST whose Content-Type is application/json with charset=utf-8, in any case, quoted or not, is taken.",
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.succeeded() },
					c.postAs("application/json; charset=utf-8"), c.postAs(`application/json;charset="UTF-8"`))
			},
		},
		{
			ID: "create/media-type-any-case", Tier: Should, Source: "RFC 9110 §8.3.1", Doc: docBodies, Needs: OwnUsers,
			Requirement: "Media types compare case-insensitively: Application/JSON is taken.",
			check:       func(c *Client) error { return c.postAs("Application/JSON").succeeded() },
		},
		{
			ID: "create/415-accept-post", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A 415 to POST carries Accept-Post: application/json.",
			check: func(c *Client) error {
				x := c.postAs("text/plain")
				if x.status != http.StatusUnsupportedMediaType {
					return skipf("no 415 to look at: see create/media-type-415")
				}
				return x.listIs("Accept-Post", mediaTypeJSON)
			},
		},
		{
			ID: "create/content-encoding-415", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A POST whose body has a Content-Encoding header, gzip, identity or empty, is 415, and creates nothing.",
			check: func(c *Client) error {
				for _, coding := range []string{"gzip", "identity", ""} {
					email := c.email()
					x := c.write(http.MethodPost, collection, userJSON("Kit Ann", email), "Content-Encoding", coding)
					if err := firstError(x.statusIs(http.StatusUnsupportedMediaType), c.notCreated(x, email)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "create/media-type-ascii-415", Tier: Reference, Source: "RFC 9110 §8.3.1, §5.6.3; " + docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "Media types compare as ASCII, case-insensitively, with only spaces and tabs around their parts: a Content-Type holding a byte that is not " +
				"visible ASCII, space or tab is 415, so applİcation/json (a capital dotted I, U+0130) and application/json followed by a no-break space (U+00A0) are 415.",
			check: func(c *Client) error {
				for _, contentType := range []string{"applİcation/json", "application/json\u00a0", "application/\u212Aon"} {
					email := c.email()
					x := c.send(request{method: http.MethodPost, target: collection, as: writer, body: userJSON("Kit Ann", email),
						header: []string{"Content-Type", contentType}})
					if err := firstError(x.statusIs(http.StatusUnsupportedMediaType), c.notCreated(x, email)); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "create/syntax-error-offset", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A syntax error's message names the byte offset, counted from 0, of the first byte that cannot continue valid JSON, or the body's length when it ends too soon; body → offset: " + describeOffsets(syntaxErrors),
			check: func(c *Client) error {
				for _, tt := range syntaxErrors {
					x := c.write(http.MethodPost, collection, tt.body)
					if err := x.statusIs(http.StatusBadRequest); err != nil {
						return err
					}
					if !mentionsNumber(x.errorMessage(), tt.offset) {
						return failf(x, fmt.Sprintf("an error message that names the offset %d", tt.offset), x.summary())
					}
				}
				return nil
			},
		},
		{
			ID: "create/over-1-mib-413", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A body of 1 MiB and one byte is 413, whatever it holds and whether its length is declared or chunked, and creates nothing.",
			check: func(c *Client) error {
				for _, framing := range []framing{declared, chunked} {
					email := c.email()
					x := c.send(request{method: http.MethodPost, target: collection, as: writer, framing: framing,
						header: []string{"Content-Type", mediaTypeJSON}, body: padded(userJSON("Kit Ann", email), maxBodyBytes+1)})
					if err := firstError(x.statusIs(http.StatusRequestEntityTooLarge), c.notCreated(x, email)); err != nil {
						return err
					}
				}
				x := c.send(request{method: http.MethodPost, target: collection, as: writer, framing: chunked,
					header: []string{"Content-Type", mediaTypeJSON}, body: strings.Repeat("x", maxBodyBytes+1)})
				return x.statusIs(http.StatusRequestEntityTooLarge)
			},
		},
		{
			ID: "create/1-mib-taken", Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers,
			Requirement: "A body of exactly 1 MiB is read whole and judged: valid JSON padded with white space to 1 MiB creates the user.",
			check: func(c *Client) error {
				return c.write(http.MethodPost, collection, padded(userJSON("Kit Ann", c.email()), maxBodyBytes)).succeeded()
			},
		},
	}
}

// bodyRefused makes a rule that each of a set of bodies POSTed is 400 with the error body, and that
// none of them creates a user.
func bodyRefused(id, requirement string, bodies func(c *Client) []string) Rule {
	return Rule{ID: id, Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers, Requirement: requirement,
		check: func(c *Client) error {
			for _, body := range bodies(c) {
				x := c.write(http.MethodPost, collection, body)
				if err := firstError(x.statusIs(http.StatusBadRequest), c.noneLike(x, func(u user) bool { return strings.Contains(strings.ToLower(u.Email), c.group) })); err != nil {
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
	return Rule{ID: id, Tier: Reference, Source: docBodies, Doc: docBodies, Needs: OwnUsers, Requirement: requirement,
		check: func(c *Client) error {
			for _, fc := range cases(c) {
				if err := c.write(http.MethodPost, collection, fc.body).refused(fc.fields...); err != nil {
					return err
				}
			}
			return nil
		}}
}

// validBody is a valid create body with a new address.
func (c *Client) validBody() string { return userJSON("Kit Ann", c.email()) }

// postAs POSTs a valid body with this Content-Type.
func (c *Client) postAs(contentType string) *reply {
	return c.send(request{method: http.MethodPost, target: collection, as: writer, body: c.validBody(),
		header: []string{"Content-Type", contentType}})
}

// padded is a JSON body followed by spaces, size bytes in all.
func padded(body string, size int) string { return body + strings.Repeat(" ", size-len(body)) }

// stored checks that the user reads back as want after the request x made it.
func (c *Client) stored(x *reply, want user) error {
	got, found, err := c.find(want.ID)
	switch {
	case err != nil:
		return err
	case !found:
		return failf(x, "the user stored as "+want.String(), "no user "+strconv.FormatInt(want.ID, 10)+" afterwards")
	case got != want:
		return failf(x, "the user stored as "+want.String(), "it reads "+got.String())
	}
	return nil
}

// listed checks that the whole list shows the user as want after the request x changed it.
func (c *Client) listed(x *reply, want user) error {
	got, found, err := c.findInList(func(u user) bool { return u.ID == want.ID })
	switch {
	case err != nil:
		return err
	case !found || got != want:
		return failf(x, "the list showing the user as "+want.String(), "it shows "+got.String())
	}
	return nil
}

// namesURI checks that a header (Location, Content-Location) names the URI of path, relative or
// absolute.
func (x *reply) namesURI(header, path string) error {
	value := x.responseHeader.Get(header)
	base, _ := url.Parse(x.url)
	target, err := base.Parse(value)
	if value == "" || err != nil || target.Host != base.Host || target.Path != path || target.RawQuery != "" {
		return failf(x, header+": "+path, describeHeader(x.responseHeader, header))
	}
	return nil
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

// syntaxErrors are bodies that are not valid JSON, each with the offset a message names: the
// first byte that cannot continue valid JSON (counted from 0), or the length of a body that ends
// too soon. No body holds a number that could be mistaken for its offset.
var syntaxErrors = []struct {
	body   string
	offset int
}{
	{`{"name":"Kit\q"}`, 13},        // a bad escape: the q
	{`{"name": 1.}`, 11},            // a decimal point without digits: the }
	{`{"name":"Kit",}`, 14},         // a trailing comma: the }
	{`{"name" "Kit"}`, 8},           // no colon: the second "
	{`   x`, 3},                     // a byte no value begins with, after white space
	{`{"name":tru}`, 11},            // a literal cut short: the }
	{`{"name":`, 8},                 // ends too soon: the body's length
	{`{"name":"Kit","email":"`, 23}, // ends in a string: the body's length
}

// describeOffsets lists the bodies and their offsets, for a requirement.
func describeOffsets(cases []struct {
	body   string
	offset int
}) string {
	var pairs []string
	for _, tt := range cases {
		if tt.offset >= 0 {
			pairs = append(pairs, fmt.Sprintf("%s → %d", tt.body, tt.offset))
		}
	}
	return strings.Join(pairs, ", ") + "."
}

// mentionsNumber reports whether a message holds n as a number of its own, not within a longer one.
func mentionsNumber(message string, n int) bool {
	for _, m := range regexp.MustCompile(`[0-9]+`).FindAllString(message, -1) {
		if m == strconv.Itoa(n) {
			return true
		}
	}
	return false
}
