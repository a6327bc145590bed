package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The data file (datafile.go, docs/durability.md): what a person may write in it, what the start
// does to it, what each write leaves in it, and a person's edits while the server runs. The tests
// open the store as -data does, with openStoreAt, and call its methods. A restart, the store
// closed and opened again on the file, shows what the file holds as the server reads it.

// openStoreAt opens the store kept in the data file at path, as -data does, with its log; the
// test's end closes it, if the test has not.
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

// fieldsOf are the fields of a whole user, as a POST or a PUT sets them.
func fieldsOf(name, email string) userFields { return userFields{name: &name, email: &email} }

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
// a mistake is, by line and column as an editor counts them, which member or users are at fault.
// Where encoding/json says what is wrong, only our part of the message is asserted.
func TestParseDataFileSaysWhatToFix(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"empty", "", "the file is empty"},
		{"a syntax error", "{\n  \"users\": [,]\n}", "line 2, column 13: "},
		{"a column counted in characters", "{\"users\": [\n{\"id\": 1, \"name\": \"Zoë Ångström\", \"email\": x}]}",
			"line 2, column 44: "},
		{"cut short", `{"users": [`, "the file ends before its JSON document does"},
		{"something after the document", "{\"users\": []}\n}", "something follows the JSON document"},
		{"not an object", `[]`, "the file is not a JSON object"},
		{"an unknown member", `{"users": [], "admins": []}`, "(the file holds next_id and users, each user id, name and email)"},
		{"an unknown member of a user, named", `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com", "role": "admin"}]}`,
			`"role"`},
		{"a wrong type", "{\n  \"users\": [\n    {\"id\": \"1\", \"name\": \"Ann\", \"email\": \"ann@example.com\"}]}",
			"line 3, column 15: users.id must be a whole number"},
		{"an id left out", `{"users": [{"name": "Ann", "email": "ann@example.com"}]}`, "a user has the id 0"},
		{"an id below 1", `{"users": [{"id": -3, "name": "Ann", "email": "ann@example.com"}]}`, "a user has the id -3"},
		{"an id shared", `{"users": [{"id": 4, "name": "Ann", "email": "ann@example.com"}, {"id": 4, "name": "Bob", "email": "bob@example.com"}]}`,
			"two users have the id 4"},
		{"an e-mail shared in another case", `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}, {"id": 2, "name": "Annie", "email": "ANN@example.com"}]}`,
			"the users 1 and 2 clash: email taken"},
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
	wantText := func(t *testing.T, path, want string) {
		t.Helper()
		if got, err := os.ReadFile(path); string(got) != want {
			t.Errorf("%s holds\n%s\nwant\n%s (%v)", filepath.Base(path), got, want, err)
		}
	}
	t.Run("a missing file is created with no users, for its owner alone", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "users.json")
		openStoreAt(t, path)
		wantText(t, path, "{\n  \"next_id\": 1,\n  \"users\": []\n}\n")
		if info, err := os.Stat(path); err != nil || runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 { // Windows has no such bits
			t.Errorf("the file's mode is %v (%v), want -rw-------: it holds e-mail addresses", info.Mode(), err)
		}
	})
	t.Run("the file is written at start as every write writes it", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "users.json")
		saveAsAnEditorDoes(t, path, `{"users":[{"id":3,"name":"Ann","email":"ann@example.com"}]}`)
		openStoreAt(t, path)
		wantText(t, path, "{\n  \"next_id\": 4,\n  \"users\": [\n    {\n      \"id\": 3,\n"+
			"      \"name\": \"Ann\",\n      \"email\": \"ann@example.com\"\n    }\n  ]\n}\n")
	})
	t.Run("what a crash left mid-write is removed", func(t *testing.T) {
		// A crash's FILE.tmp is removed, never reused: a write to it would keep its mode.
		path := filepath.Join(t.TempDir(), "users.json")
		saveAsAnEditorDoes(t, path, `{"users": []}`)
		if err := os.WriteFile(path+".tmp", []byte(`{"users": [{"id": 1`), 0o644); err != nil {
			t.Fatal(err)
		}
		openStoreAt(t, path)
		if _, err := os.Lstat(path + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the temporary file is still there: %v", err)
		}
		wantText(t, path, "{\n  \"next_id\": 1,\n  \"users\": []\n}\n")
	})
	t.Run("a second server on the file is refused and touches nothing", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("no flock here: docs/durability.md says so")
		}
		path := filepath.Join(t.TempDir(), "users.json")
		first, _ := openStoreAt(t, path)
		if err := os.WriteFile(path+".tmp", []byte("the first server's write in progress"), 0o600); err != nil {
			t.Fatal(err)
		}
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
		target := filepath.Join(t.TempDir(), "users.json")
		saveAsAnEditorDoes(t, target, `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}]}`)
		linkFolder := t.TempDir()
		link := filepath.Join(linkFolder, "users.json")
		if err := os.Symlink(target, link); err != nil {
			t.Skip("no symbolic links here:", err)
		}
		linked, _ := openStoreAt(t, link)
		if err := linked.delete(context.Background(), 1, preconditions{}.onUser); err != nil {
			t.Fatal(err)
		}
		if info, err := os.Lstat(link); err != nil || info.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("the link was replaced (%v)", err)
		}
		wantText(t, target, "{\n  \"next_id\": 2,\n  \"users\": []\n}\n")
		// The temporary file and the lock go beside the target: a rename is atomic in one folder.
		if entries, _ := os.ReadDir(linkFolder); len(entries) != 1 {
			t.Errorf("the link's folder holds %d names, want the link alone", len(entries))
		}
	})
}

// What a write acknowledged is in the file: indented JSON, users in id order, next_id the id the
// next create gets, a final newline (docs/durability.md, "The file"). A restart starts with
// exactly those users, and ids are not given again.
func TestTheFileHoldsEveryAcknowledgedWrite(t *testing.T) {
	ctx, path := context.Background(), filepath.Join(t.TempDir(), "users.json")
	s, _ := openStoreAt(t, path)
	for _, fields := range []userFields{fieldsOf("Ann", "ann@example.com"), fieldsOf("Bob", "bob@example.com"), fieldsOf("Carol", "carol@example.com")} {
		if _, err := s.create(ctx, fields, preconditions{}.onCollection); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.delete(ctx, 3, preconditions{}.onUser); err != nil {
		t.Fatal(err)
	}
	if _, err := s.update(ctx, 1, fieldsOf("Ann Lee", "ann@example.com"), preconditions{}.onUser); err != nil {
		t.Fatal(err)
	}
	want := `{
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
`
	if got, err := os.ReadFile(path); string(got) != want {
		t.Errorf("the file holds\n%s\nwant\n%s (%v)", got, want, err)
	}
	acknowledged := allUsers(t, s)
	s.close()

	restarted, _ := openStoreAt(t, path)
	if users := allUsers(t, restarted); !slices.Equal(users, acknowledged) {
		t.Errorf("after a restart the store holds %v, want %v", users, acknowledged)
	}
	if dee, err := restarted.create(ctx, fieldsOf("Dee", "dee@example.com"), preconditions{}.onCollection); err != nil || dee.ID != 4 {
		t.Errorf("after a restart the next user got the id %d (%v), want 4: id 3 was given before", dee.ID, err)
	}
}

// Ids may be any positive int64. Once 2^63-1 has been given no id is left: a create is
// errNoIDLeft, and the file keeps next_id at 2^63.
func TestTheLastIDIsGivenOnce(t *testing.T) {
	ctx, path := context.Background(), filepath.Join(t.TempDir(), "users.json")
	saveAsAnEditorDoes(t, path, `{"next_id": 9223372036854775807, "users": []}`)
	s, _ := openStoreAt(t, path)

	if last, err := s.create(ctx, fieldsOf("Ann", "ann@example.com"), preconditions{}.onCollection); err != nil || last.ID != math.MaxInt64 {
		t.Fatalf("the user got the id %d (%v), want 2^63-1", last.ID, err)
	}
	if _, err := s.create(ctx, fieldsOf("Bob", "bob@example.com"), preconditions{}.onCollection); !errors.Is(err, errNoIDLeft) {
		t.Errorf("a create once every id was given: %v, want %v", err, errNoIDLeft)
	}
	if users := allUsers(t, s); len(users) != 1 {
		t.Errorf("the store holds %v, want Ann alone", users)
	}
	if file, _ := os.ReadFile(path); !strings.Contains(string(file), `"next_id": 9223372036854775808,`) {
		t.Errorf("the file holds\n%s\nwant next_id 2^63", file)
	}
}

// A write the disk refuses changes nothing in memory, the e-mail index included, and leaves the
// file as it was; once the disk works again, the same write goes through. Here the write fails
// because a folder stands where its temporary file must go.
func TestAFailedWriteChangesNothing(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		write func(s *userStore) error
	}{
		{"create", func(s *userStore) error {
			carol, err := s.create(ctx, fieldsOf("Carol", "carol@example.com"), preconditions{}.onCollection)
			if err == nil && carol.ID != 3 {
				return fmt.Errorf("Carol got the id %d, want 3: the failed create gave no id", carol.ID)
			}
			return err
		}},
		{"update", func(s *userStore) error {
			_, err := s.update(ctx, 1, fieldsOf("Ann", "ann@example.org"), preconditions{}.onUser)
			return err
		}},
		{"delete", func(s *userStore) error { return s.delete(ctx, 1, preconditions{}.onUser) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.json")
			saveAsAnEditorDoes(t, path, `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}, {"id": 2, "name": "Bob", "email": "bob@example.com"}]}`)
			s, _ := openStoreAt(t, path)
			before := allUsers(t, s)
			file, _ := os.ReadFile(path)
			if err := os.Mkdir(path+".tmp", 0o700); err != nil {
				t.Fatal(err)
			}

			if err := tc.write(s); err == nil {
				t.Fatal("the write succeeded on a disk that fails")
			}
			if users := allUsers(t, s); !slices.Equal(users, before) {
				t.Errorf("memory holds %v, want %v, as before the failed write", users, before)
			}
			if _, err := s.create(ctx, fieldsOf("Annie", "ANN@example.com"), preconditions{}.onCollection); !errors.Is(err, errEmailTaken) {
				t.Errorf("Ann's e-mail after the failed write: %v, want it still taken", err)
			}
			if got, _ := os.ReadFile(path); string(got) != string(file) {
				t.Errorf("the file holds\n%s\nwant it as it was\n%s", got, file)
			}

			if err := os.Remove(path + ".tmp"); err != nil {
				t.Fatal(err)
			}
			if err := tc.write(s); err != nil {
				t.Fatalf("the write once the disk works again: %v", err)
			}
			inMemory := allUsers(t, s)
			s.close()
			restarted, _ := openStoreAt(t, path)
			if users := allUsers(t, restarted); !slices.Equal(users, inMemory) {
				t.Errorf("the file holds %v, memory %v", users, inMemory)
			}
		})
	}
}

// Writes take turns, and each rewrites the file from memory as it then is: however many clients
// write at once, the file holds every write that was acknowledged (docs/durability.md).
func TestConcurrentWritesAllReachTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	s, _ := openStoreAt(t, path)
	var wg sync.WaitGroup
	for i := 1; i <= 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.create(context.Background(), fieldsOf("User", fmt.Sprintf("user%d@example.com", i)), preconditions{}.onCollection); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	inMemory := allUsers(t, s)
	s.close()
	restarted, _ := openStoreAt(t, path)
	if users := allUsers(t, restarted); len(users) != 8 || !slices.Equal(users, inMemory) {
		t.Errorf("the file holds %v, want the 8 users in memory: %v", users, inMemory)
	}
}

// A data file the server cannot use is refused at start, naming the file, with what to do
// (printError prints the advice), and is left as it was. main_test.go's
// TestFailedStartPrintsNoToken shows that run then stops with exit status 1 before it listens.
func TestADataFileTheServerCannotUseIsRefused(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		want  []string // FOLDER stands for the file's folder
	}{
		{"no such folder", func(t *testing.T, path string) {
			if err := os.Remove(filepath.Dir(path)); err != nil {
				t.Fatal(err)
			}
		}, []string{"no folder FOLDER", "create the folder"}},
		{"a file that is not JSON", func(t *testing.T, path string) {
			saveAsAnEditorDoes(t, path, `{"users": [}`)
		}, []string{"users.json: line 1, column 12: ", "changed nothing"}},
		{"a file another server holds", func(t *testing.T, path string) {
			if runtime.GOOS == "windows" {
				t.Skip("no flock here: docs/durability.md says so")
			}
			openStoreAt(t, path)
		}, []string{"another server is using this data file", "stop the other server"}},
		{"a lock file it cannot open", func(t *testing.T, path string) {
			if err := os.Mkdir(path+".lock", 0o700); err != nil { // root may write any folder: a folder in the way stops it
				t.Fatal(err)
			}
		}, []string{"users.json.lock", "give the server write access to the folder FOLDER"}},
		{"a file it cannot replace", func(t *testing.T, path string) {
			saveAsAnEditorDoes(t, path, `{"users": []}`)
			// A folder that is not empty where FILE.tmp must go: the start cannot remove it, and
			// cannot write the temporary file there, as in a folder it may not write.
			if err := os.MkdirAll(filepath.Join(path+".tmp", "keep"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, []string{"is a directory", "give the server write access to the folder FOLDER", "mount that folder, not the file alone"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "data", "users.json")
			if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, path)
			before, _ := os.ReadFile(path)

			s, err := openUserStore(path, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err == nil {
				s.close()
				t.Fatal("the store opened")
			}
			var printed strings.Builder
			printError(&printed, err)
			for _, want := range append(tc.want, path) {
				if want = strings.ReplaceAll(want, "FOLDER", filepath.Dir(path)); !strings.Contains(printed.String(), want) {
					t.Errorf("what is printed,\n%s\ndoes not say %q", printed.String(), want)
				}
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
			path := filepath.Join(t.TempDir(), "users.json")
			if tc.file != "" {
				saveAsAnEditorDoes(t, path, tc.file)
			}
			newTestServer(t, "-data", path, "-sample-data").store.close() // the server starts, and stops
			restarted, _ := openStoreAt(t, path)
			if users := allUsers(t, restarted); len(users) != tc.wantUsers {
				t.Errorf("the file holds %d users, want %d", len(users), tc.wantUsers)
			}
		})
	}
}

// Editing the file while the server runs (docs/durability.md, "Editing it while the server runs").
// The tests call the server's look at the file themselves: loadSettledSave, as the ticker does once
// a second, and a write, which looks first.

// A person's save, renamed into place as vim and VS Code save, is loaded by the look after the one
// that saw it, once it has stayed the same: the log names the ids it added, changed and removed.
func TestASettledSaveIsLoaded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	saveAsAnEditorDoes(t, path, `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}, {"id": 2, "name": "Bob", "email": "bob@example.com"}]}`)
	store, log := openStoreAt(t, path)

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
	path := filepath.Join(t.TempDir(), "users.json")
	saveAsAnEditorDoes(t, path, `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}]}`)
	store, log := openStoreAt(t, path)
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	saveAsAnEditorDoes(t, path, strings.Replace(string(written), "Ann", "Bob", 1)) // the same size
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
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
// a delete of a user that does not exist.
func TestALoadIsLoggedWhateverComesOfTheWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	store, log := openStoreAt(t, path)
	saveAsAnEditorDoes(t, path, `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}]}`)
	if err := store.delete(context.Background(), 9, preconditions{}.onUser); !errors.Is(err, errNotFound) {
		t.Fatalf("deleting user 9: %v, want errNotFound", err)
	}
	if len(log.records("data file edit loaded")) != 1 {
		t.Errorf("the log says %q, want the load", log)
	}
}

// A file written in place, in two halves, is never read half-written: each look sees a stamp the
// one before did not, so nothing is loaded, and nothing is logged, until the save has settled.
func TestASaveInProgressIsNeitherLoadedNorLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	saveAsAnEditorDoes(t, path, `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}]}`)
	store, log := openStoreAt(t, path)

	saved := `{"next_id": 3, "users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}, {"id": 2, "name": "Bob", "email": "bob@example.com"}]}`
	for _, written := range []string{saved[:40], saved} { // the first half, as an editor writing in place leaves it for a moment
		if err := os.WriteFile(path, []byte(written), 0o600); err != nil {
			t.Fatal(err)
		}
		store.loadSettledSave()
	}
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
	ctx, path := context.Background(), filepath.Join(t.TempDir(), "users.json")
	saveAsAnEditorDoes(t, path, `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}]}`)
	store, log := openStoreAt(t, path)
	saveAsAnEditorDoes(t, path, `{"users": [
		{"id": 1, "name": "Ann", "email": "ann@example.com"},
		{"id": 2, "name": "Bob", "email": "bob@example.com"}]}`)

	if cy, err := store.create(ctx, fieldsOf("Cy", "cy@example.com"), preconditions{}.onCollection); err != nil || cy.ID != 3 {
		t.Errorf("the create got id %d (%v), want 3, after the saved user 2", cy.ID, err)
	}
	if loaded := log.records("data file edit loaded"); len(loaded) != 1 {
		t.Errorf("the log says %v, want the load as an event of its own", log)
	}
	if _, err := store.create(ctx, fieldsOf("Bobby", "BOB@example.com"), preconditions{}.onCollection); !errors.Is(err, errEmailTaken) {
		t.Errorf("a create with the saved user's e-mail: %v, want errEmailTaken: the write is judged against the save", err)
	}
	store.close()
	restarted, _ := openStoreAt(t, path)
	if users := allUsers(t, restarted); len(users) != 3 {
		t.Errorf("the file holds %v, want Ann, the saved Bob and Cy", users)
	}
}

// A save that fails the start's checks refuses every write, which changes nothing, until another
// save: the person's file is never replaced. The log says why once, then again at most once a
// minute; the users in memory stay as they were, and reads go on.
func TestAWriteIsRefusedWhileASaveCannotBeLoaded(t *testing.T) {
	ctx, path := context.Background(), filepath.Join(t.TempDir(), "users.json")
	saveAsAnEditorDoes(t, path, `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}]}`)
	store, log := openStoreAt(t, path)
	before := allUsers(t, store)
	broken := "{\n  \"users\": [\n    {\"id\": 1, \"name\": \"Ann\", \"email\": \"ann@example.com\"},\n  ]\n}\n"
	saveAsAnEditorDoes(t, path, broken)

	for range 2 {
		store.loadSettledSave()
		if _, err := store.create(ctx, fieldsOf("Bob", "bob@example.com"), preconditions{}.onCollection); !errors.Is(err, errFileEdited) {
			t.Fatalf("a create while the save cannot be loaded: %v, want errFileEdited", err)
		}
	}
	refused := log.records("data file edit not loaded")
	if len(refused) != 1 || !strings.HasPrefix(fmt.Sprint(refused[0]["reason"]), "line 4, column 3: ") {
		t.Fatalf("the log says %v, want one record naming line 4, column 3", refused)
	}
	file, _ := os.ReadFile(path)
	if users := allUsers(t, store); !slices.Equal(users, before) || string(file) != broken {
		t.Errorf("the users are %v and the file %q, want both as they were", users, file)
	}

	store.file.refused.logged = store.file.refused.logged.Add(-time.Minute) // a minute has passed
	store.loadSettledSave()
	if refused := log.records("data file edit not loaded"); len(refused) != 2 {
		t.Errorf("a minute on, the log has %d records of the refusal, want 2", len(refused))
	}

	saveAsAnEditorDoes(t, path, `{"next_id": 2, "users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}]}`)
	if bob, err := store.create(ctx, fieldsOf("Bob", "bob@example.com"), preconditions{}.onCollection); err != nil || bob.ID != 2 {
		t.Errorf("once the file is fixed, the create got id %d (%v), want 2", bob.ID, err)
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
			ctx, path := context.Background(), filepath.Join(t.TempDir(), "users.json")
			store, log := openStoreAt(t, path)
			for _, email := range []string{"ann@example.com", "bob@example.com", "cy@example.com"} { // ids 1, 2, 3
				if _, err := store.create(ctx, fieldsOf("User", email), preconditions{}.onCollection); err != nil {
					t.Fatal(err)
				}
			}
			saveAsAnEditorDoes(t, path, tt.edit)
			store.loadSettledSave()
			store.loadSettledSave()
			store.close() // the server stops, and starts again
			if written := log.records("data file next_id written"); (len(written) == 1) != (tt.nextID == 4) {
				t.Errorf("the log says %v of next_id written, want a record only when the file said less than 4", written)
			}

			restarted, _ := openStoreAt(t, path)
			if next, err := restarted.create(ctx, fieldsOf("Next", "next@example.com"), preconditions{}.onCollection); err != nil || next.ID != tt.nextID {
				t.Errorf("after the restart the next user has id %d (%v), want %d", next.ID, err, tt.nextID)
			}
		})
	}
}

// A save that lands while a write is on its way, after its look and before its rename, is kept:
// the write stops before the rename, leaves no temporary file, and returns errFileEdited.
func TestASaveDuringAWriteIsKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	store, log := openStoreAt(t, path)
	saved := `{"users": [{"id": 7, "name": "Gus", "email": "gus@example.com"}]}`
	saveAsAnEditorDoes(t, path, saved) // after the server's last look, which recorded the file it wrote

	err := store.file.write([]user{{1, "Ann", "ann@example.com"}}, 1)
	if file, _ := os.ReadFile(path); !errors.Is(err, errFileEdited) || string(file) != saved || len(log.records("data file saved during a write")) != 1 {
		t.Errorf("the write returned %v, left %q and logged %q; want errFileEdited, the save and its record", err, file, log)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the temporary file is still there: %v", err)
	}
}

// A data file that is gone is logged and not loaded: the users stay in memory, and the next write
// creates the file again. A path that is no longer a regular file refuses writes.
func TestAFileGoneOrReplacedByAFolder(t *testing.T) {
	ctx, path := context.Background(), filepath.Join(t.TempDir(), "users.json")
	saveAsAnEditorDoes(t, path, `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}]}`)
	store, log := openStoreAt(t, path)
	before := allUsers(t, store)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	store.loadSettledSave()
	store.loadSettledSave()
	if users := allUsers(t, store); !slices.Equal(users, before) || len(log.records("data file missing")) != 1 {
		t.Fatalf("the users are %v, and the log says %v; want Ann, and the file missing", users, log)
	}
	if _, err := store.create(ctx, fieldsOf("Bob", "bob@example.com"), preconditions{}.onCollection); err != nil {
		t.Fatal(err)
	}
	if file, _ := os.ReadFile(path); !strings.Contains(string(file), "ann@example.com") || !strings.Contains(string(file), "bob@example.com") {
		t.Errorf("the file written again holds\n%s\nwant Ann and Bob", file)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := store.create(ctx, fieldsOf("Cy", "cy@example.com"), preconditions{}.onCollection); !errors.Is(err, errFileEdited) {
		t.Errorf("a create with a folder at the file's path: %v, want errFileEdited", err)
	}
}

// The server's own writes are never taken for a person's save: after 20 creates, updates and
// deletes, each followed by a look, and a write the disk failed, a look finds nothing to load.
func TestTheServersOwnWritesAreNeverEdits(t *testing.T) {
	ctx, path := context.Background(), filepath.Join(t.TempDir(), "users.json")
	store, log := openStoreAt(t, path)
	for i := 1; i <= 8; i++ {
		u, err := store.create(ctx, fieldsOf("User", fmt.Sprintf("user%d@example.com", i)), preconditions{}.onCollection)
		if err != nil {
			t.Fatal(err)
		}
		store.loadSettledSave()
		if _, err := store.update(ctx, u.ID, fieldsOf("Renamed", u.Email), preconditions{}.onUser); err != nil {
			t.Fatal(err)
		}
		store.loadSettledSave()
		if i%2 == 0 {
			if err := store.delete(ctx, u.ID, preconditions{}.onUser); err != nil {
				t.Fatal(err)
			}
			store.loadSettledSave()
		}
	}
	if err := os.Mkdir(path+".tmp", 0o700); err != nil { // the next write fails
		t.Fatal(err)
	}
	if _, err := store.create(ctx, fieldsOf("Zed", "zed@example.com"), preconditions{}.onCollection); err == nil {
		t.Fatal("a write with a folder at the temporary file's place went through")
	}
	store.loadSettledSave()
	store.loadSettledSave()
	if log.String() != "" {
		t.Errorf("the server took its own writes for an edit:\n%s", log)
	}
}
