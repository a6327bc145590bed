package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// Reading a JSON body: the media type (415), the size (413), then the JSON itself (400), in that
// order (docs/api.md, "Request bodies"). Nothing here knows what a user is.

// maxBodyBytes is the largest body the API reads: a user is far smaller.
const maxBodyBytes = 1 << 20

// The media types a body may have. PATCH also takes a JSON Merge Patch's own (RFC 7396 §4), and
// says so in Accept-Patch (RFC 5789 §3.1), as POST does in Accept-Post.
const (
	acceptPost  = "application/json"
	acceptPatch = "application/json, application/merge-patch+json"
)

// checkMediaType takes a body with no Content-Encoding, of type application/json (and for PATCH
// application/merge-patch+json), with no charset but utf-8 (in any case, RFC 9110 §8.3.2).
func checkMediaType(r *http.Request) error {
	if len(r.Header.Values("Content-Encoding")) > 0 {
		// A 415 for a content coding names the codings taken (RFC 9110 §15.5.16).
		return unsupportedMediaType(r.Method, "send the body uncompressed, without a Content-Encoding").
			withHeader("Accept-Encoding", "identity")
	}
	accepted := []string{"application/json"}
	if r.Method == http.MethodPatch {
		accepted = append(accepted, "application/merge-patch+json")
	}
	mediaType, params, err := mime.ParseMediaType(r.Header.Get("Content-Type")) // lower-cases the type
	charset, hasCharset := params["charset"]
	switch {
	case err != nil || !slices.Contains(accepted, mediaType):
		return unsupportedMediaType(r.Method, "send the body as JSON, with Content-Type: "+strings.Join(accepted, " or "))
	case hasCharset && !strings.EqualFold(charset, "utf-8"):
		return unsupportedMediaType(r.Method, "send the body as JSON in UTF-8: charset may only be utf-8")
	}
	return nil
}

// unsupportedMediaType is the 415 of a body the method does not take, naming what it takes: POST
// in Accept-Post, PATCH in Accept-Patch (RFC 5789 §3.1). HTTP has no such header for PUT.
func unsupportedMediaType(method, message string) *apiError {
	e := newError(http.StatusUnsupportedMediaType, message)
	switch method {
	case http.MethodPost:
		return e.withHeader("Accept-Post", acceptPost)
	case http.MethodPatch:
		return e.withHeader("Accept-Patch", acceptPatch)
	}
	return e
}

// errBodyTooLarge is the error of a body over maxBodyBytes: errorFor (respond.go) answers it 413.
var errBodyTooLarge = errors.New("body too large")

// readBody checks the body's media type (415) and returns the whole body, read to its end before
// it is judged (413): a decoder that streams would stop at the first problem, and answer 400, or
// even 201, to a body over the limit.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if err := checkMediaType(r); err != nil {
		return nil, err
	}
	if r.ContentLength > maxBodyBytes {
		return nil, errBodyTooLarge // known from the headers: no need to read a byte
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, errBodyTooLarge
	case err != nil:
		return nil, badRequest("the body could not be read to its end")
	}
	return body, nil
}

// decodeJSON decodes a body that must be one JSON object into dst, as the readJSON of "Let's Go
// Further" does: json.Decoder, with unknown fields refused, reports the first problem it meets,
// and each kind of problem has a message of its own, with no Go type name in it. Member names
// match dst's fields as encoding/json matches them, in any case, and a member given twice keeps
// its last value (docs/api.md, "Notes for a port").
func decodeJSON(body []byte, dst any) error {
	if !utf8.Valid(body) { // encoding/json would quietly turn bad bytes into U+FFFD
		return badRequest("the body is not valid UTF-8")
	}
	decoder := json.NewDecoder(bytes.NewReader(body))
	decoder.DisallowUnknownFields()
	err := decoder.Decode(dst)
	var syntaxError *json.SyntaxError
	var typeError *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return badRequest(`the body is empty: send a JSON object such as {"name": "Ann", "email": "ann@example.com"}`)
	case errors.As(err, &syntaxError):
		return badRequest(fmt.Sprintf("the body is not valid JSON: %v (at byte %d)", syntaxError, syntaxError.Offset))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("the body is not valid JSON: it ends before the object does")
	case errors.As(err, &typeError) && typeError.Field == "":
		return badRequest(`the body must be a JSON object, such as {"name": "Ann", "email": "ann@example.com"}`)
	case errors.As(err, &typeError):
		return fieldsError(fieldProblem{typeError.Field, typeError.Field + " must be " + jsonType(typeError.Type)})
	case err != nil && strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no type for this error, only its message, which quotes the name.
		return badRequest("unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ") + ": leave it out of the body")
	case err != nil:
		return err
	}
	if decoder.Decode(new(json.RawMessage)) != io.EOF {
		return badRequest("the body must hold one JSON object and nothing after it")
	}
	return nil
}

// jsonType names the JSON type a Go type decodes from, for a message without Go's type names.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}
