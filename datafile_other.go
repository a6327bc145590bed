//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

// lockFile locks nothing where flock is missing (Windows, Solaris): docs/durability.md says so, and the
// service builds.
func lockFile(path string) (unlock func(), err error) {
	return func() {}, nil
}
