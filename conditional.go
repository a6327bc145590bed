package main

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"regexp"
	"strings"
)

// Conditional requests (RFC 9110 §13): every representation has a strong ETag, a 64-bit FNV-1a
// hash of its bytes, so equal representations have equal tags and any change gives a new one.

func entityTag(representation []byte) string {
	hash := fnv.New64a()
	hash.Write(representation)
	return fmt.Sprintf(`"%016x"`, hash.Sum64())
}

// notModified sets the ETag, and answers 304 if If-None-Match holds it (RFC 9110 §13.1.2).
func notModified(w http.ResponseWriter, r *http.Request, etag string) bool {
	w.Header().Set("ETag", etag)
	ifNoneMatch := headerList(r, "If-None-Match")
	if ifNoneMatch == "" || !anyEntityTag(ifNoneMatch, func(tag string, weak bool) bool {
		return tag == "*" || tag == etag // the weak comparison: W/ is ignored
	}) {
		return false
	}
	w.WriteHeader(http.StatusNotModified)
	return true
}

// ifMatchAllows reports whether If-Match lets a change of u go ahead (RFC 9110 §13.1.1).
func ifMatchAllows(ifMatch string, u user) bool {
	current := entityTag(marshal(u))
	return anyEntityTag(ifMatch, func(tag string, weak bool) bool {
		return tag == "*" || !weak && tag == current
	})
}

// headerList returns a header that holds a list, its lines joined (RFC 9110 §5.3).
func headerList(r *http.Request, name string) string {
	return strings.Join(r.Header.Values(name), ", ")
}

// anyEntityTag reports whether match holds for a tag of a list such as `"a", W/"b"` or `*`
// (RFC 9110 §8.8.3). A tag may hold commas, so the list is read tag by tag, not split at commas;
// from a part that is not a tag on, nothing matches.
func anyEntityTag(list string, match func(tag string, weak bool) bool) bool {
	for tag := listedTag.FindStringSubmatch(list); tag != nil; tag = listedTag.FindStringSubmatch(list) {
		if match(strings.TrimPrefix(tag[1], "W/"), tag[2] != "") {
			return true
		}
		list = list[len(tag[0]):]
	}
	return false
}

// listedTag matches the first tag of a list: * or a quoted tag, perhaps weak, after separators.
var listedTag = regexp.MustCompile(`^[ \t,]*(\*|(W/)?"[^"]*")`)
