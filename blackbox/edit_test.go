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

// A person edits the data file while the program runs, saving in an editor's two ways: a new file
// renamed over the old one (vim, VS Code), and the file written in place. The program serves each
// save, loads a save before any write that follows it, refuses writes while a save cannot be
// loaded, never takes its own writes for an edit, and never gives an id twice, across a restart
// too (docs/durability.md, "Editing it while the server runs").

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

// An edit that removes every user and leaves next_id out is served, and the ids given before it
// are not given again, not even after a restart.
func TestAnEditIsServedAndNoIDIsGivenTwiceAcrossARestart(t *testing.T) {
	t.Parallel() // it waits for the program's look at the file, once a second
	path := filepath.Join(t.TempDir(), "users.json")
	p := start(t, testTokens, "-data", path)
	send := newClient(t, p.url)
	send.seed(t) // ids 1, 2 and 3

	saveAsAnEditorDoes(t, path, `{"users": []}`)
	eventually(t, "the list shows the edit", func() bool { return send.users(t) == `{"data":[],"total":0}` })
	// The record is written before the list shows the edit, and reaches the test's copy of the log
	// through a pipe: soon, but not at once.
	eventually(t, "the log records the edit", func() bool { return len(p.log.records("data file edit loaded")) > 0 })
	loaded := p.log.records("data file edit loaded")
	if len(loaded) != 1 || fmt.Sprint(loaded[0]["removed"]) != "[1 2 3]" {
		t.Errorf("the log says %v, want one record of users 1, 2 and 3 removed", loaded)
	}
	if status := p.stop(); status != 0 {
		t.Fatalf("the program stopped with status %d:\n%s", status, p.log)
	}

	restarted := start(t, testTokens, "-data", path)
	if next := newClient(t, restarted.url).create(t, "Dee", "dee@example.com"); next.ID != 4 {
		t.Errorf("after the restart the next user got id %d, want 4", next.ID)
	}
}

// A user saved into the file, renamed into place, is loaded by the very next write: a create at
// once gets the id after the saved user's, and the file keeps both.
func TestAWriteRightAfterASaveKeepsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	p := start(t, testTokens, "-data", path)
	send := newClient(t, p.url)
	send.create(t, "Ann", "ann@example.com") // id 1

	saveAsAnEditorDoes(t, path, `{"users": [
  {"id": 1, "name": "Ann", "email": "ann@example.com"},
  {"id": 2, "name": "Bob", "email": "bob@example.com"}
]}`)
	if cy := send.create(t, "Cy", "cy@example.com"); cy.ID != 3 {
		t.Errorf("the create right after the save got id %d, want 3", cy.ID)
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), "bob@example.com") || !strings.Contains(string(data), "cy@example.com") {
		t.Errorf("the file holds %s (%v), want the saved Bob and Cy", data, err)
	}
}

// A file written in place, in two halves with a pause between them, is never loaded or logged
// half-written; a write that comes in the pause is refused (503) and changes nothing, and once the
// save is whole it is served, and the next write keeps it.
func TestASaveWrittenInPlaceIsNeverReadHalfWritten(t *testing.T) {
	t.Parallel() // it waits for the program's look at the file, once a second
	path := filepath.Join(t.TempDir(), "users.json")
	p := start(t, testTokens, "-data", path)
	send := newClient(t, p.url)
	send.create(t, "Ann", "ann@example.com")

	saved := `{"next_id": 3, "users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}, {"id": 2, "name": "Bob", "email": "bob@example.com"}]}`
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if _, err := file.WriteString(saved[:60]); err != nil {
		t.Fatal(err)
	}
	if status, answer := send("POST", "/api/users", `{"name":"Cy","email":"cy@example.com"}`, headers(asWriter, asJSON)); status != http.StatusServiceUnavailable {
		t.Errorf("a POST while the file is half written: %d %s, want 503", status, answer)
	}
	time.Sleep(300 * time.Millisecond) // the editor's pause, shorter than the program's look
	if _, err := file.WriteString(saved[60:]); err != nil {
		t.Fatal(err)
	}
	file.Close()

	eventually(t, "the list shows the save", func() bool { return strings.Contains(send.users(t), "bob@example.com") })
	if cy := send.create(t, "Cy", "cy@example.com"); cy.ID != 3 {
		t.Errorf("the next create got id %d, want 3", cy.ID)
	}
	for _, record := range p.log.records("data file edit not loaded") {
		if record["reason"] != "the file ends before its JSON document does" {
			t.Errorf("the log refused the save for %v, want only the POST in the pause to have seen it half written", record["reason"])
		}
	}
}

// A save that cannot be loaded is logged with where it is broken; reads go on with the users as
// they were, writes are refused (503) and the person's file is left as it is, until it is fixed.
func TestABrokenSaveRefusesWritesUntilItIsFixed(t *testing.T) {
	t.Parallel() // it waits for the program's look at the file, once a second
	path := filepath.Join(t.TempDir(), "users.json")
	p := start(t, testTokens, "-data", path)
	send := newClient(t, p.url)
	send.seed(t)
	before := send.users(t)

	broken := "{\n  \"users\": [\n    {\"id\": 1, \"name\": \"Ann\"},\n  ]\n}\n"
	saveAsAnEditorDoes(t, path, broken)
	eventually(t, "the log names the broken save", func() bool { return len(p.log.records("data file edit not loaded")) > 0 })
	if reason, _ := p.log.records("data file edit not loaded")[0]["reason"].(string); !strings.HasPrefix(reason, "line 4, column 3:") {
		t.Errorf("the log says %q, want the problem at line 4, column 3", reason)
	}
	if after := send.users(t); after != before {
		t.Errorf("the users changed:\nbefore %s\nafter  %s", before, after)
	}
	if status, answer := send("POST", "/api/users", `{"name":"Dee","email":"dee@example.com"}`, headers(asWriter, asJSON)); status != http.StatusServiceUnavailable {
		t.Errorf("a POST while the save cannot be loaded: %d %s, want 503", status, answer)
	}
	if data, _ := os.ReadFile(path); string(data) != broken {
		t.Errorf("the file holds %q, want the person's save as it is", data)
	}

	saveAsAnEditorDoes(t, path, `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}]}`)
	if dee := send.create(t, "Dee", "dee@example.com"); dee.ID != 4 {
		t.Errorf("once the file is fixed, the create got id %d, want 4", dee.ID)
	}
}

// Writes across several looks at the file, a thousand at least, are never taken for an edit.
func TestTheProgramsOwnWritesAreNeverEdits(t *testing.T) {
	t.Parallel() // it waits, mostly on the disk
	path := filepath.Join(t.TempDir(), "users.json")
	p := start(t, testTokens, "-data", path)
	send := newClient(t, p.url)
	started := time.Now()
	for i := 0; i < 1000 || time.Since(started) < 3*time.Second; i++ { // writes across at least three looks at the file
		send.create(t, "User", fmt.Sprintf("user%d@example.com", i))
	}
	if status := p.stop(); status != 0 { // the whole log, to its last record
		t.Fatalf("the program stopped with status %d:\n%s", status, p.log)
	}
	if strings.Contains(p.log.String(), "data file") {
		t.Errorf("the program took its own writes for an edit:\n%s", p.log)
	}
}
