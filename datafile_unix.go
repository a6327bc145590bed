//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile locks path so that a second server on the same data file refuses to start. The
// operating system lets go of the lock when the process ends, so a crash leaves none behind.
func lockFile(path string) (unlock func(), err error) {
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(file.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		file.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is locked: %w", path, errLockedByAnother)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { file.Close() }, nil
}
