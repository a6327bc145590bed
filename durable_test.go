package main

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// writeDurably puts the new bytes in place of the old ones, whole, leaves no temporary file, and
// the file it leaves is for its owner alone, whatever the old one's mode: it holds e-mail
// addresses (docs/durability.md, "How a write is made durable").
func TestWriteDurablyReplacesTheFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		old  []byte // nil for no file
	}{
		{"a new file", nil},
		{"a file others could read", []byte("old")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.json")
			if tc.old != nil {
				if err := os.WriteFile(path, tc.old, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := writeDurably(path, []byte("new\n"), goAhead); err != nil {
				t.Fatal(err)
			}
			wantFile(t, path, "new\n")
			wantNoFile(t, path+".tmp")
		})
	}
}

// A write that fails at any step leaves the old file whole, and removes the temporary file it
// made. Each step is made to fail on the real file system.
func TestWriteDurablyFailureKeepsTheOldFile(t *testing.T) {
	tests := []struct {
		name         string
		obstruct     func(t *testing.T, path, temporary string)
		beforeRename func(written os.FileInfo) error
		madeTemp     bool // the write made the temporary file before it failed
	}{
		{"the temporary file cannot be created", func(t *testing.T, path, temporary string) {
			mkdir(t, temporary) // a folder where the temporary file must go
		}, goAhead, false},
		{"the disk is full", func(t *testing.T, path, temporary string) {
			// /dev/full takes no byte: every write to it fails with ENOSPC, as on a full disk.
			if _, err := os.Stat("/dev/full"); err != nil {
				t.Skip("no /dev/full here")
			}
			if err := os.Symlink("/dev/full", temporary); err != nil {
				t.Skip("no symbolic links here:", err)
			}
		}, goAhead, true},
		{"the rename fails", func(t *testing.T, path, temporary string) {
			// A folder that is not empty where the file was: nothing can be renamed over it.
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			mkdir(t, path)
			if err := os.WriteFile(filepath.Join(path, "old"), []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, goAhead, true},
		{"the check before the rename says no", func(t *testing.T, path, temporary string) {},
			func(os.FileInfo) error { return errors.New("no") }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			folder := t.TempDir()
			path, temporary := filepath.Join(folder, "users.json"), filepath.Join(folder, "users.json.tmp")
			if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			tc.obstruct(t, path, temporary)
			old := snapshot(t, folder)

			if err := writeDurably(path, []byte("new"), tc.beforeRename); err == nil {
				t.Fatal("the write succeeded")
			}
			if tc.madeTemp {
				wantNoFile(t, temporary)
				delete(old, "users.json.tmp")
			}
			if now := snapshot(t, folder); !maps.Equal(now, old) {
				t.Errorf("the folder holds %q, want %q, as before the write", now, old)
			}
		})
	}
}

// goAhead is a check before the rename that lets every write go ahead.
func goAhead(os.FileInfo) error { return nil }

// A reader of the file, another program or a person, sees the old document or the new one whole,
// never a part of one: the new one is renamed over the old (rename(2) is atomic).
func TestAReaderSeesTheOldFileOrTheNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	versions := [][]byte{bytes.Repeat([]byte("a"), 64<<10), bytes.Repeat([]byte("b"), 64<<10)}
	if err := writeDurably(path, versions[0], goAhead); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= 20; i++ {
			if err := writeDurably(path, versions[i%2], goAhead); err != nil {
				t.Error(err)
			}
		}
	}()
	for reads := 1; ; reads++ {
		read, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(read, versions[0]) && !bytes.Equal(read, versions[1]) {
			t.Errorf("read %d found %d bytes that are neither version (%v)", reads, len(read), err)
			<-done
			return
		}
		select {
		case <-done:
			return
		default:
		}
	}
}

// snapshot returns every file under folder, by its path from there, with what it holds: "" for a
// folder.
func snapshot(t *testing.T, folder string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(folder, func(path string, entry fs.DirEntry, err error) error {
		if err != nil || path == folder {
			return err
		}
		name, _ := filepath.Rel(folder, path)
		files[name] = ""
		if entry.Type().IsRegular() {
			data, err := os.ReadFile(path)
			files[name] = string(data)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// wantNoFile fails the test if there is anything at path, a symbolic link included.
func wantNoFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s is still there (%v)", filepath.Base(path), err)
	}
}

// mkdir makes a folder at path.
func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
}
