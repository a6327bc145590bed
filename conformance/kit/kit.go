// Package kit is the conformance kit: the rules of REST and HTTP that docs/api.md follows, as a
// catalogue, each checked by real HTTP requests against a server at a base URL, and the runner
// that checks them. What it checks is a collection that a Description names, with the bodies to
// send and what the API declares it does (its sort keys, filters, paging, unique field…): this
// service's users (users.json) or any other, in any language.
//
// Each rule is one requirement in one sentence, with a stable id by topic (create/201-location), the
// source it follows (an RFC section, or the docs/api.md section of a decision of ours), a tier, the
// keys of the description it needs, and what state it needs. A convention rule is driven by the
// description; a rule of this reference only is written for users and runs only against this
// reference. The kit creates its own items, with a tag unique to the run, reads only those, and
// deletes them at the end: it never changes data it did not create.
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
// 3.0.0 checks any collection a description names: the convention rules take the path, the bodies
// and the keys from it, and have ids that name no field of users (unique/taken-409, not
// create/email-taken-409); the choices of this reference stay written for users and run only
// against it. CHANGELOG.md maps each id of 2.0.0 to its id in 3.0.0.
const Version = "3.0.0"

// A Tier says how binding a rule is. A port in another language can pass Must without copying any
// choice of this reference.
type Tier int

const (
	// Must is an RFC MUST, or what the interface fixes: its four routes with their statuses and
	// bodies, the list, an error body, 401 and 403.
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

// A Scope says what a rule is written for.
type Scope int

const (
	// Convention is a rule of REST or HTTP, driven by the description: it runs against any API.
	Convention Scope = iota
	// ThisReference is a choice of this reference (the e-mail's rules, the field limits, the
	// X-Request-Id format…), written for users: it runs only with a description that says it is
	// this reference (Description.ThisReference), as users.json does.
	ThisReference
)

func (s Scope) String() string { return [...]string{"convention", "this reference only"}[s] }

// A Need is what a rule needs of the run besides the server and the description; a rule whose
// needs the run cannot meet is skipped, and the report says why.
type Need int

const (
	// OwnItems: the rule creates items of its own (and the run deletes them at the end).
	OwnItems Need = 1 << iota
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
	}{{OwnItems, "own items"}, {ReadToken, "a read token"}, {AllowedOrigin, "CORS for the kit's origin"}} {
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
	Scope       Scope
	Keys        Key    // the keys of the description the rule needs: without one it is skipped
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
	return []string{"reachable", "auth", "create", "read", "list", "replace", "patch", "delete", "unique", "errors", "precondition", "cors"}
}

// Rules returns the whole catalogue: the convention rules topic by topic in the order of Topics,
// then the rules of this reference only, in the same order. It is a new slice on every call, so a
// caller may filter or reorder it.
func Rules() []Rule {
	var rules []Rule
	for _, topic := range [][]Rule{
		reachableRules(), authRules(), createRules(), readRules(), listRules(), replaceRules(),
		patchRules(), deleteRules(), uniqueRules(), errorsRules(), preconditionRules(), corsRules(),
		usersReachableRules(), usersAuthRules(), usersCreateRules(), usersReadRules(), usersListRules(), usersReplaceRules(),
		usersPatchRules(), usersDeleteRules(), usersErrorsRules(), usersPreconditionRules(), usersCORSRules(),
	} {
		rules = append(rules, topic...)
	}
	return rules
}

// RulesFor returns the rules of the catalogue that apply to the API the description names: every
// convention rule, and the rules of this reference only when the description is this reference's.
func RulesFor(d *Description) []Rule {
	var rules []Rule
	for _, r := range Rules() {
		if r.Scope == Convention || d.ThisReference {
			rules = append(rules, r)
		}
	}
	return rules
}

// The sections of docs/api.md, whose headings are Routes, The order of the checks, Authentication,
// Request bodies, Responses, Listing, Conditional requests, Browsers (CORS), Notes for a port and
// Not provided, on purpose. A rule cites one as its Doc; no rule cites the notes for a port, which
// say what Go's libraries decide where a rule does not.
const (
	docRoutes      = "docs/api.md#routes"
	docOrder       = "docs/api.md#the-order-of-the-checks"
	docAuth        = "docs/api.md#authentication"
	docBodies      = "docs/api.md#request-bodies"
	docResponses   = "docs/api.md#responses"
	docListing     = "docs/api.md#listing"
	docConditional = "docs/api.md#conditional-requests"
	docCORS        = "docs/api.md#browsers-cors"
	docNotes       = "docs/api.md#notes-for-a-port"
	docNotProvided = "docs/api.md#not-provided-on-purpose"
)

// docSections are the sections of docs/api.md in their order there.
var docSections = []string{docRoutes, docOrder, docAuth, docBodies, docResponses, docListing, docConditional, docCORS, docNotes, docNotProvided}

const (
	mediaTypeJSON  = "application/json"
	mediaTypeMerge = "application/merge-patch+json" // JSON Merge Patch (RFC 7396), which PATCH also takes
)
