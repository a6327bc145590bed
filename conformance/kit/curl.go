package kit

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Curl returns a curl command that sends the request again, as Schemathesis ends each failure. The
// tokens stay in their variables ("$USERS_WRITE_TOKEN"), so the line works in a shell where they
// are set and never shows them.
func (e *Exchange) Curl() string {
	var pipe string // a body curl cannot take as an argument comes from printf
	args := []string{"curl", "-i"}
	switch {
	case e.Method == http.MethodHead:
		args = []string{"curl", "-I"} // -X HEAD would wait for a body that never comes
	case e.Method == http.MethodGet && len(e.Body) == 0, e.Method == http.MethodPost && len(e.Body) > 0:
	default:
		args = append(args, "-X", e.Method)
	}
	if e.CACert != "" {
		args = append(args, "--cacert", shellWord(e.CACert)) // the certificates the run trusted
	}
	if u, err := url.Parse(e.URL); err == nil && hasDotSegment(u.Path) {
		args = append(args, "--path-as-is") // or curl would clean the path before sending it
	}
	names := make([]string, 0, len(e.Header))
	for name := range e.Header {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, value := range e.Header[name] {
			if value == "" {
				args = append(args, "-H", shellWord(name+";")) // curl's way to send a header with no value
			} else {
				args = append(args, "-H", shellWord(name+": "+value))
			}
		}
	}
	if len(e.Body) > 0 {
		if e.Header.Get("Content-Type") == "" {
			args = append(args, "-H", "'Content-Type:'") // curl would send a form's media type
		}
		if e.Chunked {
			args = append(args, "-H", "'Transfer-Encoding: chunked'")
		}
		if isPrintable(e.Body) {
			args = append(args, "--data-binary", shellWord(string(e.Body)))
		} else {
			pipe = printfCommand(e.Body) + " | "
			args = append(args, "--data-binary", "@-")
		}
	}
	return pipe + strings.Join(append(args, shellWord(e.URL)), " ")
}

// hasDotSegment reports whether a path has a . or .. segment, which curl would remove.
func hasDotSegment(path string) bool {
	for _, segment := range strings.Split(path, "/") {
		if segment == "." || segment == ".." {
			return true
		}
	}
	return false
}

// isPrintable reports whether a body can be written as it is in a shell word: valid UTF-8 that
// prints, and short.
func isPrintable(body []byte) bool {
	return len(body) <= 4096 && utf8.Valid(body) &&
		!strings.ContainsFunc(string(body), func(r rune) bool { return !unicode.IsGraphic(r) && r != ' ' })
}

// printfCommand writes a body with printf: every byte that does not print as an octal escape, and
// a long run of spaces at its end as a padded empty argument, so even 1 MiB fits on a line.
func printfCommand(body []byte) string {
	trimmed := strings.TrimRight(string(body), " ")
	padding := len(body) - len(trimmed)
	if padding < 16 {
		trimmed, padding = string(body), 0
	}
	var format strings.Builder
	for i := 0; i < len(trimmed); i++ {
		switch b := trimmed[i]; {
		case b == '%':
			format.WriteString("%%")
		case b == '\\':
			format.WriteString(`\\`)
		case b == '\'':
			format.WriteString(`'\''`)
		case b < 0x20 || b > 0x7e:
			fmt.Fprintf(&format, `\%03o`, b)
		default:
			format.WriteByte(b)
		}
	}
	if padding == 0 {
		return "printf '" + format.String() + "'"
	}
	return fmt.Sprintf("printf '%s%%%ds' ''", format.String(), padding)
}

// shellWord quotes s as one shell word. A word that names a token's variable is double-quoted, so
// that the shell puts the token in; any other is single-quoted, so that nothing in it is expanded.
func shellWord(s string) string {
	if !slices.ContainsFunc(tokenVariables, func(v string) bool { return strings.Contains(s, v) }) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	escaped := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "`", "\\`", "$", `\$`).Replace(s)
	for _, v := range tokenVariables { // every $ stays escaped but those that start a token's variable
		escaped = strings.ReplaceAll(escaped, `\`+v, v)
	}
	return `"` + escaped + `"`
}
