package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Browsers (CORS, docs/api.md "Browsers (CORS)"): with -cors-origin, pages of other origins may
// call the API. A program that serves its pages from its own origin needs none of this file.

// corsPolicy is the -cors-origin setting: the origins whose pages may call the API from a browser,
// each written as a browser writes it in Origin (parseCORSOrigins).
type corsPolicy struct {
	anyOrigin bool
	origins   []string
}

// LogValue names the policy in the log: the origins, * for any, or none.
func (p corsPolicy) LogValue() slog.Value {
	switch {
	case p.anyOrigin:
		return slog.StringValue("*")
	case len(p.origins) == 0:
		return slog.StringValue("none")
	}
	return slog.StringValue(strings.Join(p.origins, ","))
}

// allows reports whether a page of this origin may call the API: origins compare byte for byte.
func (p corsPolicy) allows(origin string) bool {
	return p.anyOrigin || origin != "" && slices.Contains(p.origins, origin)
}

// parseCORSOrigins reads -cors-origin: "*", or origins separated by commas. Origins compare byte
// for byte with the Origin a browser sends (RFC 6454 §6.2), so each must be written as a browser
// writes it; one written otherwise would never match, and is refused, showing the form to write.
func parseCORSOrigins(value string) (corsPolicy, error) {
	var policy corsPolicy
	switch strings.TrimSpace(value) {
	case "":
		return policy, nil
	case "*":
		return corsPolicy{anyOrigin: true}, nil
	}
	for _, origin := range strings.Split(value, ",") {
		origin = strings.TrimSpace(origin)
		form, ok := browserOrigin(origin)
		switch {
		case !ok:
			return policy, withAdvice(fmt.Errorf("-cors-origin: %q is not an origin", origin),
				"write scheme://host or scheme://host:port, such as http://localhost:3000")
		case form != origin:
			return policy, withAdvice(fmt.Errorf("-cors-origin: %q is not written as a browser sends it in Origin", origin),
				"write it "+form)
		}
		policy.origins = append(policy.origins, origin)
	}
	return policy, nil
}

// browserOrigin returns an http or https origin as a browser writes it in Origin: scheme and host
// in lower case, the port in plain decimal and left out when it is the scheme's default, and
// nothing after it. ok is false when origin is no such origin at all.
func browserOrigin(origin string) (form string, ok bool) {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" || u.User != nil ||
		u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n > 65535 {
			return "", false
		}
		port = strconv.Itoa(n)
	}
	if u.Scheme == "http" && port == "80" || u.Scheme == "https" && port == "443" {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // an IPv6 address
	}
	if port != "" {
		host += ":" + port
	}
	return u.Scheme + "://" + host, true
}

// allowCrossOrigin adds the CORS headers to every answer to a page of an allowed origin. It wraps
// the mux, which would answer a preflight 405 before any route saw it. A request from a page of an
// origin not allowed gets none, and the browser keeps the answer from the page: the log says so,
// once for each such origin.
func (a *api) allowCrossOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, origin := w.Header(), r.Header.Get("Origin")
		if a.cors.anyOrigin {
			origin = "*" // every page may read the answers, which then do not vary by origin
		} else if len(a.cors.origins) > 0 {
			h.Add("Vary", "Origin")
		}
		if !a.cors.allows(origin) {
			if origin != "" && !sameOrigin(r, origin) && a.refusedOrigins.first(origin) {
				a.log.Warn("cross-origin request refused", "origin", origin, "allowed", a.cors)
			}
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", "Location, Content-Location, ETag, Link, WWW-Authenticate, X-Request-Id, Allow, Accept-Post, Accept-Patch, Retry-After")
		if !isPreflight(r) {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, If-Match, If-None-Match, X-Request-Id")
		h.Set("Access-Control-Max-Age", "600")
		if isAPI(r) {
			// A preflight carries no token, and is answered here on every path under /api/, known
			// or not, so that a page's mistake (/api/users/undefined) reaches the page as the JSON
			// 404 of the real request rather than as a network error.
			h.Add("Vary", "Authorization")
			h.Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r) // elsewhere, the route's own OPTIONS answers
	})
}

// sameOrigin reports whether origin is the server's own, as the request names it in Host: a page
// the server serves itself sends Origin on a POST too, and needs no CORS.
func sameOrigin(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// originSet is the set of origins whose refusal was logged: each once, and at most 32 of them, so
// that made-up origins cannot grow it without end. Its mutex guards its map.
type originSet struct {
	mu      sync.Mutex
	origins map[string]bool
}

// first adds origin to the set, and reports whether it was not there before.
func (s *originSet) first(origin string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.origins[origin] || len(s.origins) >= 32 {
		return false
	}
	if s.origins == nil {
		s.origins = map[string]bool{}
	}
	s.origins[origin] = true
	return true
}
