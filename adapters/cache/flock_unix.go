//go:build unix

package cache

import (
	"errors"
	"os"
	"syscall"
)

// tryLockShared takes a shared flock on f without waiting: the same lock
// bbolt takes for a read-only open, so holding it keeps writers out while
// precheck reads the file. busy reports that a writer holds it.
func tryLockShared(f *os.File) (busy bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR) {
		return true, nil
	}
	return false, err
}
