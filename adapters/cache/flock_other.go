//go:build !unix

package cache

import "os"

// tryLockShared is a no-op where flock(2) does not exist: there precheck
// reads the meta pages without holding the lock (bbolt still locks the
// file for every transaction).
func tryLockShared(*os.File) (busy bool, err error) { return false, nil }
