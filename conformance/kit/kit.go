// Package kit is the conformance kit of the users API: the rules of docs/api.md as a catalogue, each
// checked by real HTTP requests against a server at a base URL, and the runner that checks them.
//
// Each rule is one requirement in one sentence, with a stable id by topic (create/201-location), the
// source it follows (an RFC section, or the docs/api.md section of a decision of ours), a tier, and
// what state it needs. The kit creates its own users, with a tag unique to the run, reads only
// those, and deletes them at the end: it never changes data it did not create.
//
// The command in the folder above runs it: go run ./conformance -url http://localhost:8080
package kit

import (
	"fmt"
	"strings"
)

// Version is the version of the rule set, which a port pins. It changes whenever a rule is added or
// removed, or what a rule requires changes.
//
// 1.1.0 adds 21 rules, each for a case docs/api.md now states where it was silent or stated a Go
// function; replace/id-of-the-path-taken takes the id only as a JSON integer (7.0 is 400); and
// precondition/unquoted-is-not-a-tag and precondition/nothing-matches-after-a-non-tag also cover
// * within a list, tags without a comma between them, and an empty value.
//
// 1.2.0 has the service's own redirect of a path not in clean form: 308 with the exact Location
// (reachable/unclean-path-redirected, reachable/options-unclean-path-redirected), JSON like every
// answer (reachable/unclean-path-redirect-is-json, which replaces unclean-path-redirect-is-html);
// adds reachable/unclean-path-under-api-needs-a-token, reachable/escaped-dots-and-slashes-are-not-cleaned,
// create/media-type-ascii-415, create/syntax-error-offset, list/link-exact, list/304-carries-link and
// list/first-query-problem-named; create/content-encoding-415 also sends identity and an empty
// value, and patch/empty-400 the path's id alone. list/pages-of-the-whole-list and
// precondition/if-none-match-304 read only the rule's own users, and
// precondition/if-match-on-post-current tries again when another client changed the list, so
// several runs may share a server. A must rule that could not run now fails the run. It adds
// errors/unknown-method-501 (a method no route takes is 501, RFC 9110 §9.1), and
// cors/preflight-allows-conditional-headers also allows X-Request-Id.
const Version = "1.2.0"

// A Tier says how binding a rule is. A port in another language can pass Must without copying any
// choice of this reference.
type Tier int

const (
	// Must is an RFC MUST, or what the interface fixes: its four routes with their statuses and
	// bodies, the {data, total} envelope, the {error} body, 401 and 403.
	Must Tier = iota
	// Should is an RFC SHOULD, or a convention most clients rely on: ETag, Location, Allow on 405,
	// WWW-Authenticate challenges.
	Should
	// Reference is a choice of this reference that another implementation may make differently:
	// the exact field rules, 400 rather than 422, fields, the paging parameters, the order of checks.
	Reference
)

var tierNames = []string{"must", "should", "reference"}

func (t Tier) String() string { return tierNames[t] }

// ParseTier reads a tier by its name: must, should or reference.
func ParseTier(name string) (Tier, error) {
	for i, n := range tierNames {
		if n == name {
			return Tier(i), nil
		}
	}
	return 0, fmt.Errorf("the tier must be must, should or reference, not %q", name)
}

// A Need is what a rule needs besides the server and the write token; a rule whose needs the run
// cannot meet is skipped, and the report says why.
type Need int

const (
	// OwnUsers: the rule creates users of its own (and the run deletes them at the end).
	OwnUsers Need = 1 << iota
	// ReadToken: the rule needs a token that may only read (USERS_READ_TOKEN).
	ReadToken
	// AllowedOrigin: the rule needs a server that allows the kit's origin (CORS).
	AllowedOrigin
)

// String lists the needs in words, for -list.
func (n Need) String() string {
	var words []string
	for _, need := range []struct {
		need Need
		word string
	}{{OwnUsers, "own users"}, {ReadToken, "a read token"}, {AllowedOrigin, "CORS for the kit's origin"}} {
		if n&need.need != 0 {
			words = append(words, need.word)
		}
	}
	if len(words) == 0 {
		return "nothing"
	}
	return strings.Join(words, ", ")
}

// A Rule is one requirement and the check that proves a server meets it.
type Rule struct {
	ID          string // topic/name, stable from one version to the next
	Tier        Tier
	Requirement string // one sentence
	Source      string // "RFC 9110 §15.5.6", or "docs/api.md#listing" for a decision of ours
	Doc         string // the docs/api.md section that states the rule to learners, and names its id
	Needs       Need
	check       func(c *Client) error // nil when the rule holds; a *failure or a *skip otherwise
}

// Topic is the group of the rule: the part of its id before the slash.
func (r Rule) Topic() string {
	topic, _, _ := strings.Cut(r.ID, "/")
	return topic
}

// Topics are the groups of rules, in the order a learner builds a server.
func Topics() []string {
	return []string{"reachable", "auth", "create", "read", "list", "replace", "patch", "delete", "errors", "precondition", "cors"}
}

// Rules returns the whole catalogue, topic by topic in the order of Topics: a new slice on every
// call, so a caller may filter or reorder it.
func Rules() []Rule {
	var rules []Rule
	for _, topic := range [][]Rule{
		reachableRules(), authRules(), createRules(), readRules(), listRules(), replaceRules(),
		patchRules(), deleteRules(), errorsRules(), preconditionRules(), corsRules(),
	} {
		rules = append(rules, topic...)
	}
	return rules
}

// The docs/api.md sections that rules cite, as their Doc.
const (
	docRoutes      = "docs/api.md#routes"
	docOrder       = "docs/api.md#the-order-of-the-checks"
	docAuth        = "docs/api.md#authentication"
	docBodies      = "docs/api.md#request-bodies"
	docResponses   = "docs/api.md#responses"
	docListing     = "docs/api.md#listing"
	docConditional = "docs/api.md#conditional-requests"
	docCORS        = "docs/api.md#browsers-cors"
	docNotProvided = "docs/api.md#not-provided-on-purpose"
)

const (
	collection     = "/api/users"
	mediaTypeJSON  = "application/json"
	mediaTypeMerge = "application/merge-patch+json" // JSON Merge Patch (RFC 7396), which PATCH also takes
	maxBodyBytes   = 1 << 20                        // the largest body the API takes: 1 MiB
)
