package kit

import (
	"net/http"
	"strings"
)

// usersAuthRules: the rules of this reference only, written for users, of the topic auth.
func usersAuthRules() []Rule {
	return []Rule{
		{
			ID: "auth/challenges-exact", Tier: Reference, Scope: ThisReference, Source: docAuth, Doc: docAuth,
			Requirement: `The 401 challenges are exactly Bearer realm="users" without a token and Bearer realm="users", error="invalid_token" for a bad one.`,
			check: func(c *Client) error {
				return firstError(
					c.anonymously(http.MethodGet, usersCollection).headerIs("WWW-Authenticate", `Bearer realm="users"`),
					c.anonymously(http.MethodGet, usersCollection, "Authorization", "Basic a2l0OmtpdA==").headerIs("WWW-Authenticate", `Bearer realm="users"`),
					c.anonymously(http.MethodGet, usersCollection, "Authorization", "Bearer "+c.unknownToken()).
						headerIs("WWW-Authenticate", `Bearer realm="users", error="invalid_token"`))
			},
		},
		{
			ID: "auth/malformed-401", Tier: Reference, Scope: ThisReference, Source: docAuth, Doc: docAuth,
			Requirement: "Bearer without a token, a token with something after it, a tab instead of the space, and two Authorization headers are answered 401.",
			check: func(c *Client) error {
				token := writeTokenVar
				return every(func(x *reply) error { return x.statusIs(http.StatusUnauthorized) },
					c.anonymously(http.MethodGet, usersCollection, "Authorization", "Bearer"),
					c.anonymously(http.MethodGet, usersCollection, "Authorization", "Bearer "+token+" kit"),
					c.anonymously(http.MethodGet, usersCollection, "Authorization", "Bearer\t"+token),
					c.anonymously(http.MethodGet, usersCollection, "Authorization", "Bearer "+token, "Authorization", "Bearer "+token))
			},
		},
		{
			ID: "auth/query-value-not-echoed", Tier: Reference, Scope: ThisReference, Source: "RFC 6750 §2.3; " + docAuth, Doc: docAuth, Needs: OwnItems,
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
					c.get(usersCollection+"?access_token="+secret+";"),
					c.anonymously(http.MethodGet, usersCollection+"?access_token="+secret+";"),
					c.get(usersCollection+"?page="+secret),
					c.get(usersCollection+"?sort="+secret),
					c.get(usersCollection+"?q=a&q="+secret),
					c.get(usersCollection+"?per_page="+secret+"%zz"),
					c.get(u.path()+"?access_token="+secret+";"))
			},
		},
		{
			ID: "auth/token-only-in-the-header", Tier: Reference, Scope: ThisReference, Source: docAuth, Doc: docAuth,
			Requirement: "A token is taken only from the Authorization header: one sent in the query, as access_token (RFC 6750 §2.3), is not, and the request is 401.",
			check: func(c *Client) error {
				return c.anonymously(http.MethodGet, usersCollection+"?access_token="+writeTokenVar).statusIs(http.StatusUnauthorized)
			},
		},
		{
			ID: "auth/403-challenge-exact", Tier: Reference, Scope: ThisReference, Source: docAuth, Doc: docAuth, Needs: ReadToken | OwnItems,
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
			ID: "auth/vary-authorization", Tier: Reference, Scope: ThisReference, Source: docResponses, Doc: docResponses, Needs: OwnItems,
			Requirement: "Every /api/ answer carries Vary: Authorization, as what it says depends on the token.",
			check: func(c *Client) error {
				return every(func(x *reply) error { return x.listHolds("Vary", "Authorization") },
					c.get(usersCollection), c.anonymously(http.MethodGet, usersCollection), c.get("/api/getUsers"),
					c.write(http.MethodPost, usersCollection, userJSON("Kit Ann", c.email())), c.options(usersCollection))
			},
		},
		{
			ID: "auth/options-without-token", Tier: Reference, Scope: ThisReference, Source: docOrder, Doc: docOrder,
			Requirement: "OPTIONS needs no token and ignores Authorization: with none, an unknown token or another scheme it is 204, with no challenge.",
			check: func(c *Client) error {
				for _, authorization := range [][]string{nil, {"Authorization", "Bearer " + c.unknownToken()}, {"Authorization", "Basic a2l0OmtpdA=="}} {
					x := c.options(usersCollection, authorization...)
					if err := firstError(x.statusIs(http.StatusNoContent), x.headerAbsent("WWW-Authenticate")); err != nil {
						return err
					}
				}
				return nil
			},
		},
	}
}
