package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// A write whose rename went through but whose folder could not be synced is in the file, so it is
// in memory too: the client is told 500 (not confirmed), a read then shows the user, and the next
// create gives the next id, never the same one twice.
//
// The folder's sync fails because the folder may be written (the temporary file, the rename) but
// not read (opening it to sync it). Root may read any folder, so the test asks this thread's file
// checks to be those of user 65534 (setfsuid(2), Linux only) while the write runs.
func TestAWriteNotSyncedAfterItsRenameIsInMemoryToo(t *testing.T) {
	folder, err := os.MkdirTemp("", "users-") // t.TempDir's parent is closed to other users
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(folder)
	path := filepath.Join(folder, "users.json")
	ts := newTestServer(t, "-data", path)
	ts.create(t, "Ann", "ann@example.com")

	runtime.LockOSThread() // setfsuid is per thread: the whole write runs on this one
	defer runtime.UnlockOSThread()
	if os.Getuid() == 0 {
		if err := os.Chown(folder, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		syscall.Setfsuid(65534)
		defer syscall.Setfsuid(0)
	}
	if err := os.Chmod(folder, 0o300); err != nil { // write and search, but no read
		t.Fatal(err)
	}
	defer os.Chmod(folder, 0o700)

	r := httptest.NewRequest("POST", "/api/users", strings.NewReader(`{"name":"Bob","email":"bob@example.com"}`))
	r.Header.Set("Authorization", "Bearer "+writeToken)
	r.Header.Set("Content-Type", "application/json")
	if w := ts.serve(r); w.Code != http.StatusInternalServerError {
		t.Fatalf("POST with a folder that cannot be synced: %d %s, want 500", w.Code, w.Body)
	}
	records := ts.log.records("request failed")
	if len(records) != 1 {
		t.Fatalf("the log says %v, want one record of the cause of the 500", records)
	}
	if cause, _ := records[0]["error"].(string); !strings.Contains(cause, errNotSynced.Error()) {
		t.Errorf("the log gives the cause %q, want %v", cause, errNotSynced)
	}
	os.Chmod(folder, 0o700)

	if users := allUsers(t, ts.store); len(users) != 2 || users[1].Email != "bob@example.com" {
		t.Errorf("the users in memory are %v, want Ann and Bob, as the file holds them", users)
	}
	if cy := ts.create(t, "Cy", "cy@example.com"); cy.ID != 3 {
		t.Errorf("the next create got id %d, want 3", cy.ID)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if contents, err := parseDataFile(data); err != nil || len(contents.users) != 3 {
		t.Errorf("the file holds %v (%v), want Ann, Bob and Cy", contents.users, err)
	}
}
