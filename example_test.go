package main

import (
	"bytes"
	"context"
	"go/ast"
	"go/format"
	"go/parser"
	gotoken "go/token"
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

// The copy the README describes builds on its own: every non-test file and web/, main.go without
// its main function and the imports only main uses, and a main of the copier's own that serves the
// API with the README's code.
func TestTheReadmesCopyBuildsOnItsOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a program")
	}
	dir := t.TempDir()
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
		if name == "main.go" {
			source = withoutMain(t, source)
		}
		if err := os.WriteFile(filepath.Join(dir, name), source, 0o600); err != nil {
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
	source, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(source), "func copiedService(ctx context.Context, logger *slog.Logger) (*http.Server, error) {\n")
	body, _, _ = strings.Cut(body, "\n}\n")
	yours := "package main\n\nimport (\n\t\"context\"\n\t\"log/slog\"\n\t\"net/http\"\n\t\"os\"\n)\n\n" +
		"func main() {\n\tserver, err := service(context.Background(), slog.Default())\n\tif err != nil {\n\t\tpanic(err)\n\t}\n" +
		"\tserver.Addr = \"localhost:8080\"\n\tpanic(server.ListenAndServe())\n}\n\n" +
		"func service(ctx context.Context, logger *slog.Logger) (*http.Server, error) {\n" + body + "\n}\n"
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
	for _, onlyMains := range []string{"os", "os/signal", "syscall"} {
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
