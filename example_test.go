package main

import (
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// README, "Use it in your own program": a program of your own takes the service's files and two
// functions, newServer and newHTTPServer. This file checks that the README's code is the code
// below, that it sets every time-out, and, outside -short, that the copy the README describes
// builds, and that users_test.go and helpers_test.go pass beside the service's files alone.

// copiedService is the code of the README's "Use it in your own program", as it stands there: the
// service built from newServer and newHTTPServer, the two functions a copier takes.
func copiedService(logger *slog.Logger) (*http.Server, error) {
	tokens, err := parseTokens(os.Getenv("USERS_TOKENS")) // "TOKEN:write,TOKEN:read"
	if err != nil {
		return nil, err
	}
	cfg := config{tokens: tokens, timeouts: defaultTimeouts(0)}
	handler, err := newServer(cfg, logger, newUserStore())
	if err != nil {
		return nil, err
	}
	return newHTTPServer(handler, cfg.timeouts, logger), nil
}

// The README shows copiedService's code as it is, line for line.
func TestReadmeShowsTheCodeAsItIs(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, shown, _ := strings.Cut(string(readme), "```go\n") // the README's one block of Go
	shown, _, _ = strings.Cut(shown, "```\n")
	source, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, found := strings.Cut(string(source), "func copiedService(logger *slog.Logger) (*http.Server, error) {\n")
	body, _, closed := strings.Cut(body, "\n}\n")
	if !found || !closed {
		t.Fatal("example_test.go has no func copiedService")
	}
	lines := strings.Split(body, "\n")
	for i, line := range lines { // the README's lines are indented one tab less
		lines[i] = strings.TrimPrefix(line, "\t")
	}
	if want := strings.Join(lines, "\n") + "\n"; shown != want {
		t.Errorf("the README shows\n%s\nbut the code is\n%s", shown, want)
	}
}

// The README's code for a program of your own builds a server with the program's own time-outs
// and header limit: a zero http.Server has none.
func TestReadmeCodeSetsEveryTimeout(t *testing.T) {
	t.Setenv("USERS_TOKENS", writeToken+":write") // as the shell that starts your program would
	server, err := copiedService(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	want := defaultTimeouts(0)
	for _, tt := range []struct {
		name      string
		got, want time.Duration
	}{
		{"ReadHeaderTimeout", server.ReadHeaderTimeout, want.readHeader},
		{"ReadTimeout", server.ReadTimeout, want.read},
		{"WriteTimeout", server.WriteTimeout, want.write},
		{"IdleTimeout", server.IdleTimeout, want.idle},
	} {
		if tt.got != tt.want || tt.got == 0 {
			t.Errorf("%s is %s, want %s", tt.name, tt.got, tt.want)
		}
	}
	if server.MaxHeaderBytes != 64<<10 {
		t.Errorf("MaxHeaderBytes is %d, want 64 KiB", server.MaxHeaderBytes)
	}
}

// A program of your own serves the API with the two functions the README's code calls:
// newServer builds the handler from a config, and newHTTPServer the http.Server around it. Here
// the token is written in; the README's code reads it from USERS_TOKENS.
func Example_yourOwnProgram() {
	tokens, err := parseTokens("example-token:write")
	if err != nil {
		fmt.Println(err)
		return
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := config{tokens: tokens, timeouts: defaultTimeouts(0)}
	handler, err := newServer(cfg, logger, newUserStore())
	if err != nil {
		fmt.Println(err)
		return
	}
	server := newHTTPServer(handler, cfg.timeouts, logger) // set its Addr, then ListenAndServe

	send := func(method, target, body string) {
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer example-token")
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		server.Handler.ServeHTTP(w, r)
		fmt.Println(method, target, "->", w.Code, http.StatusText(w.Code))
		if location := w.Header().Get("Location"); location != "" {
			fmt.Println("Location:", location)
		}
		fmt.Println(w.Body)
	}
	send("POST", "/api/users", `{"name":"Ann","email":"ann@example.com"}`)
	send("GET", "/api/users", "")
	// Output:
	// POST /api/users -> 201 Created
	// Location: /api/users/1
	// {"id":1,"name":"Ann","email":"ann@example.com"}
	// GET /api/users -> 200 OK
	// {"data":[{"id":1,"name":"Ann","email":"ann@example.com"}],"total":1}
}

// Copies of the service build and pass on their own, with the go command in a folder of their
// own (a build check, not a way to start the service). Each holds every non-test .go file and web/,
// and:
//   - the README's copy: main.go without its main function and the two imports only main uses,
//     and a main of the copier's own that serves the API with the README's code;
//   - the pair a learner copies first, users_test.go and helpers_test.go, with go.mod: they need
//     nothing but the service's own files, and no other test file.
func TestCopiesBuildOnTheirOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and tests copies of the service with the go command")
	}
	read := func(name string) string {
		content, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(content)
	}
	_, readmeCode, _ := strings.Cut(read("README.md"), "```go\n") // TestReadmeShowsTheCodeAsItIs checks it
	readmeCode, _, _ = strings.Cut(readmeCode, "```\n")

	withoutMain := read("main.go") // README: "Delete main.go's main function, ... and the two imports only it uses"
	begin := strings.Index(withoutMain, "\nfunc main() {\n")
	end := strings.Index(withoutMain[begin+1:], "\n}\n") + begin + 3
	if begin < 0 || end < begin {
		t.Fatal("main.go has no func main")
	}
	withoutMain = withoutMain[:begin] + withoutMain[end:]
	for _, onlyMains := range []string{"\t\"os\"\n", "\t\"os/signal\"\n"} {
		if !strings.Contains(withoutMain, onlyMains) {
			t.Fatalf("main.go does not import %s", strings.TrimSpace(onlyMains))
		}
		withoutMain = strings.Replace(withoutMain, onlyMains, "", 1)
	}
	yours := "package main\n\nimport (\n\t\"log/slog\"\n\t\"net/http\"\n\t\"os\"\n)\n\n" +
		"func main() {\n\tserver, err := service(slog.Default())\n\tif err != nil {\n\t\tpanic(err)\n\t}\n" +
		"\tserver.Addr = \"localhost:8080\"\n\tpanic(server.ListenAndServe())\n}\n\n" +
		"func service(logger *slog.Logger) (*http.Server, error) {\n" + readmeCode + "}\n"

	for _, tt := range []struct {
		name    string
		files   map[string]string // beside the non-test .go files and web/, or instead of one
		command []string          // of the go command
	}{
		{"the README's copy builds", map[string]string{"main.go": withoutMain, "yours.go": yours, "go.mod": "module yours\n\ngo 1.22\n"},
			[]string{"build", "-o", os.DevNull, "."}},
		{"users_test.go and helpers_test.go pass", map[string]string{"users_test.go": read("users_test.go"), "helpers_test.go": read("helpers_test.go"), "go.mod": read("go.mod")},
			[]string{"test", "-count=1", "."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			sources, err := filepath.Glob("*.go")
			if err != nil {
				t.Fatal(err)
			}
			err = filepath.WalkDir("web", func(path string, entry fs.DirEntry, err error) error {
				if err == nil && !entry.IsDir() {
					sources = append(sources, path)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range sources {
				if strings.HasSuffix(path, "_test.go") {
					continue
				}
				if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o700); err != nil {
					t.Fatal(err)
				}
				content, err := os.ReadFile(path)
				if err == nil {
					err = os.WriteFile(filepath.Join(dir, path), content, 0o600)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			for name, content := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			goCommand := exec.Command("go", tt.command...)
			goCommand.Dir = dir
			if out, err := goCommand.CombinedOutput(); err != nil {
				t.Errorf("go %s: %v\n%s", strings.Join(tt.command, " "), err, out)
			}
		})
	}
}
