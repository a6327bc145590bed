package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// Conditional requests (RFC 9110 §13, docs/api.md "Conditional requests"). Every representation
// has a strong ETag made of its bytes alone, so it survives a restart and a hand edit of the data
// file, and equal representations have equal tags.

// entityTag returns the strong ETag of a representation: the first 128 bits of its SHA-256, in
// hex. Two representations share a tag only by a collision, which takes about 2^64 tries to find
// even on purpose: no client can make one to slip a write past another client's If-Match.
func entityTag(representation []byte) string {
	sum := sha256.Sum256(representation)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// userRepresentation returns a user as every answer sends it, and its ETag.
func userRepresentation(u user) (body []byte, etag string) {
	body, _ = json.Marshal(u) // a user, an int and two strings, always encodes
	return body, entityTag(body)
}

// The failed preconditions: errorFor (respond.go) answers each 412, and nothing changes (RFC 9110
// §15.5.13). If-Match that holds no strong entity tag at all, such as a tag without its quotes,
// or a weak one, which If-Match never matches, is told apart: the client's copy may be current.
var (
	errIfMatchFailed     = errors.New("if-match failed")
	errIfMatchNotAnETag  = errors.New("if-match holds no strong entity tag")
	errIfNoneMatchFailed = errors.New("if-none-match failed")
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

// readPreconditions reads the preconditions of a request.
func readPreconditions(r *http.Request) preconditions {
	return preconditions{ifMatch: readTagList(r.Header.Values("If-Match")), ifNoneMatch: readTagList(r.Header.Values("If-None-Match"))}
}

// readTagList reads the lines of one header, which together make one list (RFC 9110 §5.3): "*",
// or elements separated by commas, white space around each. The service's own tags hold no comma,
// so splitting at commas is exact for every tag that can match; an element that is not an entity
// tag matches nothing.
func readTagList(lines []string) *tagList {
	if len(lines) == 0 {
		return nil
	}
	value := strings.Join(lines, ",")
	if strings.Trim(value, " \t") == "*" {
		return &tagList{any: true}
	}
	list := &tagList{}
	for _, element := range strings.Split(value, ",") {
		list.tags = append(list.tags, strings.Trim(element, " \t"))
	}
	return list
}

// present reports whether the request has a precondition at all.
func (p preconditions) present() bool { return p.ifMatch != nil || p.ifNoneMatch != nil }

// onUser judges the preconditions of a PUT, PATCH or DELETE against the user it would change, as
// that user is now. The store runs it under its lock, so no other write comes between the
// judgment and the write (RFC 9110 §13.1).
func (p preconditions) onUser(current user) error {
	if !p.present() {
		return nil // an unconditional write pays for no ETag
	}
	_, etag := userRepresentation(current)
	return p.checkWrite(etag)
}

// onCollection judges the preconditions of a POST against the collection, whose ETag is the one a
// GET of /api/users with no query answers (docs/api.md, "Conditional requests"). The store runs it
// under its lock, so the list is read and encoded there: only a conditional POST pays for it.
func (p preconditions) onCollection(collection func() ([]user, error)) error {
	if !p.present() {
		return nil // an unconditional POST never reads the collection
	}
	users, err := collection()
	if err != nil {
		return err
	}
	return p.checkWrite(listRepresentation(users, len(users), nil).etag)
}

// checkRead judges the preconditions of GET or HEAD against the target's current ETag, in RFC
// 9110 §13.2.2's order: If-Match that fails is 412; then If-None-Match that matches means the
// client's copy is current, and the answer is 304.
func (p preconditions) checkRead(etag string) (notModified bool, err error) {
	if p.ifMatch != nil && !p.ifMatch.matches(etag, strongly) {
		return false, p.ifMatch.failure()
	}
	return p.ifNoneMatch != nil && p.ifNoneMatch.matches(etag, weakly), nil
}

// checkWrite judges the preconditions of a write against its target's current ETag, in the same
// order: If-Match that fails is 412, and so is If-None-Match that matches (RFC 9110 §13.1.2).
func (p preconditions) checkWrite(etag string) error {
	if p.ifMatch != nil && !p.ifMatch.matches(etag, strongly) {
		return p.ifMatch.failure()
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

// failure is why an If-Match list that matched nothing failed: errIfMatchNotAnETag when none of
// its elements is a strong entity tag, which no current ETag can be, else errIfMatchFailed.
func (list tagList) failure() error {
	for _, tag := range list.tags {
		if isStrongTag(tag) {
			return errIfMatchFailed
		}
	}
	return errIfMatchNotAnETag
}

// isStrongTag reports whether tag is a strong entity tag: an opaque tag between double quotes
// (RFC 9110 §8.8.3), with no W/ before it.
func isStrongTag(tag string) bool {
	return len(tag) >= 2 && tag[0] == '"' && tag[len(tag)-1] == '"' && !strings.Contains(tag[1:len(tag)-1], `"`)
}

// strongly is the strong comparison, which If-Match uses: a weak tag never matches (RFC 9110 §8.8.3.2).
func strongly(tag, current string) bool { return tag == current }

// weakly is the weak comparison, which If-None-Match uses: W/ is ignored.
func weakly(tag, current string) bool { return strings.TrimPrefix(tag, "W/") == current }

// A representation is an answer to GET or HEAD: a body, its media type and ETag, how long a cache
// may keep it, and for a page of the list its Link header ("" for none).
type representation struct {
	contentType  string
	cacheControl string
	body         []byte
	etag         string
	link         string
}

// sendRepresentation answers GET or HEAD with rep, once its preconditions are judged: 412 when
// If-Match fails, 304 and no body when If-None-Match says the client's copy is current, else 200.
// Its header fields are set only then, once the answer is decided.
func sendRepresentation(w http.ResponseWriter, r *http.Request, rep representation) error {
	notModified, err := readPreconditions(r).checkRead(rep.etag)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", rep.etag)
	w.Header().Set("Cache-Control", rep.cacheControl)
	if rep.link != "" {
		w.Header().Set("Link", rep.link)
	}
	if notModified {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	writeBody(w, http.StatusOK, rep.contentType, rep.body)
	return nil
}
