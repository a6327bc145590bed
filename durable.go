package main

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// How a file is replaced so that a crash or a power loss never leaves half of it: the lesson of
// this file, which every program that keeps data in a file needs.

// writeDurably replaces the file at path with data so that a crash or a power loss at any moment
// leaves the old file or the new one, whole: data goes to a temporary file, which is synced, then
// renamed over path, and the folder is synced, since a rename is durable only once its folder is.
// A failure removes the temporary file.
func writeDurably(d disk, path, temporary string, data []byte, perm fs.FileMode) error {
	file, err := d.create(temporary, perm)
	if err != nil {
		return err
	}
	_, err = file.Write(data)
	if err == nil {
		err = file.Sync()
	}
	if closeErr := file.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = d.rename(temporary, path)
	}
	if err != nil {
		d.remove(temporary)
		return err
	}
	return d.syncFolder(filepath.Dir(path))
}

// disk is what writing the data file needs of the file system. osDisk is the real one; tests give
// the store one that fails at the step they test.
type disk interface {
	create(name string, perm fs.FileMode) (diskFile, error)
	rename(from, to string) error
	syncFolder(folder string) error
	remove(name string) error
}

// diskFile is what writing needs of an open file, as *os.File has it.
type diskFile interface {
	io.Writer
	Sync() error
	Close() error
}

// osDisk is the file system of the operating system.
type osDisk struct{}

// create creates or empties the file name, with exactly the permission bits perm.
func (osDisk) create(name string, perm fs.FileMode) (diskFile, error) {
	file, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return nil, err
	}
	if err := file.Chmod(perm); err != nil { // the umask may have taken some away
		file.Close()
		return nil, err
	}
	return file, nil
}

func (osDisk) rename(from, to string) error { return os.Rename(from, to) }

func (osDisk) remove(name string) error { return os.Remove(name) }

// syncFolder makes the names in a folder durable: a file just created, or a rename.
func (osDisk) syncFolder(folder string) error {
	if runtime.GOOS == "windows" {
		return nil // Windows cannot sync a folder; NTFS journals the rename itself
	}
	dir, err := os.Open(folder)
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}
