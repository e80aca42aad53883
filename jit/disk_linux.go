package jit

import "syscall"

const haveSignatures = true

// statSignature stats path, following symbolic links as the worker's
// fs.statSync does.
func statSignature(path string) (fileSig, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fileSig{}, false
	}
	return fileSig{
		ino:   st.Ino,
		size:  st.Size,
		mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec,
		ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec,
	}, true
}
