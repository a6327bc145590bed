//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on path, creating it if needed, so that a second server pointed
// at the same journal refuses to start. The kernel releases the lock when the process ends, however
// it ends, so a crash leaves no stale lock behind.
func lockFile(path string) (unlock func(), err error) {
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(file.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		file.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is locked: another server is using this journal", path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { file.Close() }, nil
}
