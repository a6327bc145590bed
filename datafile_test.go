package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// What a person may write in the data file: the store starts with these users, and gives next the
// id after lastID (docs/durability.md, "The file").
func TestParseDataFileTakesWhatAPersonWrites(t *testing.T) {
	tests := []struct {
		name       string
		file       string
		wantUsers  []user
		wantLastID int64
	}{
		{"no users", `{"users": []}`, nil, 0},
		{"next_id kept", `{"next_id": 14, "users": [{"id": 3, "name": "Ann", "email": "ann@example.com"}]}`,
			[]user{{3, "Ann", "ann@example.com"}}, 13},
		{"next_id left out is one more than the largest id", `{"users": [{"id": 7, "name": "Ann", "email": "ann@example.com"}]}`,
			[]user{{7, "Ann", "ann@example.com"}}, 7},
		{"users in any order", `{"users": [{"id": 2, "name": "Bob", "email": "bob@example.com"}, {"id": 1, "name": "Ann", "email": "ann@example.com"}]}`,
			[]user{{1, "Ann", "ann@example.com"}, {2, "Bob", "bob@example.com"}}, 2},
		{"a byte-order mark skipped", "\uFEFF" + `{"users": []}`, nil, 0},
		{"every id given", `{"next_id": 9223372036854775808, "users": []}`, nil, 9223372036854775807},
		{"the API's field rules not judged again", `{"users": [{"id": 1, "name": " ", "email": "not an address"}]}`,
			[]user{{1, " ", "not an address"}}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseDataFile([]byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.users, tc.wantUsers) || got.lastID != tc.wantLastID {
				t.Errorf("users %v and last id %d, want %v and %d", got.users, got.lastID, tc.wantUsers, tc.wantLastID)
			}
		})
	}
}

// A file the store cannot trust is refused with what to fix, in words a person can act on: where
// a mistake is, by line and column as an editor counts them, and which users are at fault.
func TestParseDataFileSaysWhatToFix(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"empty", "", "the file is empty"},
		{"a syntax error", "{\n  \"users\": [,]\n}", "line 2, column 13: "},
		{"a column counted in characters", "{\"users\": [\n{\"id\": 1, \"name\": \"Zoë Ångström\", \"email\": x}]}",
			"line 2, column 44: "},
		{"cut short", `{"users": [`, "the file ends before its JSON document does"},
		{"something after the document", "{\"users\": []}\n}", "something follows the JSON document"},
		{"not an object", `[]`, "the file is not a JSON object"},
		{"an unknown member", `{"users": [], "admins": []}`, `unknown field "admins"`},
		{"an unknown member of a user", `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com", "role": "admin"}]}`,
			`unknown field "role"`},
		{"a wrong type", "{\n  \"users\": [\n    {\"id\": \"1\", \"name\": \"Ann\", \"email\": \"ann@example.com\"}]}",
			"line 3, column 15: users.id must be a whole number"},
		{"an id left out", `{"users": [{"name": "Ann", "email": "ann@example.com"}]}`, "a user has the id 0"},
		{"an id below 1", `{"users": [{"id": -3, "name": "Ann", "email": "ann@example.com"}]}`, "a user has the id -3"},
		{"an id shared", `{"users": [{"id": 4, "name": "Ann", "email": "ann@example.com"}, {"id": 4, "name": "Bob", "email": "bob@example.com"}]}`,
			"two users have the id 4"},
		{"an e-mail shared in another case", `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}, {"id": 2, "name": "Annie", "email": "ANN@example.com"}]}`,
			`the users 1 and 2 have the same email, "ANN@example.com"`},
		{"next_id not larger than every id", `{"next_id": 5, "users": [{"id": 5, "name": "Ann", "email": "ann@example.com"}]}`,
			"next_id is 5, not above every id (the largest is 5)"},
		{"next_id beyond 2^63", `{"next_id": 9223372036854775809, "users": []}`,
			"next_id is 9223372036854775809, not above every id (the largest is 0) and at most 9223372036854775808"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseDataFile([]byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one that says %q", err, tc.want)
			}
		})
	}
}

// The start with -data: what openUserStore does to the file before the server listens.
func TestOpenDataFile(t *testing.T) {
	t.Run("a missing file is created with no users, for its owner alone", func(t *testing.T) {
		path := dataPath(t)
		openStoreAt(t, path)
		wantFile(t, path, "{\n  \"next_id\": 1,\n  \"users\": []\n}\n")
	})
	t.Run("the file is written at start as every write writes it", func(t *testing.T) {
		path := dataPath(t)
		writeDataFile(t, path, `{"users":[{"id":3,"name":"Ann","email":"ann@example.com"}]}`)
		openStoreAt(t, path)
		wantFile(t, path, "{\n  \"next_id\": 4,\n  \"users\": [\n    {\n      \"id\": 3,\n"+
			"      \"name\": \"Ann\",\n      \"email\": \"ann@example.com\"\n    }\n  ]\n}\n")
	})
	t.Run("what a crash left mid-write is removed", func(t *testing.T) {
		// A crash's FILE.tmp is removed, never reused: a write to it would keep its mode.
		path := dataPath(t)
		writeDataFile(t, path, `{"users": []}`)
		if err := os.WriteFile(path+".tmp", []byte(`{"users": [{"id": 1`), 0o644); err != nil {
			t.Fatal(err)
		}
		openStoreAt(t, path)
		if _, err := os.Lstat(path + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the temporary file is still there: %v", err)
		}
		wantFile(t, path, "{\n  \"next_id\": 1,\n  \"users\": []\n}\n")
	})
	t.Run("a second server on the file is refused and touches nothing", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("no flock here: docs/durability.md says so")
		}
		path := dataPath(t)
		first, _ := openStoreAt(t, path)
		writeDataFile(t, path+".tmp", "the first server's write in progress")
		if second, err := openUserStore(path, slog.New(slog.NewTextHandler(io.Discard, nil))); !errors.Is(err, errLockedByAnother) {
			if second != nil {
				second.close()
			}
			t.Fatalf("a second server on the file: %v, want it refused", err)
		}
		if _, err := os.Stat(path + ".tmp"); err != nil {
			t.Errorf("the second server removed the first one's temporary file: %v", err)
		}
		first.close()
		openStoreAt(t, path) // the file is free once the first server has stopped
	})
	t.Run("a symbolic link is followed and kept", func(t *testing.T) {
		target := dataPath(t)
		writeDataFile(t, target, `{"users": []}`)
		linkFolder := t.TempDir()
		link := filepath.Join(linkFolder, "users.json")
		if err := os.Symlink(target, link); err != nil {
			t.Skip("no symbolic links here:", err)
		}
		linked, _ := openStoreAt(t, link)
		mustCreate(t, linked, "Ann", "ann@example.com")
		if info, err := os.Lstat(link); err != nil || info.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("the link was replaced (%v)", err)
		}
		if contents := parseFileAt(t, target); len(contents.users) != 1 {
			t.Errorf("the target holds %v, want Ann", contents.users)
		}
		// The temporary file and the lock go beside the target: a rename is atomic in one folder.
		if entries, _ := os.ReadDir(linkFolder); len(entries) != 1 {
			t.Errorf("the link's folder holds %d names, want the link alone", len(entries))
		}
	})
}

// What a write acknowledged is in the file: indented JSON, users in id order, next_id the id the
// next create gets, a final newline, mode 0600 (docs/durability.md, "The file"). A restart starts
// with exactly those users, and ids are not given again.
func TestTheFileHoldsEveryAcknowledgedWrite(t *testing.T) {
	path := dataPath(t)
	s, _ := openStoreAt(t, path)
	mustCreate(t, s, "Ann", "ann@example.com")
	mustCreate(t, s, "Bob", "bob@example.com")
	mustCreate(t, s, "Carol", "carol@example.com")
	if err := s.delete(context.Background(), 3, allowAny); err != nil {
		t.Fatal(err)
	}
	if _, err := s.update(context.Background(), 1, fieldsOf("Ann Lee", "ann@example.com"), allowAny); err != nil {
		t.Fatal(err)
	}
	wantFile(t, path, `{
  "next_id": 4,
  "users": [
    {
      "id": 1,
      "name": "Ann Lee",
      "email": "ann@example.com"
    },
    {
      "id": 2,
      "name": "Bob",
      "email": "bob@example.com"
    }
  ]
}
`)
	acknowledged := allUsers(t, s)
	s.close()

	restarted, _ := openStoreAt(t, path)
	if users := allUsers(t, restarted); !slices.Equal(users, acknowledged) {
		t.Errorf("after a restart the store holds %v, want %v", users, acknowledged)
	}
	if dee := mustCreate(t, restarted, "Dee", "dee@example.com"); dee.ID != 4 {
		t.Errorf("after a restart the next user got the id %d, want 4: id 3 was given before", dee.ID)
	}
}

// A data file the server cannot use stops the start before it listens, exit status 1 (run returns
// an error that is not errUsage), naming the file, and printError says what to do, and leaves the file as it was.
func TestAStartOnADataFileItCannotUseStops(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) (path string)
		want  []string // FOLDER stands for the file's folder
	}{
		{"no such folder", func(t *testing.T) string {
			return filepath.Join(t.TempDir(), "missing", "users.json")
		}, []string{"no folder FOLDER", "create the folder"}},
		{"a file that is not JSON", func(t *testing.T) string {
			path := dataPath(t)
			writeDataFile(t, path, `{"users": [}`)
			return path
		}, []string{"users.json: line 1, column 12: ", "changed nothing"}},
		{"a file another server holds", func(t *testing.T) string {
			if runtime.GOOS == "windows" {
				t.Skip("no flock here: docs/durability.md says so")
			}
			path := dataPath(t)
			openStoreAt(t, path)
			return path
		}, []string{"another server is using this data file", "stop the other server"}},
		{"a lock file it cannot open", func(t *testing.T) string {
			path := dataPath(t)
			if err := os.Mkdir(path+".lock", 0o700); err != nil { // root may write any folder: a folder in the way stops it
				t.Fatal(err)
			}
			return path
		}, []string{"users.json.lock", "give the server write access to the folder FOLDER"}},
		{"a file it cannot replace", func(t *testing.T) string {
			path := dataPath(t)
			writeDataFile(t, path, `{"users": []}`)
			// A folder that is not empty where FILE.tmp must go: the start cannot remove it, and
			// cannot write the temporary file there, as in a folder it may not write.
			if err := os.MkdirAll(filepath.Join(path+".tmp", "keep"), 0o700); err != nil {
				t.Fatal(err)
			}
			return path
		}, []string{"is a directory", "give the server write access to the folder FOLDER", "mount that folder, not the file alone"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.setup(t)
			before, _ := os.ReadFile(path)

			// A start that wrongly succeeds stops at once: its context is done already.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			stderr := &logBuffer{}
			err := run(ctx, []string{"users", "-addr", "127.0.0.1:0", "-data", path}, testEnv, io.Discard, stderr)
			if err == nil || errors.Is(err, errUsage) {
				t.Fatalf("run returned %v, want an error of exit status 1", err)
			}
			var printed strings.Builder
			printError(&printed, err)
			for _, want := range append(tc.want, path) {
				if want = strings.ReplaceAll(want, "FOLDER", filepath.Dir(path)); !strings.Contains(printed.String(), want) {
					t.Errorf("what is printed,\n%s\ndoes not say %q", printed.String(), want)
				}
			}
			if strings.Contains(stderr.String(), "listening") {
				t.Errorf("the server listened:\n%s", stderr)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Errorf("the file holds %q, want it as it was: %q", after, before)
			}
		})
	}
}

// -sample-data adds its 12 users only to a store that never had one: with -data, a file that holds
// no user and whose next_id is 1. They are written to the file like any write.
func TestSampleDataOnlyOnAFileThatNeverHadAUser(t *testing.T) {
	tests := []struct {
		name      string
		file      string // "" for no file
		wantUsers int
	}{
		{"no file", "", 12},
		{"no user and next_id 1", `{"next_id": 1, "users": []}`, 12},
		{"no user, but ids given before", `{"next_id": 5, "users": []}`, 0},
		{"a user", `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}]}`, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := dataPath(t)
			if tc.file != "" {
				writeDataFile(t, path, tc.file)
			}
			if err := runProgram(t, testEnv, "-data", path, "-sample-data").stop(); err != nil {
				t.Fatal(err)
			}
			if contents := parseFileAt(t, path); len(contents.users) != tc.wantUsers {
				t.Errorf("the file holds %d users, want %d", len(contents.users), tc.wantUsers)
			}
		})
	}
}

// openStoreAt opens the store kept in the data file at path, as -data does, with its log; the
// test's end closes it, if the test has not. The store's tests use it too.
func openStoreAt(t testing.TB, path string) (*userStore, *logBuffer) {
	t.Helper()
	log := &logBuffer{}
	s, err := openUserStore(path, slog.New(slog.NewJSONHandler(log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s, log
}

// dataPath names a data file in a new temporary folder (the store's tests use it too).
func dataPath(t testing.TB) string { return filepath.Join(t.TempDir(), "users.json") }

// writeDataFile writes text to the file at path, as a person with an editor does.
func writeDataFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// fileText returns what the file at path holds.
func fileText(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// parseFileAt returns the users and the last id that the data file at path holds, as a start
// would read them.
func parseFileAt(t testing.TB, path string) fileContents {
	t.Helper()
	contents, err := parseDataFile([]byte(fileText(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	return contents
}

// wantFile fails the test unless the file at path holds exactly want and only its owner may read
// it: it holds e-mail addresses.
func wantFile(t testing.TB, path, want string) {
	t.Helper()
	if got := fileText(t, path); got != want {
		t.Errorf("%s holds\n%s\nwant\n%s", filepath.Base(path), got, want)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 { // Windows has no such bits
		t.Errorf("%s has the mode %v, want -rw-------", filepath.Base(path), info.Mode())
	}
}

// Editing the file while the server runs (docs/durability.md, "Editing it while the server runs").
// The tests call the server's look at the file themselves: loadSettledSave, as the ticker does once
// a second, and a write, which looks first.

// A person's save, renamed into place as vim and VS Code save, is loaded by the look after the one
// that saw it, once it has stayed the same: the log names the ids it added, changed and removed.
func TestASettledSaveIsLoaded(t *testing.T) {
	path := dataPath(t)
	store, log := openStoreAt(t, path)
	mustCreate(t, store, "Ann", "ann@example.com")
	mustCreate(t, store, "Bob", "bob@example.com")

	saveAsAnEditorDoes(t, path, `{"next_id": 4, "users": [
		{"id": 1, "name": "Ann Lee", "email": "ann@example.com"},
		{"id": 3, "name": "Cy", "email": "cy@example.com"}]}`)
	store.loadSettledSave()
	if users := allUsers(t, store); len(users) != 2 || users[0].Name != "Ann" {
		t.Fatalf("after the first look the users are %v, want them as they were: the save is not settled yet", users)
	}
	store.loadSettledSave()
	want := []user{{1, "Ann Lee", "ann@example.com"}, {3, "Cy", "cy@example.com"}}
	if users := allUsers(t, store); !slices.Equal(users, want) {
		t.Fatalf("after the second look the users are %v, want %v", users, want)
	}
	loaded := log.records("data file edit loaded")
	if len(loaded) != 1 || fmt.Sprint(loaded[0]["added"], loaded[0]["changed"], loaded[0]["removed"]) != "[3] [1] [2]" {
		t.Errorf("the log says %v, want one record: 3 added, 1 changed, 2 removed", loaded)
	}
}

// A file renamed into place is a save even when its time and size are those of the file the
// server wrote: it is another file. Two saves within one look are one edit, loaded once.
func TestSavesAreToldByTimeSizeAndIdentity(t *testing.T) {
	path := dataPath(t)
	store, log := openStoreAt(t, path)
	mustCreate(t, store, "Ann", "ann@example.com")
	written, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	saveAsAnEditorDoes(t, path, strings.Replace(fileText(t, path), "Ann", "Bob", 1)) // the same size
	if err := os.Chtimes(path, written.ModTime(), written.ModTime()); err != nil {
		t.Fatal(err)
	}
	store.loadSettledSave()
	store.loadSettledSave()
	if users := allUsers(t, store); len(users) != 1 || users[0].Name != "Bob" {
		t.Fatalf("the users are %v, want Bob: the save renamed into place", users)
	}

	saveAsAnEditorDoes(t, path, `{"users": [{"id": 1, "name": "Cy", "email": "cy@example.com"}]}`)
	saveAsAnEditorDoes(t, path, `{"users": [{"id": 1, "name": "Dee", "email": "dee@example.com"}]}`)
	store.loadSettledSave()
	store.loadSettledSave()
	if users := allUsers(t, store); len(users) != 1 || users[0].Name != "Dee" || len(log.records("data file edit loaded")) != 2 {
		t.Errorf("the users are %v and the log %q, want Dee, and the two saves loaded as one", users, log)
	}
}

// Loading a save before a write is an event of its own, logged whatever comes of the write: here
// a DELETE of a user that does not exist.
func TestALoadIsLoggedWhateverComesOfTheWrite(t *testing.T) {
	path := dataPath(t)
	store, log := openStoreAt(t, path)
	saveAsAnEditorDoes(t, path, `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}]}`)
	if err := store.delete(context.Background(), 9, func(user) error { return nil }); !errors.Is(err, errNotFound) {
		t.Fatalf("deleting user 9: %v, want errNotFound", err)
	}
	if len(log.records("data file edit loaded")) != 1 {
		t.Errorf("the log says %q, want the load", log)
	}
}

// A file written in place, in two halves, is never read half-written: each look sees a stamp the
// one before did not, so nothing is loaded, and nothing is logged, until the save has settled.
func TestASaveInProgressIsNeitherLoadedNorLogged(t *testing.T) {
	path := dataPath(t)
	store, log := openStoreAt(t, path)
	mustCreate(t, store, "Ann", "ann@example.com")

	saved := `{"next_id": 3, "users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}, {"id": 2, "name": "Bob", "email": "bob@example.com"}]}`
	writeDataFile(t, path, saved[:40]) // the first half, as an editor writing in place leaves it for a moment
	store.loadSettledSave()
	writeDataFile(t, path, saved)
	store.loadSettledSave()
	if users := allUsers(t, store); len(users) != 1 || log.String() != "" {
		t.Fatalf("before the save settled: users %v, log %q; want Ann alone and nothing logged", users, log)
	}
	store.loadSettledSave()
	if users := allUsers(t, store); len(users) != 2 {
		t.Errorf("once the save settled, the users are %v, want Ann and Bob", users)
	}
}

// A write loads a person's save before it is judged, so the save is never overwritten: a create
// just after a user was saved into the file gets the next id after that user's, and the file
// holds both.
func TestAWriteLoadsAPendingSaveFirst(t *testing.T) {
	path := dataPath(t)
	store, log := openStoreAt(t, path)
	mustCreate(t, store, "Ann", "ann@example.com")
	saveAsAnEditorDoes(t, path, `{"users": [
		{"id": 1, "name": "Ann", "email": "ann@example.com"},
		{"id": 2, "name": "Bob", "email": "bob@example.com"}]}`)

	if created := mustCreate(t, store, "Cy", "cy@example.com"); created.ID != 3 {
		t.Errorf("the create got id %d, want 3, after the saved user 2", created.ID)
	}
	if contents := parseFileAt(t, path); len(contents.users) != 3 {
		t.Errorf("the file holds %v, want Ann, the saved Bob and Cy", contents.users)
	}
	if loaded := log.records("data file edit loaded"); len(loaded) != 1 {
		t.Errorf("the log says %v, want the load as an event of its own", log)
	}
	if _, err := store.create(context.Background(), fieldsOf("Bobby", "BOB@example.com"), preconditions{}.onCollection); !errors.Is(err, errEmailTaken) {
		t.Errorf("a create with the saved user's e-mail: %v, want errEmailTaken: the write is judged against the save", err)
	}
}

// A save that fails the start's checks refuses every write, which changes nothing, until another
// save: the person's file is never replaced. The log says why once, then again at most once a
// minute; the users in memory stay as they were, and reads go on.
func TestAWriteIsRefusedWhileASaveCannotBeLoaded(t *testing.T) {
	path := dataPath(t)
	store, log := openStoreAt(t, path)
	ann := mustCreate(t, store, "Ann", "ann@example.com")
	broken := "{\n  \"users\": [\n    {\"id\": 1, \"name\": \"Ann\", \"email\": \"ann@example.com\"},\n  ]\n}\n"
	saveAsAnEditorDoes(t, path, broken)

	for range 2 {
		store.loadSettledSave()
		if _, err := store.create(context.Background(), fieldsOf("Bob", "bob@example.com"), preconditions{}.onCollection); !errors.Is(err, errFileEdited) {
			t.Fatalf("a create while the save cannot be loaded: %v, want errFileEdited", err)
		}
	}
	refused := log.records("data file edit not loaded")
	if len(refused) != 1 || !strings.HasPrefix(fmt.Sprint(refused[0]["reason"]), "line 4, column 3: ") {
		t.Fatalf("the log says %v, want one record naming line 4, column 3", refused)
	}
	if users := allUsers(t, store); !slices.Equal(users, []user{ann}) || fileText(t, path) != broken {
		t.Errorf("the users are %v and the file %q, want both as they were", users, fileText(t, path))
	}

	store.file.refused.logged = store.file.refused.logged.Add(-time.Minute) // a minute has passed
	store.loadSettledSave()
	if refused := log.records("data file edit not loaded"); len(refused) != 2 {
		t.Errorf("a minute on, the log has %d records of the refusal, want 2", len(refused))
	}

	saveAsAnEditorDoes(t, path, `{"next_id": 2, "users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}]}`)
	if created := mustCreate(t, store, "Bob", "bob@example.com"); created.ID != 2 {
		t.Errorf("once the file is fixed, the create got id %d, want 2", created.ID)
	}
}

// Ids are never reused, not even after an edit and a restart: when a loaded save says a next id
// lower than the server's (next_id left out, as in {"users": []}), the server writes its own back.
func TestAnEditGivesNoIDTwiceAcrossARestart(t *testing.T) {
	for _, tt := range []struct {
		name, edit string
		nextID     int64
	}{
		{"every user removed, next_id left out", `{"users": []}`, 4},
		{"a user kept, next_id lowered", `{"next_id": 2, "users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}]}`, 4},
		{"a larger id", `{"users": [{"id": 10, "name": "Ten", "email": "ten@example.com"}]}`, 11},
		{"a larger next_id", `{"next_id": 20, "users": []}`, 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := dataPath(t)
			store, log := openStoreAt(t, path)
			for _, email := range []string{"ann@example.com", "bob@example.com", "cy@example.com"} { // ids 1, 2, 3
				mustCreate(t, store, "User", email)
			}
			saveAsAnEditorDoes(t, path, tt.edit)
			store.loadSettledSave()
			store.loadSettledSave()
			store.close() // the server stops, and starts again
			if written := log.records("data file next_id written"); (len(written) == 1) != (tt.nextID == 4) {
				t.Errorf("the log says %v of next_id written, want a record only when the file said less than 4", written)
			}

			restarted, _ := openStoreAt(t, path)
			if created := mustCreate(t, restarted, "Next", "next@example.com"); created.ID != tt.nextID {
				t.Errorf("after the restart the next user has id %d, want %d", created.ID, tt.nextID)
			}
		})
	}
}

// A save that lands while a write is on its way, after its look and before its rename, is kept:
// the write stops before the rename, leaves no temporary file, and returns errFileEdited.
func TestASaveDuringAWriteIsKept(t *testing.T) {
	path := dataPath(t)
	store, log := openStoreAt(t, path)
	saved := `{"users": [{"id": 7, "name": "Gus", "email": "gus@example.com"}]}`
	saveAsAnEditorDoes(t, path, saved) // after the server's last look, which recorded the file it wrote

	err := store.file.write([]user{{1, "Ann", "ann@example.com"}}, 1)
	if !errors.Is(err, errFileEdited) || fileText(t, path) != saved || len(log.records("data file saved during a write")) != 1 {
		t.Errorf("the write returned %v, left %q and logged %q; want errFileEdited, the save and its record", err, fileText(t, path), log)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the temporary file is still there: %v", err)
	}
}

// A data file that is gone is logged and not loaded: the users stay in memory, and the next write
// creates the file again. A path that is no longer a regular file refuses writes.
func TestAFileGoneOrReplacedByAFolder(t *testing.T) {
	path := dataPath(t)
	store, log := openStoreAt(t, path)
	ann := mustCreate(t, store, "Ann", "ann@example.com")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	store.loadSettledSave()
	store.loadSettledSave()
	if users := allUsers(t, store); !slices.Equal(users, []user{ann}) || len(log.records("data file missing")) != 1 {
		t.Fatalf("the users are %v, and the log says %v; want Ann, and the file missing", users, log)
	}
	mustCreate(t, store, "Bob", "bob@example.com")
	if contents := parseFileAt(t, path); len(contents.users) != 2 {
		t.Errorf("the file written again holds %v, want Ann and Bob", contents.users)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := store.create(context.Background(), fieldsOf("Cy", "cy@example.com"), preconditions{}.onCollection); !errors.Is(err, errFileEdited) {
		t.Errorf("a create with a folder at the file's path: %v, want errFileEdited", err)
	}
}

// The server's own writes are never taken for a person's save: after creates, updates, deletes
// and a write the disk failed, a look finds nothing to load.
func TestTheServersOwnWritesAreNeverEdits(t *testing.T) {
	path := dataPath(t)
	store, log := openStoreAt(t, path)
	keep := func(user) error { return nil }
	for i := 1; i <= 8; i++ {
		u := mustCreate(t, store, "User", fmt.Sprintf("user%d@example.com", i))
		store.loadSettledSave()
		name := "Renamed"
		if _, err := store.update(context.Background(), u.ID, userFields{name: &name}, keep); err != nil {
			t.Fatal(err)
		}
		store.loadSettledSave()
		if i%2 == 0 {
			if err := store.delete(context.Background(), u.ID, keep); err != nil {
				t.Fatal(err)
			}
			store.loadSettledSave()
		}
	}
	if err := os.Mkdir(path+".tmp", 0o700); err != nil { // the next write fails
		t.Fatal(err)
	}
	if _, err := store.create(context.Background(), fieldsOf("Zed", "zed@example.com"), preconditions{}.onCollection); err == nil {
		t.Fatal("a write with a folder at the temporary file's place went through")
	}
	store.loadSettledSave()
	store.loadSettledSave()
	if log.String() != "" {
		t.Errorf("the server took its own writes for an edit:\n%s", log)
	}
}

// saveAsAnEditorDoes saves text at path as vim and VS Code save a file: written to a new file
// beside it, then renamed over it.
func saveAsAnEditorDoes(t testing.TB, path, text string) {
	t.Helper()
	saved := path + ".swp"
	if err := os.WriteFile(saved, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(saved, path); err != nil {
		t.Fatal(err)
	}
}
