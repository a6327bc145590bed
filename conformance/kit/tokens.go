package kit

import (
	"net/http"
	"slices"
	"strings"
)

// The kit writes every request with the tokens' variables in place of the tokens, as the report
// and its curl lines show them, and puts the tokens in only as it sends the request: so a report
// shows a request exactly as the kit wrote it, whatever the tokens are. (Replacing the tokens in
// the finished report instead breaks on a short token: with a read token r, "Bearer" would read
// "Bea$USERS_READ_TOKENe".)
//
// A check may write a token in three ways, each the shell's, so that a curl line works as pasted:
// $USERS_WRITE_TOKEN, ${USERS_WRITE_TOKEN} where a letter follows, and ${USERS_WRITE_TOKEN%?} for
// the token without its last character. The same goes for USERS_READ_TOKEN.
const (
	writeTokenVar = "$USERS_WRITE_TOKEN"
	readTokenVar  = "$USERS_READ_TOKEN"
)

// tokenVariables are the starts of the ways to write a token: a shell word holding one must be
// quoted so that the shell puts the token in (shellWord).
var tokenVariables = []string{"$USERS_WRITE_TOKEN", "${USERS_WRITE_TOKEN", "$USERS_READ_TOKEN", "${USERS_READ_TOKEN"}

// tokenReplacer puts the tokens in for their variables, as the shell would.
func tokenReplacer(writeToken, readToken string) *strings.Replacer {
	var pairs []string
	for _, t := range []struct{ name, token string }{{"USERS_WRITE_TOKEN", writeToken}, {"USERS_READ_TOKEN", readToken}} {
		// The longer forms first: at each place the replacer tries the pairs in this order.
		pairs = append(pairs, "${"+t.name+"%?}", withoutLastCharacter(t.token), "${"+t.name+"}", t.token, "$"+t.name, t.token)
	}
	return strings.NewReplacer(pairs...)
}

// withoutLastCharacter is what the shell's ${NAME%?} gives: the value without its last character.
// Tokens are ASCII (RFC 6750 b64token), so a character is a byte.
func withoutLastCharacter(s string) string {
	if s == "" {
		return ""
	}
	return s[:len(s)-1]
}

// readTokenVariable is the variable of the token reads go with: the read token, or the write token
// when there is none.
func (r *runner) readTokenVariable() string {
	if r.cfg.ReadToken != "" {
		return readTokenVar
	}
	return writeTokenVar
}

// expand returns a header value or a URL as it is sent, the tokens in it, and notes it when it
// holds one, so that hide knows it again in an answer.
func (r *runner) expand(written string) string {
	sent := r.tokens.Replace(written)
	if sent != written {
		r.sentWithTokens[sent] = written
	}
	return sent
}

// hide replaces in an answer (a header, a body, an error) each value the run sent with a token in
// it, should the server echo it, by the value as the kit wrote it: a report never shows a token. A
// sent value is an Authorization value ("Bearer " and the token) or a whole URL, so only an echo of
// it is replaced, never a token that happens to be part of other text: an occurrence that a letter
// or a digit touches is other text, as "Bearer r" in the challenge Bearer realm="users" is.
func (r *runner) hide(s string) string {
	sent := make([]string, 0, len(r.sentWithTokens))
	for value := range r.sentWithTokens {
		sent = append(sent, value)
	}
	// The longest first, so that "Bearer abcx" is not shown as the variable of "Bearer abc" and an x.
	slices.SortFunc(sent, func(a, b string) int { return len(b) - len(a) })
	for _, value := range sent {
		s = replaceWhole(s, value, r.sentWithTokens[value])
	}
	return s
}

// replaceWhole replaces each occurrence of old in s that no ASCII letter or digit touches on either
// side.
func replaceWhole(s, old, replacement string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			break
		}
		end := i + len(old)
		if i > 0 && isAlphanumeric(s[i-1]) || end < len(s) && isAlphanumeric(s[end]) {
			b.WriteString(s[:i+1]) // part of other text: look again from the next byte
			s = s[i+1:]
			continue
		}
		b.WriteString(s[:i])
		b.WriteString(replacement)
		s = s[end:]
	}
	b.WriteString(s)
	return b.String()
}

func isAlphanumeric(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func (r *runner) hideHeader(h http.Header) http.Header {
	hidden := http.Header{}
	for name, values := range h {
		for _, v := range values {
			hidden.Add(name, r.hide(v))
		}
	}
	return hidden
}
