package kit

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// A check writes a token as its variable, as a shell would; the kit puts the token in only as it
// sends the request, and the report's curl line, pasted in a shell where the tokens are set, sends
// the very same value.
func TestTokensAreSentInPlaceOfTheirVariables(t *testing.T) {
	var mu sync.Mutex
	received := map[string]string{} // X-Kit-Case: the Authorization the server got last
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		received[r.Header.Get("X-Kit-Case")] = r.Header.Get("Authorization")
		mu.Unlock()
		w.Write([]byte(`{"data":[],"total":0}`))
	}))
	defer server.Close()
	take := func(i int) string { // and forget it, for the next request of the case
		mu.Lock()
		defer mu.Unlock()
		got := received[strconv.Itoa(i)]
		delete(received, strconv.Itoa(i))
		return got
	}
	tests := []struct{ written, sent string }{
		{"Bearer $USERS_WRITE_TOKEN", "Bearer ab"},
		{"Bearer $USERS_READ_TOKEN", "Bearer r"},
		{"Bearer ${USERS_WRITE_TOKEN}x", "Bearer abx"},
		{"Bearer ${USERS_WRITE_TOKEN%?}", "Bearer a"},
	}
	var rules []Rule
	for i, tt := range tests {
		rules = append(rules, rule("test/sends", 0, func(c *Client) error {
			return failf(c.anonymously(http.MethodGet, usersCollection, "Authorization", tt.written, "X-Kit-Case", strconv.Itoa(i)), "", "")
		}))
	}
	report := run(t, Config{URL: server.URL, Description: UsersDescription(), WriteToken: "ab", ReadToken: "r"}, rules...)
	for i, tt := range tests {
		e := report.Results[i].Exchange
		if got := take(i); got != tt.sent {
			t.Errorf("%s: the server got Authorization %q, want %q", tt.written, got, tt.sent)
		}
		if got := e.Header.Get("Authorization"); got != tt.written {
			t.Errorf("%s: the report shows Authorization %q", tt.written, got)
		}
		if _, err := exec.LookPath("curl"); err != nil {
			continue
		}
		cmd := exec.Command("sh", "-c", e.Curl())
		cmd.Env = append(os.Environ(), "USERS_WRITE_TOKEN=ab", "USERS_READ_TOKEN=r")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s\n%v: %s", e.Curl(), err, out)
		}
		if got := take(i); got != tt.sent {
			t.Errorf("%s\nsent Authorization %q, want %q", e.Curl(), got, tt.sent)
		}
	}
}

// With tokens as short as w and r, the report hides a token only where the server echoes a value
// that was sent with it, and leaves the rest of an answer as it came: the challenge
// Bearer realm="users" holds "Bearer r", which the run sent, but is not an echo of it.
func TestReportHidesATokenOnlyWhereItWasSent(t *testing.T) {
	fake, server := newFakeServer(t)
	fake.tokens = map[string]bool{"w": true, "r": true}
	report := run(t, Config{URL: server.URL, Description: UsersDescription(), WriteToken: "w", ReadToken: "r"},
		rule("test/token-echoed", 0, func(c *Client) error {
			// bearer in lower case is unknown to the fake: it answers 401 and echoes the value
			return c.anonymously(http.MethodGet, usersCollection, "Authorization", "bearer "+writeTokenVar).statusIs(http.StatusOK)
		}),
		rule("test/read", 0, func(c *Client) error { return failf(c.get(usersCollection), "", "") }))
	echoed, read := report.Results[0], report.Results[1]
	for _, tt := range []struct{ what, got, want string }{
		{"Got", echoed.Got, `401 Unauthorized, body {"error":"unknown token bearer $USERS_WRITE_TOKEN"}`},
		{"X-Echo", echoed.Exchange.ResponseHeader.Get("X-Echo"), "bearer $USERS_WRITE_TOKEN"},
		{"WWW-Authenticate", echoed.Exchange.ResponseHeader.Get("WWW-Authenticate"), `Bearer realm="users", error="invalid_token"`},
		{"the echo's curl line", echoed.Exchange.Curl(), `curl -i -H "Authorization: bearer $USERS_WRITE_TOKEN" '` + server.URL + `/api/users'`},
		{"the read's curl line", read.Exchange.Curl(), `curl -i -H "Authorization: Bearer $USERS_READ_TOKEN" '` + server.URL + `/api/users'`},
		{"the read's answer", string(read.Exchange.ResponseBody), `{"data":[],"total":0}` + "\n"},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %s\nwant        %s", tt.what, tt.got, tt.want)
		}
	}
	if strings.Contains(echoed.Exchange.ResponseHeader.Get("X-Echo"), "bearer w") {
		t.Error("the echo shows the token")
	}
}
