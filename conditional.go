package main

import (
	"strconv"
	"strings"
)

// Conditional requests (RFC 9110 §13, SPEC §8). Every representation has a strong ETag: a 64-bit
// hash of its bytes, so equal representations have equal tags and any change gives a new one.

func formatETag(hash uint64) string {
	var tag [18]byte // built in place, so that the string is the only allocation
	return string(append(strconv.AppendUint(append(tag[:0], '"'), hash, 16), '"'))
}

// ifNoneMatchHolds reports whether If-None-Match lists the current ETag, under the weak
// comparison GET and HEAD use (RFC 9110 §13.1.2): then the client's copy is current, and 304 says so.
func ifNoneMatchHolds(header, etag string) bool {
	return anyEntityTag(header, func(tag string, weak bool) bool {
		return tag == "*" || tag == etag
	})
}

// ifMatchAllows reports whether If-Match lets a change go ahead, under the strong comparison
// (RFC 9110 §13.1.1): "*" matches any existing user, a weak tag never matches.
func ifMatchAllows(header string, etag uint64) bool {
	current := formatETag(etag)
	return anyEntityTag(header, func(tag string, weak bool) bool {
		return tag == "*" || !weak && tag == current
	})
}

// anyEntityTag reports whether match holds for an entity tag in a list such as
// `"a", W/"b"` or `*` (RFC 9110 §8.8.3). A tag may itself hold commas, so the list is scanned,
// not split. A malformed list matches nothing from the point where it goes wrong.
func anyEntityTag(list string, match func(tag string, weak bool) bool) bool {
	for {
		list = strings.TrimLeft(list, " \t,")
		if list == "" {
			return false
		}
		if list[0] == '*' {
			if match("*", false) {
				return true
			}
			list = list[1:]
			continue
		}
		weak := strings.HasPrefix(list, "W/")
		if weak {
			list = list[2:]
		}
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
