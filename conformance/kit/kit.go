// Package kit is the conformance kit of the users API: the rules of docs/api.md as a catalogue, each
// checked by real HTTP requests against a server at a base URL, and the runner that checks them. It
// checks this API's users, /api/users and /api/users/{id}, and no other resource: a copy of the
// service that serves books instead needs rules of its own.
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
// 2.0.0 follows the service's rules as they now read, where the measure of every rule is what it
// teaches. Gone are the rules of behaviour the service no longer has (its own 308 to a clean path,
// 501 for an unknown method, 400 for a query where none is read, an ETag on PUT, a preflight's 404,
// Content-Length on every answer) and those that pinned what a Go library decides (encoding/json's
// reading of names, duplicates, offsets, byte-order marks and surrogates; Unicode's white space,
// control characters and case mapping; mime.ParseMediaType's and url.ParseQuery's edge cases; the
// escaping and order inside Link): the notes for a port in docs/api.md say what a port should know.
// Permission now comes before routing, an unknown method is 405 with Allow, any other route ignores
// a query, a PUT answer carries no ETag, a 415 for a Content-Encoding says Accept-Encoding: identity,
// a preflight is 204 on every path under /api/, and no error repeats a query's value.
const Version = "2.0.0"

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
	collection     = "/api/users"
	mediaTypeJSON  = "application/json"
	mediaTypeMerge = "application/merge-patch+json" // JSON Merge Patch (RFC 7396), which PATCH also takes
	maxBodyBytes   = 1 << 20                        // the largest body the API takes: 1 MiB
)
