package main

import (
	"fmt"
	"hash/fnv"
	"net/http"
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
	if anyEntityTag(headerList(r, "If-None-Match"), func(tag string, weak bool) bool {
		return tag == "*" || tag == etag // the weak comparison: W/ is ignored
	}) {
		w.WriteHeader(http.StatusNotModified)
		return true
	}
	return false
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

// anyEntityTag reports whether match holds for a tag of a list such as `"a", W/"b"` (RFC 9110
// §8.8.3). A tag may hold commas, so the list is scanned; from a malformed part on, nothing matches.
func anyEntityTag(list string, match func(tag string, weak bool) bool) bool {
	for {
		list = strings.TrimLeft(list, " \t,")
		switch {
		case list == "":
			return false
		case list[0] == '*':
			if match("*", false) {
				return true
			}
			list = list[1:]
			continue
		}
		weak := strings.HasPrefix(list, "W/")
		list = strings.TrimPrefix(list, "W/")
		if !strings.HasPrefix(list, `"`) {
			return false
		}
		end := strings.IndexByte(list[1:], '"')
		if end < 0 {
			return false
		}
		if match(list[:end+2], weak) {
			return true
		}
		list = list[end+2:]
	}
}
