package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
)

// precheck looks at a bbolt file's two meta pages before bbolt maps it.
// bbolt trusts the page numbers in them: a truncated file (a full disk, a
// partial copy) makes bbolt.Open read past the end of its memory map, which
// is a fatal fault in the middle of Open that no recover can undo cleanly.
// Checking the meta pages here turns that case into an ordinary error.
//
// The meta page layout is bbolt's file format version 2 (unchanged since
// 2014): a 16-byte page header, then magic, version, page size and flags
// (uint32 each), the root bucket (root page, sequence), the freelist page,
// the high-water page id and the transaction id (uint64 each), and an FNV-1a
// checksum of everything before it. Integers are little-endian on every
// platform dfd supports.
func precheck(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if size == 0 {
		return nil // bbolt initialises an empty file
	}
	// bbolt uses the valid meta page with the higher transaction id; the
	// other one is an older state whose pages may since have been reused,
	// so only the chosen one is checked.
	var (
		chosen   meta
		found    bool
		which    int
		pageSize = int64(os.Getpagesize())
	)
	for i := range 2 {
		off := int64(16)
		if i == 1 {
			off += pageSize
		}
		m, ok := readMeta(f, off)
		if !ok {
			continue
		}
		if i == 0 {
			pageSize = int64(m.pageSize)
		}
		if !found || m.txid > chosen.txid {
			chosen, found, which = m, true, i
		}
	}
	if !found {
		return errors.New("not a bbolt file, or both meta pages are damaged")
	}
	m := chosen
	if m.pageSize == 0 || int64(m.pgid)*int64(m.pageSize) > size {
		return fmt.Errorf("truncated: meta page %d needs %d pages of %d bytes, the file has %d bytes", which, m.pgid, m.pageSize, size)
	}
	if m.root >= m.pgid || m.freelist >= m.pgid && m.freelist != noFreelist {
		return fmt.Errorf("meta page %d points past the end of the file", which)
	}
	// bbolt reads the freelist and root pages as soon as it opens the file
	// (and panics on a bad freelist): check their headers too.
	if m.freelist != noFreelist && !pageIs(f, m.freelist, int64(m.pageSize), freelistPage) {
		return fmt.Errorf("meta page %d: freelist page %d is damaged", which, m.freelist)
	}
	if !pageIs(f, m.root, int64(m.pageSize), branchPage|leafPage) {
		return fmt.Errorf("meta page %d: root page %d is damaged", which, m.root)
	}
	return nil
}

const (
	noFreelist   = ^uint64(0)
	branchPage   = 0x01
	leafPage     = 0x02
	freelistPage = 0x10
)

// pageIs reports whether page id's header names itself and has one of the
// flags.
func pageIs(r io.ReaderAt, id uint64, pageSize int64, flags uint16) bool {
	var b [16]byte
	if _, err := r.ReadAt(b[:], int64(id)*pageSize); err != nil {
		return false
	}
	le := binary.LittleEndian
	return le.Uint64(b[0:]) == id && le.Uint16(b[8:])&flags != 0 && le.Uint16(b[8:])&^flags == 0
}

type meta struct {
	pageSize                   uint32
	root, freelist, pgid, txid uint64
}

func readMeta(r io.ReaderAt, off int64) (meta, bool) {
	var b [64]byte
	if _, err := r.ReadAt(b[:], off); err != nil {
		return meta{}, false
	}
	le := binary.LittleEndian
	if le.Uint32(b[0:]) != 0xED0CDAED || le.Uint32(b[4:]) != 2 {
		return meta{}, false
	}
	h := fnv.New64a()
	h.Write(b[:56])
	if h.Sum64() != le.Uint64(b[56:]) {
		return meta{}, false
	}
	return meta{pageSize: le.Uint32(b[8:]), root: le.Uint64(b[16:]), freelist: le.Uint64(b[32:]), pgid: le.Uint64(b[40:]), txid: le.Uint64(b[48:])}, true
}
