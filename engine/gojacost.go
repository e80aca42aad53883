package engine

import (
	"os"
	"path"
	"path/filepath"
	"time"
)

// What a compile costs in goja beyond what it costs on Node.js, by kind of
// source file, for choosing the engine by work (daemon.PreferNode, used by
// `dfd serve` and `dfd compile --engine=auto`).
//
// Measured as the CPU time (user + system) of cold `dfd compile --json`
// with the transpile cache off, on each engine, median of 3–5 runs (core
// 3.0.62; a generated 30-action project plus one big file,
// bench/projectgen.BigSQLX for SQLX), minus the same for the 30-action
// project alone (≈0.35 s on either engine). On 2 shared cores, so ±30 %
// (YAML gave 1.8 and 2.9 µs/byte in two sessions):
//
//	kind                               goja          Node.js       goja − Node
//	.sqlx (2, 10 MB), SQLX in Go       ≈0.15 µs/byte ≈0.5 µs/byte  < 0: goja is faster
//	.sqlx (2 MB), only the lexer in Go ≈3.9 µs/byte                ≈3.5 µs/byte
//	.sqlx (2 MB), core's own code      ≈45 µs/byte                 ≈44 µs/byte
//	.yaml (1 MB; js-yaml)              ≈2.1–3.0      ≈0.2–0.3      ≈2.5 µs/byte
//	.js (2 MB of data)                 ≈0.22         ≈0.03         ≈0.2 µs/byte
//	.js (10 MB of data)                ≈0.6          ≈0.07         ≈0.5 µs/byte
//
// JavaScript grows faster than its size: above the goja heap's 200 MiB soft
// limit (jit.DefaultSoftMemoryLimit) the collector runs all the time, and a
// 10 MB array literal gets there (3 s of CPU with --memory-limit=0, 6–9 s
// with the default). Other kinds (.sql, .ipynb, .md, JSON) compile with
// regexes and JSON in Go, about as fast as on Node. The figures are of
// compiling the file from scratch: the transpile cache spares unchanged
// files most of that on later compiles (though not the running of
// JavaScript).
var gojaExcessNsPerByte = map[string]float64{
	".yaml": 2500,
	".yml":  2500,
	".js":   200,
}

var sqlxExcessNsPerByte = map[SQLXLevel]float64{
	SQLXInGo:      0,
	SQLXLexerInGo: 3500,
	SQLXInCore:    44000,
}

// GojaExcess estimates how much longer the source files at paths (relative
// to root) take to compile in goja than on Node.js, with the core bundle
// at bundlePath: the sum over the files of their size times the measured
// excess per byte of their kind. Files that cannot be read count nothing.
func GojaExcess(root string, paths []string, bundlePath string) time.Duration {
	var ns, sqlxBytes float64
	for _, p := range paths {
		ext := path.Ext(p)
		w, ok := gojaExcessNsPerByte[ext]
		if !ok && ext != ".sqlx" {
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if ext == ".sqlx" {
			sqlxBytes += float64(fi.Size())
			continue
		}
		ns += w * float64(fi.Size())
	}
	if sqlxBytes > 0 {
		ns += sqlxExcessNsPerByte[SQLXSupport(bundlePath)] * sqlxBytes
	}
	return time.Duration(ns)
}
