package blackbox

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A person edits the data file while the program runs, saving as vim and VS Code save (a new file
// renamed over the old one): the program serves the edit, refuses a broken one and goes on, and
// never takes its own writes for an edit (docs/durability.md, "Editing it while the server runs").

// saveAsAnEditorDoes writes text to a new file beside path and renames it over path.
func saveAsAnEditorDoes(t *testing.T, path, text string) {
	t.Helper()
	saved := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".swp")
	if err := os.WriteFile(saved, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(saved, path); err != nil {
		t.Fatal(err)
	}
}

func TestAnEditIsServedAndIDsStayAboveEveryIDGiven(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	p := start(t, testTokens, "-data", path, "-log-format", "json")
	send := newClient(t, p.url)
	ann, _, cy := send.seed(t) // ids 1, 2 and 3
	if status, answer := send("DELETE", userPath(cy.ID), "", asWriter); status != http.StatusNoContent {
		t.Fatalf("deleting Cy: %d %s", status, answer)
	}

	// Ann changed, Bob removed, Dee added; next_id left out, so the file's is 5 and the server's 4.
	saveAsAnEditorDoes(t, path, fmt.Sprintf(`{"users": [
  {"id": %d, "name": "Ann Lee", "email": "ann@example.com"},
  {"id": 4, "name": "Dee", "email": "dee@example.com"}
]}`, ann.ID))
	want := `{"data":[{"id":1,"name":"Ann Lee","email":"ann@example.com"},{"id":4,"name":"Dee","email":"dee@example.com"}],"total":2}`
	eventually(t, 10*time.Second, "the list shows the edit", func() bool { return send.users(t) == want })
	loaded := p.records("the data file was edited: the edit is loaded")
	if len(loaded) != 1 || loaded[0]["added"] != 1.0 || loaded[0]["changed"] != 1.0 || loaded[0]["removed"] != 1.0 {
		t.Errorf("the log says %v, want one record of 1 added, 1 changed and 1 removed", loaded)
	}
	if next := send.create(t, "Eve", "eve@example.com"); next.ID != 5 {
		t.Errorf("the next user got id %d, want 5: above Dee's 4", next.ID)
	}
}

func TestABrokenEditIsLoggedAndTheProgramGoesOn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	p := start(t, testTokens, "-data", path, "-log-format", "json")
	send := newClient(t, p.url)
	send.seed(t)
	before := send.users(t)

	saveAsAnEditorDoes(t, path, "{\n  \"users\": [\n    {\"id\": 1, \"name\": \"Ann\"},\n  ]\n}\n")
	const notLoaded = "the data file was edited, but the edit is not loaded: the server goes on with the users it had, and its next write replaces the file"
	eventually(t, 10*time.Second, "the log names the broken edit", func() bool { return len(p.records(notLoaded)) > 0 })
	records := p.records(notLoaded)
	if message, _ := records[0]["error"].(string); !strings.HasPrefix(message, "line 4, column 3:") {
		t.Errorf("the log says %q, want the problem at line 4, column 3", message)
	}
	if after := send.users(t); after != before {
		t.Errorf("the users changed:\nbefore %s\nafter  %s", before, after)
	}
	send.create(t, "Dee", "dee@example.com") // the next write replaces the broken file
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), "dee@example.com") {
		t.Errorf("the file after the next write holds %s (%v), want the four users", data, err)
	}
	if records := p.records(notLoaded); len(records) != 1 {
		t.Errorf("the log named the broken edit %d times, want once", len(records))
	}
}

func TestTheProgramsOwnWritesAreNeverEdits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	p := start(t, testTokens, "-data", path, "-log-format", "json")
	send := newClient(t, p.url)
	started := time.Now()
	for i := 0; i < 1000 || time.Since(started) < 3*time.Second; i++ { // writes across at least three looks at the file
		send.create(t, "User", fmt.Sprintf("user%d@example.com", i))
	}
	if strings.Contains(p.log.String(), "data file was edited") {
		t.Errorf("the program took its own writes for an edit:\n%s", p.log)
	}
}
