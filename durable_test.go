package main

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// writeDurably (durable.go) on the real file system. Each test passes the check before the rename
// that lets every write go ahead, goAhead, unless it is the check that says no.

// writeDurably puts the new bytes in place of the old ones, whole, leaves no temporary file, and
// the file it leaves is for its owner alone, whatever the old one's mode: it holds e-mail
// addresses (docs/durability.md, "How a write is made durable").
func TestWriteDurablyReplacesTheFile(t *testing.T) {
	goAhead := func(os.FileInfo) error { return nil }
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
			if data, err := os.ReadFile(path); err != nil || string(data) != "new\n" {
				t.Errorf("the file holds %q (%v), want %q", data, err, "new\n")
			}
			if info, err := os.Stat(path); err != nil || runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 { // Windows has no such bits
				t.Errorf("the file's mode is %v (%v), want -rw-------", info.Mode(), err)
			}
			if _, err := os.Lstat(path + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the temporary file is still there (%v)", err)
			}
		})
	}
}

// A write that fails at any step leaves the old file whole, and removes the temporary file it
// made: the folder is as it was. Each step is made to fail on the real file system.
func TestWriteDurablyFailureKeepsTheOldFile(t *testing.T) {
	goAhead := func(os.FileInfo) error { return nil }
	tests := []struct {
		name         string
		obstruct     func(t *testing.T, path, temporary string)
		beforeRename func(written os.FileInfo) error
		madeTemp     bool // the write made (or opened) the temporary file before it failed
	}{
		{"the temporary file cannot be created", func(t *testing.T, path, temporary string) {
			if err := os.Mkdir(temporary, 0o700); err != nil { // a folder where the temporary file must go
				t.Fatal(err)
			}
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
			if err := os.MkdirAll(filepath.Join(path, "old"), 0o700); err != nil {
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
			// snapshot is every name under the folder, with what it holds: "" for a folder or a link.
			snapshot := func() map[string]string {
				files := map[string]string{}
				err := filepath.WalkDir(folder, func(name string, entry fs.DirEntry, err error) error {
					if err != nil || name == folder {
						return err
					}
					files[name] = ""
					if entry.Type().IsRegular() { // a link is not followed: it may name /dev/full
						data, err := os.ReadFile(name)
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
			before := snapshot()

			if err := writeDurably(path, []byte("new"), tc.beforeRename); err == nil {
				t.Fatal("the write succeeded")
			}
			if tc.madeTemp {
				delete(before, temporary)
			}
			if now := snapshot(); !maps.Equal(now, before) {
				t.Errorf("the folder holds %q, want %q, as before the write", now, before)
			}
		})
	}
}

// A reader of the file, another program or a person, sees the old document or the new one whole,
// never a part of one: the new one is renamed over the old (rename(2) is atomic).
func TestAReaderSeesTheOldFileOrTheNew(t *testing.T) {
	goAhead := func(os.FileInfo) error { return nil }
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
