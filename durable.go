package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// How a file is replaced so that a crash or a power loss never leaves half of it: the lesson of
// this file, which every program that keeps data in a file needs.

// errNotSynced is the error of a write that replaced the file but could not sync its folder: the
// file holds the new data, which a power loss may still take back.
var errNotSynced = errors.New("folder not synced after the rename")

// writeDurably replaces the file at path with data so that a crash or a power loss at any moment
// leaves the old file or the new one, whole: data goes to a temporary file beside it (mode 0600:
// it holds e-mail addresses), which is synced, then renamed over path, and the folder is synced,
// since a rename is durable only once its folder is.
//
// beforeRename is given the temporary file, written and synced, just before the rename; an error
// from it stops the write. Any failure before the rename removes the temporary file and leaves
// path as it was. A failure after it, of the folder's sync, is errNotSynced: path holds data.
func writeDurably(path string, data []byte, beforeRename func(written os.FileInfo) error) error {
	temporary := path + ".tmp" // beside path: a rename is atomic only within one folder
	if err := writeSynced(temporary, data); err != nil {
		return err
	}
	written, err := os.Stat(temporary)
	if err == nil {
		err = beforeRename(written)
	}
	if err == nil {
		err = os.Rename(temporary, path)
	}
	if err != nil {
		os.Remove(temporary)
		return err
	}
	if err := syncFolder(filepath.Dir(path)); err != nil {
		return fmt.Errorf("%w: %w", errNotSynced, err)
	}
	return nil
}

// writeSynced creates the file at path with mode 0600, writes data to it and syncs it to the
// disk. A failure once the file is made removes it.
func writeSynced(path string, data []byte) error {
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
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
	if err != nil {
		os.Remove(path)
	}
	return err
}

// syncFolder makes the names in a folder durable: a file just created, or a rename.
func syncFolder(folder string) error {
	if runtime.GOOS == "windows" {
		return nil // Windows refuses to sync a folder (golang/go#75541): docs/durability.md says what that costs
	}
	dir, err := os.Open(folder)
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}
