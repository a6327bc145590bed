package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestParseDataFileTakesWhatAPersonMayWrite(t *testing.T) {
	tests := []struct {
		name       string
		file       string
		wantUsers  []user
		wantLastID int64
	}{
		{"no users", `{"users": []}`, nil, 0},
		{"next_id kept", `{"next_id": 14, "users": [{"id": 3, "name": "Ann", "email": "ann@example.com"}]}`,
			[]user{{3, "Ann", "ann@example.com"}}, 13},
		{"next_id left out is one past the largest id", `{"users": [{"id": 7, "name": "Ann", "email": "a@x.org"}]}`,
			[]user{{7, "Ann", "a@x.org"}}, 7},
		{"members in any order", `{"users": [{"email": "a@x.org", "name": "Ann", "id": 1}], "next_id": 2}`,
			[]user{{1, "Ann", "a@x.org"}}, 1},
		{"users sorted by id", `{"users": [{"id": 2, "name": "Bob", "email": "b@x.org"}, {"id": 1, "name": "Ann", "email": "a@x.org"}]}`,
			[]user{{1, "Ann", "a@x.org"}, {2, "Bob", "b@x.org"}}, 2},
		{"a byte-order mark skipped", "\uFEFF" + `{"users": []}`, nil, 0},
		{"every id given", `{"next_id": 9223372036854775808, "users": []}`, nil, 9223372036854775807},
		{"field rules not judged again", `{"users": [{"id": 1, "name": " ", "email": "not an address"}]}`,
			[]user{{1, " ", "not an address"}}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseDataFile([]byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !equalUsers(got.users, tc.wantUsers) || got.lastID != tc.wantLastID {
				t.Errorf("got %v and last id %d, want %v and %d", got.users, got.lastID, tc.wantUsers, tc.wantLastID)
			}
		})
	}
}

func TestParseDataFileSaysWhatToFix(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"empty", "", `the file is empty: write {"users": []} in it, or delete it`},
		{"journal of version 1", `{"op":"put","id":1,"name":"Ann","email":"a@x.org"}` + "\n", `journal of version 1 (JSON Lines)`},
		{"syntax error", "{\n  \"users\": [,]\n}", "line 2, column 13: this is not valid JSON"},
		{"cut short", `{"users": [`, "the file ends before its JSON document does"},
		{"something after the document", "{\"users\": []}\n}", "line 2, column 1: something follows the JSON document"},
		{"not an object", `[]`, "the file must be a JSON object"},
		{"unknown member", `{"users": [], "Users": []}`, `the file has a member "Users": it holds only users and next_id`},
		{"no users", `{"next_id": 1}`, `the file has no member "users"`},
		{"users not an array", `{"users": {}}`, `"users" must be an array of users`},
		{"user not an object", `{"users": [1]}`, "user 1 of the list must be a JSON object"},
		{"member named in another case", `{"users": [{"ID": 1, "name": "A", "email": "a@x.org"}]}`, `user 1 of the list has a member "ID"`},
		{"member twice", `{"users": [{"id": 1, "id": 2, "name": "A", "email": "a@x.org"}]}`, `user 1 of the list has the member "id" twice`},
		{"member missing", `{"users": [{"id": 1, "name": "A"}]}`, "user 1 of the list has no email"},
		{"id zero", `{"users": [{"id": 0, "name": "A", "email": "a@x.org"}]}`, "user 1 of the list: id must be a whole number from 1 to 9223372036854775807, not 0"},
		{"id a fraction", `{"users": [{"id": 1.5, "name": "A", "email": "a@x.org"}]}`, "not 1.5"},
		{"id a string", `{"users": [{"id": "1", "name": "A", "email": "a@x.org"}]}`, `not "1"`},
		{"id too large", `{"users": [{"id": 9223372036854775808, "name": "A", "email": "a@x.org"}]}`, "not 9223372036854775808"},
		{"name not a string", `{"users": [{"id": 1, "name": 5, "email": "a@x.org"}]}`, "user 1 of the list: name must be a string, not 5"},
		{"ids shared", `{"users": [{"id": 4, "name": "A", "email": "a@x.org"}, {"id": 4, "name": "B", "email": "b@x.org"}]}`,
			"users 1 and 2 of the list both have id 4"},
		{"e-mails shared in another case", `{"users": [{"id": 1, "name": "A", "email": "a@x.org"}, {"id": 2, "name": "B", "email": "A@X.org"}]}`,
			`users 1 and 2 of the list (ids 1 and 2) have the same email "A@X.org"`},
		{"next_id not past every id", `{"next_id": 3, "users": [{"id": 5, "name": "A", "email": "a@x.org"}]}`,
			"next_id is 3, but it must be larger than every id, and user 1 of the list has id 5"},
		{"next_id zero", `{"next_id": 0, "users": []}`, "next_id must be a whole number from 1 to 9223372036854775808, not 0"},
		{"next_id too large", `{"next_id": 9223372036854775809, "users": []}`, "not 9223372036854775809"},
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

func TestOpenDataFile(t *testing.T) {
	t.Run("creates a missing file with no users, for its owner alone", func(t *testing.T) {
		path := newDataPath(t)
		openFileStore(t, path, osDisk{})
		wantFile(t, path, "{\n  \"next_id\": 1,\n  \"users\": []\n}\n")
		if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("mode %v (%v), want -rw-------", info.Mode(), err)
		}
	})
	t.Run("refuses a folder that does not exist", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "missing", "users.json")
		_, err := openUserStore(path, osDisk{})
		wantErrorSays(t, err, "there is no folder "+filepath.Dir(path))
	})
	t.Run("refuses a file another server holds", func(t *testing.T) {
		path := newDataPath(t)
		openFileStore(t, path, osDisk{})
		_, err := openUserStore(path, osDisk{})
		wantErrorSays(t, err, "another server is using this data file")
	})
	t.Run("refuses a broken file by name and leaves it", func(t *testing.T) {
		path := newDataPath(t)
		writeFile(t, path, `{"users": [}`)
		_, err := openUserStore(path, osDisk{})
		wantErrorSays(t, err, "-data "+path+": line 1, column 12")
		wantFile(t, path, `{"users": [}`)
	})
	t.Run("removes what a crash left mid-write", func(t *testing.T) {
		path := newDataPath(t)
		writeFile(t, path+".tmp", `{"users": [{"id": 1`)
		openFileStore(t, path, osDisk{})
		if _, err := os.Stat(path + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the temporary file is still there: %v", err)
		}
	})
	t.Run("keeps the permission bits", func(t *testing.T) {
		path := newDataPath(t)
		writeFile(t, path, `{"users": []}`)
		if err := os.Chmod(path, 0o640); err != nil {
			t.Fatal(err)
		}
		store := openFileStore(t, path, osDisk{})
		create(t, store, "Ann", "ann@example.com")
		if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o640 {
			t.Errorf("mode %v (%v), want -rw-r-----", info.Mode(), err)
		}
	})
	t.Run("writes through a symbolic link to its target", func(t *testing.T) {
		target := newDataPath(t)
		writeFile(t, target, `{"users": []}`)
		link := filepath.Join(t.TempDir(), "link.json")
		if err := os.Symlink(target, link); err != nil {
			t.Skip("no symbolic links here:", err)
		}
		create(t, openFileStore(t, link, osDisk{}), "Ann", "ann@example.com")
		if info, err := os.Lstat(link); err != nil || info.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("the link was replaced: %v %v", info.Mode(), err)
		}
		wantFile(t, target, "{\n  \"next_id\": 2,\n  \"users\": [\n    {\n      \"id\": 1,\n      \"name\": \"Ann\",\n      \"email\": \"ann@example.com\"\n    }\n  ]\n}\n")
	})
}

func TestAPersonsEditsStart(t *testing.T) {
	path := newDataPath(t)
	store := openFileStore(t, path, osDisk{})
	create(t, store, "Ann", "ann@example.com")
	create(t, store, "Bob", "bob@example.com")
	store.close()

	// A person stops the server, fixes a name, adds a user, and leaves next_id out.
	writeFile(t, path, `{"users": [
		{"id": 1, "name": "Ann Lee", "email": "ann@example.com"},
		{"id": 2, "name": "Bob", "email": "bob@example.com"},
		{"id": 5, "name": "Eve & Co", "email": "eve@example.com"}]}`)
	store = openFileStore(t, path, osDisk{})
	if ann, _ := store.get(1); ann.Name != "Ann Lee" {
		t.Errorf("user 1 is %v, want Ann Lee", ann)
	}
	if created := create(t, store, "Carol", "carol@example.com"); created.ID != 6 {
		t.Errorf("the next id is %d, want 6, one past the largest", created.ID)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), `"Eve & Co"`) {
		t.Errorf("the file has %s, want & as it was written", data)
	}
}

// wantFile fails the test unless the file at path holds exactly want.
func wantFile(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s holds\n%s\nwant\n%s", filepath.Base(path), got, want)
	}
}

// writeFile writes data to the file at path, as a person with an editor does.
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// wantErrorSays fails the test unless err says want.
func wantErrorSays(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one that says %q", err, want)
	}
}

// The README's jq command turns a journal of version 1 into the document of version 2: the users
// as they were, and next_id past every id ever given, deleted ones too.
func TestReadmeConvertsAVersion1Journal(t *testing.T) {
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("jq is not installed (apt-get install jq)")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	command := regexp.MustCompile(`(?m)^\$ jq -s '(.*)' users\.jsonl > users\.json$`).FindSubmatch(readme)
	if command == nil {
		t.Fatal("the README has no jq command that converts users.jsonl")
	}
	for _, tc := range []struct{ name, journal, want string }{
		{"as written", `{"op":"put","id":1,"name":"Ann","email":"ann@example.com"}
{"op":"put","id":2,"name":"Bob","email":"bob@example.com"}
{"op":"put","id":1,"name":"Ann Lee","email":"ann@example.com"}
{"op":"delete","id":2}
`, `{"next_id":3,"users":[{"id":1,"name":"Ann Lee","email":"ann@example.com"}]}`},
		{"compacted", `{"op":"next_id","id":9}
{"op":"put","id":4,"name":"Dee","email":"dee@example.com"}
`, `{"next_id":9,"users":[{"id":4,"name":"Dee","email":"dee@example.com"}]}`},
		{"empty", "", `{"next_id":1,"users":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(jq, "-c", "-s", string(command[1]))
			cmd.Stdin = strings.NewReader(tc.journal)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("jq: %v", err)
			}
			if got := strings.TrimSpace(string(out)); got != tc.want {
				t.Errorf("jq gives\n%s\nwant\n%s", got, tc.want)
			}
			if _, err := parseDataFile(out); err != nil {
				t.Errorf("version 2 refuses what jq gives: %v", err)
			}
		})
	}
}

// BenchmarkOpen10000 is what -data costs at start with 10,000 users: the file read, checked and
// put in the map. go test -run '^$' -bench Open10000
func BenchmarkOpen10000(b *testing.B) {
	path := writeSeedFile(b, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		store, err := openUserStore(path, osDisk{})
		if err != nil {
			b.Fatal(err)
		}
		store.close()
	}
}

// writeSeedFile writes a data file of n seed users ("Seed User N", seedN@bench.test) in a
// temporary folder, as bench/durable.sh does, and returns its path.
func writeSeedFile(b *testing.B, n int) string {
	b.Helper()
	document := fileDocument{NextID: uint64(n) + 1}
	for i := 1; i <= n; i++ {
		document.Users = append(document.Users, user{ID: int64(i), Name: "Seed User " + strconv.Itoa(i), Email: "seed" + strconv.Itoa(i) + "@bench.test"})
	}
	data, err := json.Marshal(document)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "users.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkDurableWrite is one PATCH-like write of a store kept in a file of 100, 1,000 and 10,000
// users: the whole document encoded, written to the temporary file, fsync'd, renamed, and the
// folder fsync'd. go test -run '^$' -bench DurableWrite
func BenchmarkDurableWrite(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			store := openFileStore(b, writeSeedFile(b, n), osDisk{})
			name := "Renamed User"
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := store.update(int64(i%n+1), userFields{name: &name}, allowAny); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// openFileStore opens the store kept in the data file at path, as -data does, on a disk: osDisk{},
// or a failingDisk (datafile_test.go). The test's end closes it, if the test has not.
func openFileStore(t testing.TB, path string, d disk) *userStore {
	t.Helper()
	store, err := openUserStore(path, d)
	if err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	t.Cleanup(store.close) // a second close does nothing
	return store
}

// newDataPath names a data file in a new temporary folder.
func newDataPath(t testing.TB) string { return filepath.Join(t.TempDir(), "users.json") }
