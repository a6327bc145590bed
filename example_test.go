package main

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	gotoken "go/token"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// copiedService is the code of the README's "Use it in your own program", as it stands there: the
// service built from newServer and newHTTPServer, the two functions a copier takes.
func copiedService(ctx context.Context, logger *slog.Logger) (*http.Server, error) {
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

// The README's code for a program of your own builds a server with the program's own time-outs
// and header limit: a zero http.Server has none.
func TestReadmeCodeSetsEveryTimeout(t *testing.T) {
	t.Setenv("USERS_TOKENS", writeToken+":write")
	server, err := copiedService(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)))
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

// The README's code serves the API: a program of your own that runs it, with USERS_TOKENS in its
// environment, creates a user and reads the collection back.
func Example_yourOwnProgram() {
	os.Setenv("USERS_TOKENS", "example-token:write") // as the shell that starts your program would
	defer os.Unsetenv("USERS_TOKENS")
	server, err := copiedService(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		fmt.Println(err)
		return
	}
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

// The README shows copiedService's code as it is, line for line.
func TestReadmeShowsTheCodeAsItIs(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, shown, _ := strings.Cut(string(readme), "```go\n")
	shown, _, _ = strings.Cut(shown, "```\n")
	var code []string
	for _, line := range strings.Split(copiedServiceBody(t), "\n") {
		code = append(code, strings.TrimPrefix(line, "\t"))
	}
	if want := strings.Join(code, "\n") + "\n"; shown != want {
		t.Errorf("the README shows\n%s\nbut the code is\n%s", shown, want)
	}
}

// The copy the README describes builds on its own: every non-test file and web/, main.go without
// its main function and the imports only main uses, and a main of the copier's own that serves the
// API with the README's code.
func TestReadmesCopyBuildsOnItsOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a program")
	}
	dir := t.TempDir()
	copyService(t, dir, func(name string, source []byte) []byte {
		if name == "main.go" {
			return withoutMain(t, source)
		}
		return source
	})
	yours := "package main\n\nimport (\n\t\"context\"\n\t\"log/slog\"\n\t\"net/http\"\n\t\"os\"\n)\n\n" +
		"func main() {\n\tserver, err := service(context.Background(), slog.Default())\n\tif err != nil {\n\t\tpanic(err)\n\t}\n" +
		"\tserver.Addr = \"localhost:8080\"\n\tpanic(server.ListenAndServe())\n}\n\n" +
		"func service(ctx context.Context, logger *slog.Logger) (*http.Server, error) {\n" + copiedServiceBody(t) + "\n}\n"
	for name, content := range map[string]string{"yours.go": yours, "go.mod": "module yours\n\ngo 1.22\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "yours"), ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Errorf("the copy does not build: %v\n%s", err, out)
	}
}

// users_test.go and helpers_test.go, the pair a learner copies first, need nothing but the
// service's own files: beside every non-test file and web/, and no other test file, they compile
// and pass.
func TestUsersTestStandsOnItsOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs go test in another folder")
	}
	dir := t.TempDir()
	copyService(t, dir, func(name string, source []byte) []byte { return source })
	for _, name := range []string{"users_test.go", "helpers_test.go", "go.mod"} {
		source, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), source, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	test := exec.Command("go", "test", "-count=1", ".")
	test.Dir = dir
	if out, err := test.CombinedOutput(); err != nil {
		t.Errorf("users_test.go and helpers_test.go do not pass on their own: %v\n%s", err, out)
	}
}

// copyService copies every non-test .go file, as edit gives it back, and web/ into dir.
func copyService(t *testing.T, dir string, edit func(name string, source []byte) []byte) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		source, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), edit(name, source), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	err = filepath.WalkDir("web", func(path string, entry fs.DirEntry, err error) error {
		if err != nil || entry.IsDir() {
			return os.MkdirAll(filepath.Join(dir, path), 0o700)
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, path), content, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// copiedServiceBody is the body of copiedService as this file has it, between its braces.
func copiedServiceBody(t *testing.T) string {
	t.Helper()
	source, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, found := strings.Cut(string(source), "func copiedService(ctx context.Context, logger *slog.Logger) (*http.Server, error) {\n")
	body, _, closed := strings.Cut(body, "\n}\n")
	if !found || !closed {
		t.Fatal("example_test.go has no func copiedService")
	}
	return body
}

// withoutMain is main.go's source without its main function and the imports only main uses.
func withoutMain(t *testing.T, source []byte) []byte {
	t.Helper()
	files := gotoken.NewFileSet()
	file, err := parser.ParseFile(files, "main.go", source, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range file.Decls {
		if f, ok := d.(*ast.FuncDecl); ok && f.Name.Name == "main" {
			file.Decls = slices.DeleteFunc(file.Decls, func(other ast.Decl) bool { return other == d })
			file.Comments = slices.DeleteFunc(file.Comments, func(c *ast.CommentGroup) bool { // main's own
				return c.Pos() >= f.Pos() && c.End() <= f.End()
			})
			break
		}
	}
	for _, onlyMains := range []string{"os", "os/signal"} {
		if !deleteImport(file, onlyMains) {
			t.Fatalf("main.go does not import %s", onlyMains)
		}
	}
	var out bytes.Buffer
	if err := format.Node(&out, files, file); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// deleteImport removes an import from a file, and reports whether the file had it.
func deleteImport(file *ast.File, path string) bool {
	quoted, found := strconv.Quote(path), false
	for _, d := range file.Decls {
		if imports, ok := d.(*ast.GenDecl); ok && imports.Tok == gotoken.IMPORT {
			imports.Specs = slices.DeleteFunc(imports.Specs, func(spec ast.Spec) bool {
				this := spec.(*ast.ImportSpec).Path.Value == quoted
				found = found || this
				return this
			})
		}
	}
	file.Imports = slices.DeleteFunc(file.Imports, func(spec *ast.ImportSpec) bool { return spec.Path.Value == quoted })
	return found
}
