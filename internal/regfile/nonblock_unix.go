//go:build unix

package regfile

import "syscall"

// oNonblock makes opening a named pipe return at once.
const oNonblock = syscall.O_NONBLOCK
