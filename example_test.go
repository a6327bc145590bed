package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// copiedService is the code of the README's "Use it in your own program", as it stands there: the
// service built from newServer and newHTTPServer, the two functions a copier takes.
func copiedService(ctx context.Context, logger *slog.Logger) (*http.Server, error) {
	tokens, err := parseTokens(os.Getenv("USERS_TOKENS")) // "TOKEN:write,TOKEN:read"
	if err != nil {
		return nil, err
	}
	cfg := config{tokens: tokens, timeouts: defaultTimeouts(0)}
	handler, err := newServer(cfg, logger, newUserStore(), ctx.Done())
	if err != nil {
		return nil, err
	}
	return newHTTPServer(handler, cfg.timeouts, logger), nil
}

// The README's code for a program of your own builds a server that answers the API and has every
// time-out set.
func TestTheReadmesCodeForYourOwnProgramServesTheAPI(t *testing.T) {
	t.Setenv("USERS_TOKENS", writeToken+":write")
	server, err := copiedService(context.Background(), slog.New(slog.NewTextHandler(&logBuffer{}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if server.ReadHeaderTimeout == 0 || server.ReadTimeout == 0 || server.WriteTimeout == 0 || server.IdleTimeout == 0 {
		t.Errorf("time-outs %+v: each must be set", server)
	}
	r := httptest.NewRequest("POST", "/api/users", strings.NewReader(`{"name":"Ann","email":"ann@example.com"}`))
	r.Header.Set("Authorization", "Bearer "+writeToken)
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	server.Handler.ServeHTTP(w, r)
	wantStatus(t, w, http.StatusCreated)
	wantBody(t, w, `{"id":1,"name":"Ann","email":"ann@example.com"}`)
}

// The README shows copiedService's code as it is, line for line.
func TestTheReadmeShowsTheCodeForYourOwnProgramAsItIs(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, shown, _ := strings.Cut(string(readme), "```go\n")
	shown, _, _ = strings.Cut(shown, "```\n")
	_, body, _ := strings.Cut(string(source), "func copiedService(ctx context.Context, logger *slog.Logger) (*http.Server, error) {\n")
	body, _, _ = strings.Cut(body, "\n}\n")
	var code []string
	for _, line := range strings.Split(body, "\n") {
		code = append(code, strings.TrimPrefix(line, "\t"))
	}
	if want := strings.Join(code, "\n") + "\n"; shown != want {
		t.Errorf("the README shows\n%s\nbut the code is\n%s", shown, want)
	}
}
