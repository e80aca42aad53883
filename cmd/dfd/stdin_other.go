//go:build !unix

package main

import "io"

// interruptibleStdin is stdin as it is where dfd knows no way to make a
// blocked read interruptible (see stdin_unix.go).
func interruptibleStdin(in io.Reader) io.Reader { return in }
