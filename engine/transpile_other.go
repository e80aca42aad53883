//go:build !unix

package engine

// openNoFollowNoBlock: elsewhere readDiskEntry relies on its Lstat and
// on checking the opened file.
const openNoFollowNoBlock = 0
