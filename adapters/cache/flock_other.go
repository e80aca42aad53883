//go:build !unix

package cache

import "os"

// tryLockShared is a no-op where flock(2) does not exist: precheck then
// reads without the lock, and a writer committing at that moment can make
// it report damage that is not there (see openStore, which checks twice).
func tryLockShared(*os.File) (busy bool, err error) { return false, nil }
