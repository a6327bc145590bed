package kit

import (
	"net/http"
	"regexp"
	"strings"
)

// authRules: bearer tokens (RFC 6750), their challenges, and the roles read and write.
func authRules() []Rule {
	return []Rule{
		{
			ID: "auth/no-token-401", Tier: Must, Source: docAuth, Doc: docAuth, Needs: OwnUsers,
			Requirement: "A request without Authorization, on any route, is answered 401, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				email := c.email()
				if err := every(func(x *reply) error { return x.statusIs(http.StatusUnauthorized) },
					c.anonymously(http.MethodGet, collection), c.anonymously(http.MethodGet, u.path())); err != nil {
					return err
				}
				x := c.send(request{method: http.MethodPost, target: collection, body: userJSON("Kit Bob", email), header: []string{"Content-Type", mediaTypeJSON}})
				if err := firstError(x.statusIs(http.StatusUnauthorized), c.notCreated(x, email)); err != nil {
					return err
				}
				return every(func(x *reply) error { return firstError(x.statusIs(http.StatusUnauthorized), c.unchanged(x, u)) },
					c.send(request{method: http.MethodPut, target: u.path(), body: userJSON("Kit Ann Lee", u.Email), header: []string{"Content-Type", mediaTypeJSON}}),
					c.anonymously(http.MethodDelete, u.path()))
			},
		},
		{
			ID: "auth/unknown-token-401", Tier: Must, Source: docAuth, Doc: docAuth,
			Requirement: "A request with a bearer token the server does not know, a real token's prefix or extension included, is answered 401.",
			check: func(c *Client) error {
				unknown := []string{c.unknownToken(), "${USERS_WRITE_TOKEN}x"}
				if len(c.run.cfg.WriteToken) > 1 {
					unknown = append(unknown, "${USERS_WRITE_TOKEN%?}") // the token without its last character
				}
				for _, t := range unknown {
					if err := c.anonymously(http.MethodGet, collection, "Authorization", "Bearer "+t).statusIs(http.StatusUnauthorized); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "auth/other-scheme-401", Tier: Must, Source: docAuth, Doc: docAuth,
			Requirement: "Authorization with another scheme, such as Basic, is answered 401.",
			check: func(c *Client) error {
				return c.anonymously(http.MethodGet, collection, "Authorization", "Basic a2l0OmtpdA==").statusIs(http.StatusUnauthorized)
			},
		},
		{
			ID: "auth/401-www-authenticate", Tier: Must, Source: "RFC 9110 §15.5.2; RFC 6750 §3", Doc: docAuth,
			Requirement: "Every 401 carries WWW-Authenticate with a Bearer challenge.",
			check: func(c *Client) error {
				answers := statusIn([]*reply{c.anonymously(http.MethodGet, collection),
					c.anonymously(http.MethodGet, collection, "Authorization", "Bearer "+c.unknownToken())}, http.StatusUnauthorized)
				if len(answers) == 0 {
					return skipf("no 401 to look at: see auth/no-token-401")
				}
				return every(func(x *reply) error {
					if !bearerChallenge.MatchString(strings.Join(x.responseHeader.Values("WWW-Authenticate"), ", ")) {
						return failf(x, "WWW-Authenticate: Bearer ...", describeHeader(x.responseHeader, "WWW-Authenticate"))
					}
					return nil
				}, answers...)
			},
		},
		{
			ID: "auth/no-token-challenge-without-error", Tier: Should, Source: "RFC 6750 §3.1", Doc: docAuth,
			Requirement: "The challenge of a 401 to a request that sent no token carries no error attribute.",
			check: func(c *Client) error {
				x := c.anonymously(http.MethodGet, collection)
				if x.status != http.StatusUnauthorized {
					return skipf("no 401 to look at: see auth/no-token-401")
				}
				if challenge := x.responseHeader.Get("WWW-Authenticate"); errorAttribute.MatchString(challenge) {
					return failf(x, "a challenge without error=, as the client sent no token", describeHeader(x.responseHeader, "WWW-Authenticate"))
				}
				return nil
			},
		},
		{
			ID: "auth/invalid-token-error", Tier: Should, Source: "RFC 6750 §3", Doc: docAuth,
			Requirement: `The challenge of a 401 to an unknown token says error="invalid_token".`,
			check: func(c *Client) error {
				x := c.anonymously(http.MethodGet, collection, "Authorization", "Bearer "+c.unknownToken())
				if x.status != http.StatusUnauthorized {
					return skipf("no 401 to look at: see auth/unknown-token-401")
				}
				if !invalidToken.MatchString(x.responseHeader.Get("WWW-Authenticate")) {
					return failf(x, `WWW-Authenticate: Bearer ... error="invalid_token"`, describeHeader(x.responseHeader, "WWW-Authenticate"))
				}
				return nil
			},
		},
		{
			ID: "auth/empty-authorization-is-no-token", Tier: Should, Source: "RFC 6750 §3.1", Doc: docAuth,
			Requirement: "An empty Authorization header counts as none: 401, with a challenge without an error attribute.",
			check: func(c *Client) error {
				x := c.anonymously(http.MethodGet, collection, "Authorization", "")
				if err := x.statusIs(http.StatusUnauthorized); err != nil {
					return err
				}
				if challenge := x.responseHeader.Get("WWW-Authenticate"); errorAttribute.MatchString(challenge) {
					return failf(x, "a challenge without error=, as the client sent no credentials", describeHeader(x.responseHeader, "WWW-Authenticate"))
				}
				return nil
			},
		},
		{
			ID: "auth/challenges-exact", Tier: Reference, Source: docAuth, Doc: docAuth,
			Requirement: `The 401 challenges are exactly Bearer realm="users" without a token and Bearer realm="users", error="invalid_token" for a bad one.`,
			check: func(c *Client) error {
				return firstError(
					c.anonymously(http.MethodGet, collection).headerIs("WWW-Authenticate", `Bearer realm="users"`),
					c.anonymously(http.MethodGet, collection, "Authorization", "Basic a2l0OmtpdA==").headerIs("WWW-Authenticate", `Bearer realm="users"`),
					c.anonymously(http.MethodGet, collection, "Authorization", "Bearer "+c.unknownToken()).
						headerIs("WWW-Authenticate", `Bearer realm="users", error="invalid_token"`))
			},
		},
		{
			ID: "auth/scheme-any-case", Tier: Should, Source: "RFC 9110 §11.1", Doc: docAuth,
			Requirement: "The scheme name is case-insensitive: bearer and BEARER work as Bearer does.",
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.statusIs(http.StatusOK) },
					c.anonymously(http.MethodGet, collection, "Authorization", "bearer "+writeTokenVar),
					c.anonymously(http.MethodGet, collection, "Authorization", "BEARER "+writeTokenVar))
			},
		},
		{
			ID: "auth/several-spaces", Tier: Should, Source: "RFC 6750 §2.1", Doc: docAuth,
			Requirement: "One or more spaces may separate the scheme from the token.",
			check: func(c *Client) error {
				return c.anonymously(http.MethodGet, collection, "Authorization", "Bearer    "+writeTokenVar).statusIs(http.StatusOK)
			},
		},
		{
			ID: "auth/malformed-401", Tier: Reference, Source: docAuth, Doc: docAuth,
			Requirement: "Bearer without a token, a token with something after it, a tab instead of the space, and two Authorization headers are answered 401.",
			check: func(c *Client) error {
				token := writeTokenVar
				return every(func(x *reply) error { return x.statusIs(http.StatusUnauthorized) },
					c.anonymously(http.MethodGet, collection, "Authorization", "Bearer"),
					c.anonymously(http.MethodGet, collection, "Authorization", "Bearer "+token+" kit"),
					c.anonymously(http.MethodGet, collection, "Authorization", "Bearer\t"+token),
					c.anonymously(http.MethodGet, collection, "Authorization", "Bearer "+token, "Authorization", "Bearer "+token))
			},
		},
		{
			ID: "auth/token-not-echoed", Tier: Reference, Source: docAuth, Doc: docAuth,
			Requirement: "No answer repeats a token the client sent, whether in Authorization or in the query.",
			check: func(c *Client) error {
				secret := c.unknownToken()
				return every(func(x *reply) error {
					if strings.Contains(string(x.responseBody), secret) || strings.Contains(describeHeaders(x.responseHeader), secret) {
						return failf(x, "an answer that does not show the token "+secret, x.summary())
					}
					return nil
				}, c.anonymously(http.MethodGet, collection, "Authorization", "Bearer "+secret), c.get(collection+"?access_token="+secret))
			},
		},
		{
			ID: "auth/query-value-not-echoed", Tier: Reference, Source: "RFC 6750 §2.3; " + docAuth, Doc: docAuth, Needs: OwnUsers,
			Requirement: "An error never repeats a value sent in the query, nor the raw query, in its message or its headers, as a client may put a token there: " +
				"?access_token=SECRET; (malformed), ?page=SECRET, ?sort=SECRET, ?q=a&q=SECRET and ?per_page=SECRET%zz on the list, with or without a token, " +
				"leave SECRET out of the answer, as does a user read with ?access_token=SECRET;.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				secret := c.unknownToken()
				return every(func(x *reply) error {
					if strings.Contains(string(x.responseBody), secret) || strings.Contains(describeHeaders(x.responseHeader), secret) {
						return failf(x, "an answer that does not show "+secret, x.summary()+"\n"+describeHeaders(x.responseHeader))
					}
					return nil
				},
					c.get(collection+"?access_token="+secret+";"),
					c.anonymously(http.MethodGet, collection+"?access_token="+secret+";"),
					c.get(collection+"?page="+secret),
					c.get(collection+"?sort="+secret),
					c.get(collection+"?q=a&q="+secret),
					c.get(collection+"?per_page="+secret+"%zz"),
					c.get(u.path()+"?access_token="+secret+";"))
			},
		},
		{
			ID: "auth/write-token-reads", Tier: Reference, Source: docAuth, Doc: docAuth, Needs: OwnUsers,
			Requirement: "A write token may also read: GET of the list and of a user answers 200.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return every(func(x *reply) error { return x.statusIs(http.StatusOK) },
					c.send(request{method: http.MethodGet, target: collection, as: writer}),
					c.send(request{method: http.MethodGet, target: u.path(), as: writer}))
			},
		},
		{
			ID: "auth/read-token-reads", Tier: Must, Source: docAuth, Doc: docAuth, Needs: ReadToken,
			Requirement: "A read token may list the users: 200.",
			check:       func(c *Client) error { return c.get(collection).statusIs(http.StatusOK) },
		},
		{
			ID: "auth/read-token-write-403", Tier: Must, Source: docAuth, Doc: docAuth, Needs: ReadToken | OwnUsers,
			Requirement: "A read token on POST, PUT or DELETE is answered 403, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				email := c.email()
				x := c.asReader(http.MethodPost, collection, userJSON("Kit Bob", email))
				if err := firstError(x.statusIs(http.StatusForbidden), c.notCreated(x, email)); err != nil {
					return err
				}
				x = c.asReader(http.MethodPut, u.path(), userJSON("Kit Ann Lee", c.email()))
				if err := firstError(x.statusIs(http.StatusForbidden), c.unchanged(x, u)); err != nil {
					return err
				}
				x = c.asReader(http.MethodDelete, u.path(), "")
				return firstError(x.statusIs(http.StatusForbidden), c.unchanged(x, u))
			},
		},
		{
			ID: "auth/read-token-patch-403", Tier: Reference, Source: docAuth, Doc: docAuth, Needs: ReadToken | OwnUsers,
			Requirement: "A read token on PATCH is answered 403, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.asReader(http.MethodPatch, u.path(), `{"name":"Kit Ann Lee"}`)
				return firstError(x.statusIs(http.StatusForbidden), c.unchanged(x, u))
			},
		},
		{
			ID: "auth/read-token-reads-a-user", Tier: Should, Source: docAuth, Doc: docAuth, Needs: ReadToken | OwnUsers,
			Requirement: "A read token may read a user: GET /api/users/{id} is 200.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return c.get(u.path()).statusIs(http.StatusOK)
			},
		},
		{
			ID: "auth/patch-without-token-401", Tier: Reference, Source: docAuth, Doc: docAuth, Needs: OwnUsers,
			Requirement: "A PATCH without Authorization is answered 401, and changes nothing.",
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.send(request{method: http.MethodPatch, target: u.path(), body: `{"name":"Kit Ann Lee"}`, header: []string{"Content-Type", mediaTypeJSON}})
				return firstError(x.statusIs(http.StatusUnauthorized), c.unchanged(x, u))
			},
		},
		{
			ID: "auth/token-only-in-the-header", Tier: Reference, Source: docAuth, Doc: docAuth,
			Requirement: "A token is taken only from the Authorization header: one sent in the query, as access_token (RFC 6750 §2.3), is not, and the request is 401.",
			check: func(c *Client) error {
				return c.anonymously(http.MethodGet, collection+"?access_token="+writeTokenVar).statusIs(http.StatusUnauthorized)
			},
		},
		{
			ID: "auth/403-insufficient-scope", Tier: Should, Source: "RFC 6750 §3.1", Doc: docAuth, Needs: ReadToken | OwnUsers,
			Requirement: `A 403 to a read token carries a Bearer challenge that says error="insufficient_scope".`,
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				x := c.asReader(http.MethodDelete, u.path(), "")
				if x.status != http.StatusForbidden {
					return skipf("no 403 to look at: see auth/read-token-write-403")
				}
				if challenge := x.responseHeader.Get("WWW-Authenticate"); !bearerChallenge.MatchString(challenge) || !insufficientScope.MatchString(challenge) {
					return failf(x, `WWW-Authenticate: Bearer ... error="insufficient_scope"`, describeHeader(x.responseHeader, "WWW-Authenticate"))
				}
				return nil
			},
		},
		{
			ID: "auth/403-challenge-exact", Tier: Reference, Source: docAuth, Doc: docAuth, Needs: ReadToken | OwnUsers,
			Requirement: `The 403 challenge is exactly Bearer realm="users", error="insufficient_scope".`,
			check: func(c *Client) error {
				u, err := c.newUser("Kit Ann")
				if err != nil {
					return err
				}
				return c.asReader(http.MethodDelete, u.path(), "").headerIs("WWW-Authenticate", `Bearer realm="users", error="insufficient_scope"`)
			},
		},
		{
			ID: "auth/vary-authorization", Tier: Reference, Source: docResponses, Doc: docResponses, Needs: OwnUsers,
			Requirement: "Every /api/ answer carries Vary: Authorization, as what it says depends on the token.",
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.listHolds("Vary", "Authorization") },
					c.get(collection), c.anonymously(http.MethodGet, collection), c.get("/api/getUsers"),
					c.write(http.MethodPost, collection, userJSON("Kit Ann", c.email())), c.options(collection))
			},
		},
		{
			ID: "auth/options-without-token", Tier: Reference, Source: docOrder, Doc: docOrder,
			Requirement: "OPTIONS needs no token and ignores Authorization: with none, an unknown token or another scheme it is 204, with no challenge.",
			check: func(c *Client) error {
				for _, authorization := range [][]string{nil, {"Authorization", "Bearer " + c.unknownToken()}, {"Authorization", "Basic a2l0OmtpdA=="}} {
					x := c.options(collection, authorization...)
					if err := firstError(x.statusIs(http.StatusNoContent), x.headerAbsent("WWW-Authenticate")); err != nil {
						return err
					}
				}
				return nil
			},
		},
	}
}

var (
	bearerChallenge   = regexp.MustCompile(`(?i)(^|,)\s*bearer(\s|,|$)`)
	errorAttribute    = regexp.MustCompile(`(?i)\berror\s*=`)
	invalidToken      = regexp.MustCompile(`(?i)\berror\s*=\s*"?invalid_token"?`)
	insufficientScope = regexp.MustCompile(`(?i)\berror\s*=\s*"?insufficient_scope"?`)
)

// unknownToken is a token no server knows: a b64token that carries the rule's tag.
func (c *Client) unknownToken() string { return c.group + "-unknown-token" }

// asReader sends a request with the read token and, when it has a body, Content-Type: application/json.
func (c *Client) asReader(method, target, body string) *reply {
	req := request{method: method, target: target, as: reader, body: body}
	if body != "" {
		req.header = []string{"Content-Type", mediaTypeJSON}
	}
	return c.send(req)
}

// describeHeaders writes every header line of an answer, for a search through them.
func describeHeaders(h http.Header) string {
	var lines []string
	for name := range h {
		lines = append(lines, describeHeader(h, name))
	}
	return strings.Join(lines, "\n")
}
