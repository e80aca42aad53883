//go:build !unix

package regfile

// oNonblock: elsewhere there are no named pipes in the file system that an
// open would wait on; the Stat and fstat checks still apply.
const oNonblock = 0
