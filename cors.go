package main

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Browsers (CORS, docs/api.md "Browsers (CORS)"): with -cors-origin, pages of other origins may
// call the API. A program that serves its pages from its own origin needs none of this file.

// corsPolicy is the -cors-origin setting: the origins whose pages may call the API from a browser,
// each written as a browser writes it in Origin (parseCORSOrigins).
type corsPolicy struct {
	anyOrigin bool
	origins   []string
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
			return policy, fmt.Errorf("-cors-origin: %q is not an origin: write scheme://host or scheme://host:port, such as http://localhost:3000", origin)
		case form != origin:
			return policy, fmt.Errorf("-cors-origin: write %q as a browser sends it in Origin: %s", origin, form)
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
// the mux, which would answer a preflight 405 before any route saw it.
func (a *api) allowCrossOrigin(next http.Handler) http.Handler {
	if !a.cors.anyOrigin && len(a.cors.origins) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, origin := w.Header(), r.Header.Get("Origin")
		if a.cors.anyOrigin {
			origin = "*" // every page may read the answers, which then do not vary by origin
		} else {
			h.Add("Vary", "Origin")
		}
		if !a.cors.allows(origin) { // no CORS header: the browser keeps the answer from the page
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", "Location, Content-Location, ETag, Link, WWW-Authenticate, X-Request-Id, Allow, Accept-Post, Accept-Patch")
		if !isPreflight(r) {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, If-Match, If-None-Match, X-Request-Id")
		h.Set("Access-Control-Max-Age", "600")
		if strings.HasPrefix(r.URL.Path, "/api/") {
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
