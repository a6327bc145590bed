package main

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// Conditional requests (RFC 9110 §13). Every representation has a strong ETag made of its bytes
// alone, so it survives a restart and a hand edit of the data file, and equal representations have
// equal tags.

// entityTag returns the strong ETag of a representation: the first 128 bits of its SHA-256, in
// hex. Two representations share a tag only by a collision, which takes about 2^64 tries to find
// even on purpose: no client can make one to slip a write past another client's If-Match.
func entityTag(representation []byte) string {
	sum := sha256.Sum256(representation)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// userRepresentation returns a user as every answer sends it, and its ETag.
func userRepresentation(u user) (body []byte, etag string, err error) {
	body, err = encodeJSON(u)
	return body, entityTag(body), err
}

// The failed preconditions: 412, and nothing changes (RFC 9110 §15.5.13).
var (
	errIfMatchFailed = newError(http.StatusPreconditionFailed,
		"the resource has changed since you read it: If-Match does not match its current ETag")
	errIfNoneMatchFailed = newError(http.StatusPreconditionFailed,
		"the request did not go ahead: If-None-Match matches the current ETag of the resource, or is * and the resource exists")
)

// preconditions are a request's If-Match and If-None-Match, each nil when the request has none.
// If-Modified-Since and If-Unmodified-Since are ignored: no answer carries a Last-Modified, so
// there is no date to compare with (RFC 9110 §13.1.3, §13.1.4).
type preconditions struct {
	ifMatch, ifNoneMatch *tagList
}

// A tagList is what an If-Match or If-None-Match header holds: "*", or entity tags.
type tagList struct {
	any  bool // "*": any current representation matches
	tags []string
}

// readPreconditions reads the preconditions of a request. A list may be spread over several
// header lines, which together make one list (RFC 9110 §5.3).
func readPreconditions(r *http.Request) preconditions {
	read := func(name string) *tagList {
		lines := r.Header.Values(name)
		if len(lines) == 0 {
			return nil
		}
		list := parseTagList(strings.Join(lines, ","))
		return &list
	}
	return preconditions{ifMatch: read("If-Match"), ifNoneMatch: read("If-None-Match")}
}

// present reports whether the request has a precondition at all.
func (p preconditions) present() bool { return p.ifMatch != nil || p.ifNoneMatch != nil }

// onUser judges the preconditions of a PUT, PATCH or DELETE against the user it would change, as
// that user is now. The store runs it under its write lock, so no other write comes between the
// judgment and the write (RFC 9110 §13.1).
func (p preconditions) onUser(current user) error {
	if !p.present() {
		return nil // an unconditional write pays for no ETag
	}
	_, etag, err := userRepresentation(current)
	if err != nil {
		return err
	}
	return p.checkWrite(etag)
}

// checkRead judges the preconditions of GET or HEAD against the target's current ETag, in RFC
// 9110 §13.2.2's order: If-Match that fails is 412; then If-None-Match that matches means the
// client's copy is current, and the answer is 304.
func (p preconditions) checkRead(etag string) (notModified bool, err error) {
	if p.ifMatch != nil && !p.ifMatch.matches(etag, strongly) {
		return false, errIfMatchFailed
	}
	return p.ifNoneMatch != nil && p.ifNoneMatch.matches(etag, weakly), nil
}

// checkWrite judges the preconditions of a write against its target's current ETag, in the same
// order: If-Match that fails is 412, and so is If-None-Match that matches (RFC 9110 §13.1.2).
func (p preconditions) checkWrite(etag string) error {
	if p.ifMatch != nil && !p.ifMatch.matches(etag, strongly) {
		return errIfMatchFailed
	}
	if p.ifNoneMatch != nil && p.ifNoneMatch.matches(etag, weakly) {
		return errIfNoneMatchFailed
	}
	return nil
}

// matches reports whether the list matches the current ETag of a target that exists: "*" always
// does, and a tag does when compare says so (RFC 9110 §13.1.1, §13.1.2).
func (list tagList) matches(current string, compare func(tag, current string) bool) bool {
	if list.any {
		return true
	}
	for _, tag := range list.tags {
		if compare(tag, current) {
			return true
		}
	}
	return false
}

// strongly is the strong comparison, which If-Match uses: a weak tag never matches (RFC 9110 §8.8.3.2).
func strongly(tag, current string) bool { return tag == current }

// weakly is the weak comparison, which If-None-Match uses: W/ is ignored.
func weakly(tag, current string) bool { return strings.TrimPrefix(tag, "W/") == current }

// parseTagList reads an If-Match or If-None-Match value by RFC 9110's grammar: "*" alone, or
// entity tags separated by commas (§13.1.1: If-Match = "*" / #entity-tag), with white space
// around each and empty elements skipped (§5.6.1). Reading stops at the first part that is not an
// entity tag followed by a comma or the end, as in net/http's own checkIfMatch: that part, and
// every tag after it, match nothing.
func parseTagList(value string) tagList {
	if strings.Trim(value, " \t") == "*" {
		return tagList{any: true}
	}
	var list tagList
	for rest := value; ; {
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" {
			return list
		}
		if rest[0] == ',' { // an empty element
			rest = rest[1:]
			continue
		}
		tag, after, ok := scanEntityTag(rest)
		after = strings.TrimLeft(after, " \t")
		if !ok || after != "" && after[0] != ',' {
			return list
		}
		list.tags, rest = append(list.tags, tag), after
	}
}

// scanEntityTag reads the entity tag at the start of s (RFC 9110 §8.8.3): W/ for a weak one, then
// etagc characters between double quotes, where etagc is any visible character but the quote, or
// a byte of obs-text (0x80 and above).
func scanEntityTag(s string) (tag, rest string, ok bool) {
	start := 0
	if strings.HasPrefix(s, "W/") {
		start = 2
	}
	if len(s) < start+2 || s[start] != '"' {
		return "", s, false
	}
	for i := start + 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return s[:i+1], s[i+1:], true
		case c == 0x21 || 0x23 <= c && c <= 0x7e || c >= 0x80: // etagc
		default: // a space, a tab, a control character
			return "", s, false
		}
	}
	return "", s, false
}

// sendRepresentation answers GET or HEAD with a representation and its ETag: 412 when If-Match
// fails, 304 and no body when If-None-Match says the client's copy is current, else 200.
func sendRepresentation(w http.ResponseWriter, r *http.Request, contentType string, body []byte, etag string) error {
	notModified, err := readPreconditions(r).checkRead(etag)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag)
	if notModified {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	writeBody(w, http.StatusOK, contentType, body)
	return nil
}
