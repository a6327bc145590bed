package main

import (
	"os"
	"path/filepath"
	"runtime"
)

// How a file is replaced so that a crash or a power loss never leaves half of it: the lesson of
// this file, which every program that keeps data in a file needs.

// writeDurably replaces the file at path with data so that a crash or a power loss at any moment
// leaves the old file or the new one, whole: data goes to a temporary file beside it (mode 0600:
// it holds e-mail addresses), which is synced, then renamed over path, and the folder is synced,
// since a rename is durable only once its folder is. A failure removes the temporary file.
func writeDurably(path, temporary string, data []byte) error {
	file, err := os.OpenFile(temporary, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
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
		err = os.Rename(temporary, path)
	}
	if err != nil {
		os.Remove(temporary)
		return err
	}
	return syncFolder(filepath.Dir(path))
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
