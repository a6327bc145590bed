//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import "io/fs"

// lockFile locks nothing where flock is missing (Windows): the README says so, and the service
// builds.
func lockFile(path string) (unlock func(), err error) {
	return func() {}, nil
}

// isMountPoint reports false where the device of a file is not known: a rename over a file
// mounted on its own then fails at the first write, which is answered 500.
func isMountPoint(path string, info fs.FileInfo) bool { return false }
