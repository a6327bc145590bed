package main

import (
	"errors"
	"io/fs"
	"os"
	"sync/atomic"
	"testing"
)

// Each step of a durable write can fail: the old file stays whole, the temporary file goes, and
// the store refuses writes from then on.
func TestAFailedWriteKeepsTheOldFile(t *testing.T) {
	for _, step := range []diskStep{stepCreate, stepWrite, stepSync, stepRename} {
		t.Run(step.String(), func(t *testing.T) {
			path := newDataPath(t)
			disk := &failingDisk{step: step}
			store := openFileStore(t, path, disk)
			create(t, store, "Ann", "ann@example.com")
			before, _ := os.ReadFile(path)

			disk.failing.Store(true)
			if _, err := store.create(newFields("Bob", "bob@example.com"), noPrecondition); !errors.Is(err, errDiskFailed) {
				t.Fatalf("create: %v, want the disk's error", err)
			}
			wantFile(t, path, string(before))
			if _, err := os.Stat(path + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the temporary file is still there: %v", err)
			}
			if store.writable() || store.count() != 1 {
				t.Errorf("writable %v with %d users, want not writable with Ann alone", store.writable(), store.count())
			}
		})
	}
}

// A failed fsync of the folder comes after the rename: the new file may or may not survive a power
// loss, so memory keeps what it had, and the store refuses writes.
func TestAFailedFolderSyncRefusesLaterWrites(t *testing.T) {
	disk := &failingDisk{step: stepSyncFolder}
	store := openFileStore(t, newDataPath(t), disk)
	disk.failing.Store(true)
	if _, err := store.create(newFields("Ann", "ann@example.com"), noPrecondition); !errors.Is(err, errDiskFailed) {
		t.Fatalf("create: %v, want the disk's error", err)
	}
	disk.failing.Store(false)
	if _, err := store.create(newFields("Bob", "bob@example.com"), noPrecondition); !errors.Is(err, errNotWritable) {
		t.Errorf("the next create: %v, want %v", err, errNotWritable)
	}
	if store.count() != 0 {
		t.Errorf("%d users in memory, want none", store.count())
	}
}

// A panic between the file and memory, a bug, leaves the store refusing writes too.
func TestAPanicDuringAWriteRefusesLaterWrites(t *testing.T) {
	disk := &failingDisk{step: stepSyncFolder, panics: true}
	store := openFileStore(t, newDataPath(t), disk)
	disk.failing.Store(true)
	func() {
		defer func() { recover() }()
		store.create(newFields("Ann", "ann@example.com"), noPrecondition)
		t.Error("the create did not panic")
	}()
	if store.writable() || store.count() != 0 {
		t.Errorf("writable %v with %d users, want not writable with none", store.writable(), store.count())
	}
}

// A diskStep is a step of a durable write, which a failingDisk makes fail.
type diskStep int

const (
	stepCreate diskStep = iota + 1
	stepWrite
	stepSync
	stepRename
	stepSyncFolder
)

func (s diskStep) String() string {
	return [...]string{stepCreate: "create", stepWrite: "write", stepSync: "sync", stepRename: "rename", stepSyncFolder: "sync the folder"}[s]
}

// errDiskFailed is the error of a failingDisk's step: a full disk, or a dying one.
var errDiskFailed = errors.New("no space left on device")

// failingDisk is the real disk, but once failing is set its step fails, or panics.
type failingDisk struct {
	osDisk
	step    diskStep
	panics  bool
	failing atomic.Bool
}

// fails reports whether step must fail now, or panics.
func (d *failingDisk) fails(step diskStep) bool {
	if !d.failing.Load() || step != d.step {
		return false
	}
	if d.panics {
		panic("the disk panicked at " + step.String())
	}
	return true
}

func (d *failingDisk) create(name string, perm fs.FileMode) (diskFile, error) {
	if d.fails(stepCreate) {
		return nil, errDiskFailed
	}
	file, err := d.osDisk.create(name, perm)
	if err != nil {
		return nil, err
	}
	return failingFile{file, d}, nil
}

func (d *failingDisk) rename(from, to string) error {
	if d.fails(stepRename) {
		return errDiskFailed
	}
	return d.osDisk.rename(from, to)
}

func (d *failingDisk) syncFolder(folder string) error {
	if d.fails(stepSyncFolder) {
		return errDiskFailed
	}
	return d.osDisk.syncFolder(folder)
}

// failingFile is a file of a failingDisk.
type failingFile struct {
	diskFile
	disk *failingDisk
}

func (f failingFile) Write(p []byte) (int, error) {
	if f.disk.fails(stepWrite) {
		return 0, errDiskFailed
	}
	return f.diskFile.Write(p)
}

func (f failingFile) Sync() error {
	if f.disk.fails(stepSync) {
		return errDiskFailed
	}
	return f.diskFile.Sync()
}
