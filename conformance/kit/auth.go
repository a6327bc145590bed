package kit

import (
	"net/http"
	"regexp"
	"strings"
)

// authRules: bearer tokens (RFC 6750), their challenges, and the roles read and write. They run
// against an API whose description declares auth.
func authRules() []Rule {
	return []Rule{
		{
			ID: "auth/no-token-401", Tier: Must, Keys: keyAuth, Source: docAuth, Doc: docAuth, Needs: OwnItems,
			Requirement: "A request without Authorization, on any route, is answered 401, and changes nothing.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				if err := every(func(x *reply) error { return x.statusIs(http.StatusUnauthorized) },
					c.anonymously(http.MethodGet, c.collection()), c.anonymously(http.MethodGet, c.itemPath(it.ID))); err != nil {
					return err
				}
				body := c.fill(c.run.desc.Create)
				x := c.send(request{method: http.MethodPost, target: c.collection(), body: body.String(), header: []string{"Content-Type", mediaTypeJSON}})
				if err := firstError(x.statusIs(http.StatusUnauthorized), c.notCreated(x, body)); err != nil {
					return err
				}
				return every(func(x *reply) error { return firstError(x.statusIs(http.StatusUnauthorized), c.unchanged(x, it)) },
					c.send(request{method: http.MethodPut, target: c.itemPath(it.ID), body: c.fill(c.run.desc.Replace).String(), header: []string{"Content-Type", mediaTypeJSON}}),
					c.anonymously(http.MethodDelete, c.itemPath(it.ID)))
			},
		},
		{
			ID: "auth/unknown-token-401", Tier: Must, Keys: keyAuth, Source: docAuth, Doc: docAuth,
			Requirement: "A request with a bearer token the server does not know, a real token's prefix or extension included, is answered 401.",
			check: func(c *Client) error {
				unknown := []string{c.unknownToken(), "${USERS_WRITE_TOKEN}x"}
				if len(c.run.cfg.WriteToken) > 1 {
					unknown = append(unknown, "${USERS_WRITE_TOKEN%?}") // the token without its last character
				}
				for _, t := range unknown {
					if err := c.anonymously(http.MethodGet, c.collection(), "Authorization", "Bearer "+t).statusIs(http.StatusUnauthorized); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "auth/other-scheme-401", Tier: Must, Keys: keyAuth, Source: docAuth, Doc: docAuth,
			Requirement: "Authorization with another scheme, such as Basic, is answered 401.",
			check: func(c *Client) error {
				return c.anonymously(http.MethodGet, c.collection(), "Authorization", "Basic a2l0OmtpdA==").statusIs(http.StatusUnauthorized)
			},
		},
		{
			ID: "auth/401-www-authenticate", Tier: Must, Keys: keyAuth, Source: "RFC 9110 §15.5.2; RFC 6750 §3", Doc: docAuth,
			Requirement: "Every 401 carries WWW-Authenticate with a Bearer challenge.",
			check: func(c *Client) error {
				answers := statusIn([]*reply{c.anonymously(http.MethodGet, c.collection()),
					c.anonymously(http.MethodGet, c.collection(), "Authorization", "Bearer "+c.unknownToken())}, http.StatusUnauthorized)
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
			ID: "auth/no-token-challenge-without-error", Tier: Should, Keys: keyAuth, Source: "RFC 6750 §3.1", Doc: docAuth,
			Requirement: "The challenge of a 401 to a request that sent no token carries no error attribute.",
			check: func(c *Client) error {
				x := c.anonymously(http.MethodGet, c.collection())
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
			ID: "auth/invalid-token-error", Tier: Should, Keys: keyAuth, Source: "RFC 6750 §3", Doc: docAuth,
			Requirement: `The challenge of a 401 to an unknown token says error="invalid_token".`,
			check: func(c *Client) error {
				x := c.anonymously(http.MethodGet, c.collection(), "Authorization", "Bearer "+c.unknownToken())
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
			ID: "auth/empty-authorization-is-no-token", Tier: Should, Keys: keyAuth, Source: "RFC 6750 §3.1", Doc: docAuth,
			Requirement: "An empty Authorization header counts as none: 401, with a challenge without an error attribute.",
			check: func(c *Client) error {
				x := c.anonymously(http.MethodGet, c.collection(), "Authorization", "")
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
			ID: "auth/challenge-realm", Tier: Should, Keys: keyAuth | keyRealm, Source: "RFC 6750 §3; RFC 9110 §11.5", Doc: docAuth,
			Requirement: "Every Bearer challenge of a 401 names the realm the description declares.",
			check: func(c *Client) error {
				answers := statusIn([]*reply{c.anonymously(http.MethodGet, c.collection()),
					c.anonymously(http.MethodGet, c.collection(), "Authorization", "Bearer "+c.unknownToken())}, http.StatusUnauthorized)
				if len(answers) == 0 {
					return skipf("no 401 to look at: see auth/no-token-401")
				}
				realm := regexp.MustCompile(`(?i)\brealm\s*=\s*"` + regexp.QuoteMeta(c.run.desc.Auth.Realm) + `"`)
				return every(func(x *reply) error {
					if !realm.MatchString(x.responseHeader.Get("WWW-Authenticate")) {
						return failf(x, `WWW-Authenticate: Bearer realm="`+c.run.desc.Auth.Realm+`"`, describeHeader(x.responseHeader, "WWW-Authenticate"))
					}
					return nil
				}, answers...)
			},
		},
		{
			ID: "auth/scheme-any-case", Tier: Should, Keys: keyAuth, Source: "RFC 9110 §11.1", Doc: docAuth,
			Requirement: "The scheme name is case-insensitive: bearer and BEARER work as Bearer does.",
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.statusIs(http.StatusOK) },
					c.anonymously(http.MethodGet, c.collection(), "Authorization", "bearer "+writeTokenVar),
					c.anonymously(http.MethodGet, c.collection(), "Authorization", "BEARER "+writeTokenVar))
			},
		},
		{
			ID: "auth/several-spaces", Tier: Should, Keys: keyAuth, Source: "RFC 6750 §2.1", Doc: docAuth,
			Requirement: "One or more spaces may separate the scheme from the token.",
			check: func(c *Client) error {
				return c.anonymously(http.MethodGet, c.collection(), "Authorization", "Bearer    "+writeTokenVar).statusIs(http.StatusOK)
			},
		},
		{
			ID: "auth/token-not-echoed", Tier: Reference, Keys: keyAuth, Source: docAuth, Doc: docAuth,
			Requirement: "No answer repeats a token the client sent, whether in Authorization or in the query.",
			check: func(c *Client) error {
				secret := c.unknownToken()
				return every(func(x *reply) error {
					if strings.Contains(string(x.responseBody), secret) || strings.Contains(describeHeaders(x.responseHeader), secret) {
						return failf(x, "an answer that does not show the token "+secret, x.summary())
					}
					return nil
				}, c.anonymously(http.MethodGet, c.collection(), "Authorization", "Bearer "+secret), c.get(c.collection()+"?access_token="+secret))
			},
		},
		{
			ID: "auth/write-token-reads", Tier: Reference, Keys: keyAuth, Source: docAuth, Doc: docAuth, Needs: OwnItems,
			Requirement: "A write token may also read: GET of the list and of an item answers 200.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				return every(func(x *reply) error { return x.statusIs(http.StatusOK) },
					c.send(request{method: http.MethodGet, target: c.collection(), as: writer}),
					c.send(request{method: http.MethodGet, target: c.itemPath(it.ID), as: writer}))
			},
		},
		{
			ID: "auth/read-token-reads", Tier: Must, Keys: keyAuth, Source: docAuth, Doc: docAuth, Needs: ReadToken,
			Requirement: "A read token may list the collection: 200.",
			check:       func(c *Client) error { return c.get(c.collection()).statusIs(http.StatusOK) },
		},
		{
			ID: "auth/read-token-write-403", Tier: Must, Keys: keyAuth, Source: docAuth, Doc: docAuth, Needs: ReadToken | OwnItems,
			Requirement: "A read token on POST, PUT or DELETE is answered 403, and changes nothing.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				body := c.fill(c.run.desc.Create)
				x := c.asReader(http.MethodPost, c.collection(), body.String())
				if err := firstError(x.statusIs(http.StatusForbidden), c.notCreated(x, body)); err != nil {
					return err
				}
				x = c.asReader(http.MethodPut, c.itemPath(it.ID), c.fill(c.run.desc.Replace).String())
				if err := firstError(x.statusIs(http.StatusForbidden), c.unchanged(x, it)); err != nil {
					return err
				}
				x = c.asReader(http.MethodDelete, c.itemPath(it.ID), "")
				return firstError(x.statusIs(http.StatusForbidden), c.unchanged(x, it))
			},
		},
		{
			ID: "auth/read-token-patch-403", Tier: Reference, Keys: keyAuth | keyPatch, Source: docAuth, Doc: docAuth, Needs: ReadToken | OwnItems,
			Requirement: "A read token on PATCH is answered 403, and changes nothing.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				x := c.asReader(http.MethodPatch, c.itemPath(it.ID), c.fill(c.run.desc.Patch).String())
				return firstError(x.statusIs(http.StatusForbidden), c.unchanged(x, it))
			},
		},
		{
			ID: "auth/read-token-reads-an-item", Tier: Should, Keys: keyAuth, Source: docAuth, Doc: docAuth, Needs: ReadToken | OwnItems,
			Requirement: "A read token may read an item: GET of it is 200.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				return c.get(c.itemPath(it.ID)).statusIs(http.StatusOK)
			},
		},
		{
			ID: "auth/patch-without-token-401", Tier: Reference, Keys: keyAuth | keyPatch, Source: docAuth, Doc: docAuth, Needs: OwnItems,
			Requirement: "A PATCH without Authorization is answered 401, and changes nothing.",
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				x := c.send(request{method: http.MethodPatch, target: c.itemPath(it.ID), body: c.fill(c.run.desc.Patch).String(), header: []string{"Content-Type", mediaTypeJSON}})
				return firstError(x.statusIs(http.StatusUnauthorized), c.unchanged(x, it))
			},
		},
		{
			ID: "auth/403-insufficient-scope", Tier: Should, Keys: keyAuth, Source: "RFC 6750 §3.1", Doc: docAuth, Needs: ReadToken | OwnItems,
			Requirement: `A 403 to a read token carries a Bearer challenge that says error="insufficient_scope".`,
			check: func(c *Client) error {
				it, err := c.newItem()
				if err != nil {
					return err
				}
				x := c.asReader(http.MethodDelete, c.itemPath(it.ID), "")
				if x.status != http.StatusForbidden {
					return skipf("no 403 to look at: see auth/read-token-write-403")
				}
				if challenge := x.responseHeader.Get("WWW-Authenticate"); !bearerChallenge.MatchString(challenge) || !insufficientScope.MatchString(challenge) {
					return failf(x, `WWW-Authenticate: Bearer ... error="insufficient_scope"`, describeHeader(x.responseHeader, "WWW-Authenticate"))
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
