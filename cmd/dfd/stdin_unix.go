//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
)

// interruptibleStdin is stdin as a file whose blocked Read a Close ends,
// when stdin is a pipe or a socket (what an editor gives its server). Go
// reads a blocking descriptor in a plain system call that nothing can
// interrupt, so after the client's "exit" — with the client still holding
// its end of the pipe open, as editors do until the process is gone — the
// server's shutdown waited its full 2 s grace for a read that would never
// return, on every exit. In non-blocking mode Go's poller owns the reads
// and Close wakes them. A terminal is left alone: the mode would outlive
// the process and confuse the shell that shares it.
func interruptibleStdin(in io.Reader) io.Reader {
	f, ok := in.(*os.File)
	if !ok {
		return in
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return in
	}
	fd := int(f.Fd()) // Fd puts the descriptor back in blocking mode; SetNonblock undoes that
	if err := syscall.SetNonblock(fd, true); err != nil {
		return in
	}
	return os.NewFile(uintptr(fd), f.Name()) // non-blocking: a pollable file
}
