//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

// lockFile does nothing on systems without flock (Windows, among others): there, nothing stops a
// second server from using the same journal, and the README says so. The service still builds
// and runs everywhere Go does.
func lockFile(path string) (unlock func(), err error) {
	return func() {}, nil
}
