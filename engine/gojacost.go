package engine

import (
	"os"
	"path"
	"path/filepath"
	"time"
)

// What a compile costs in goja beyond what it costs on Node.js, by kind of
// source file, for choosing the engine by work (daemon.PreferNode for
// `dfd compile --engine=auto`, daemon.PreferNodeWarm for `dfd serve`).
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
	ns, sqlxBytes, _ := sourceExcess(root, paths)
	if sqlxBytes > 0 {
		ns += sqlxExcessNsPerByte[SQLXSupport(bundlePath)] * sqlxBytes
	}
	return time.Duration(ns)
}

// What a recompile costs in goja beyond Node.js in a warm daemon, where no
// worker starts: core's JavaScript for each action is the difference that
// grows with the project, faster than linearly (goja's collector). Edit →
// diagnostics after a pause, each engine forced (bench/cmd/lspbench,
// generated projects, core 3.0.62): 5 actions (5 files) 21 ms on goja
// against 16 on Node.js, 12 (12) 47 against 26, 30 (29) 102 against 43,
// 400 (272) 1,543 against 199, 1,000 (661) 2,982 against 480: ≈2 ms a file
// up to 50 files and ≈4 ms beyond. What goja does faster is SQLX, in Go:
// an edit of a 2 MB .sqlx cost ≈0.75 s more on Node.js with 30 other
// actions, ≈0.4 s with 400 (≈0.2–0.35 µs a byte; the table above has 0.35
// cold). Both workers keep what they transpiled, so a recompile
// transpiles the edited file only, and the largest .sqlx is what an edit
// may cost: with 30 actions and a 2 MB .sqlx a recompile took 0.9 s on
// goja and 1.6 on Node.js, with 400 actions 2.3 s and 1.4.
const (
	warmExcessPerFile     = 2 * time.Millisecond
	warmExcessFrom        = 50 // files from which a file costs twice that
	warmNodeSQLXNsPerByte = 350
)

// GojaWarmExcess estimates how much longer a recompile of the source files
// at paths takes on a warm goja worker than on a warm Node.js worker:
// GojaExcess's terms for JavaScript and YAML (JavaScript runs on every
// compile; YAML is parsed again only when edited, so this overstates goja's
// cost, on the side of Node.js),
// warmExcessPerFile a file (twice that from warmExcessFrom files on), and
// the transpiling of the largest .sqlx, which SQLX in Go makes faster on
// goja. Negative when goja is the faster one.
func GojaWarmExcess(root string, paths []string, bundlePath string) time.Duration {
	ns, _, largest := sourceExcess(root, paths)
	ns += float64(warmExcessPerFile) * float64(len(paths)+max(0, len(paths)-warmExcessFrom))
	if largest > 0 {
		if level := SQLXSupport(bundlePath); level == SQLXInGo {
			ns -= warmNodeSQLXNsPerByte * largest
		} else {
			ns += sqlxExcessNsPerByte[level] * largest
		}
	}
	return time.Duration(ns)
}

// sourceExcess sums gojaExcessNsPerByte over the files at paths, and
// returns the bytes of SQLX apart (their cost depends on the core): all of
// them and the largest file's.
func sourceExcess(root string, paths []string) (ns, sqlxBytes, largestSQLX float64) {
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
			largestSQLX = max(largestSQLX, float64(fi.Size()))
			continue
		}
		ns += w * float64(fi.Size())
	}
	return ns, sqlxBytes, largestSQLX
}
