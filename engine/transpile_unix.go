//go:build unix

package engine

import "syscall"

// openNoFollowNoBlock makes opening a transpile-cache entry refuse a
// symbolic link and return at once for a FIFO instead of waiting for a
// writer (regular files ignore O_NONBLOCK).
const openNoFollowNoBlock = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
