//go:build linux

package jit

import (
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// The host's signatures are byte for byte what the Node.js worker's
// fileSignature takes of the same files (the same stat, in the same
// layout: a difference would make every file look changed), and a file
// changed in the last two seconds has none.
func TestDiskStateMatchesNode(t *testing.T) {
	node := testenv.Node(t)
	root := t.TempDir()
	old := []string{"definitions/a.sqlx", "definitions/sub/b.js", "includes/c.js"}
	for _, p := range old {
		abs := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte("content of "+p), 0o644); err != nil {
			t.Fatal(err)
		}
		// (An mtime unlike the ctime, so that the two are told apart.)
		past := time.Now().Add(-time.Hour)
		if err := os.Chtimes(abs, past, past); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Duration(racyNanos) + 100*time.Millisecond) // (their ctimes cannot be set back)
	if err := os.WriteFile(filepath.Join(root, "definitions/new.sqlx"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := append(old, "definitions/new.sqlx", "definitions/missing.sqlx")
	disk := diskState(root, paths)
	if want := strings.Join(paths, "\x00") + "\x00"; string(disk.Paths) != want {
		t.Fatalf("paths %q, want %q", disk.Paths, want)
	}
	if len(disk.Signatures) != sigSize*len(paths) {
		t.Fatalf("%d bytes of signatures for %d paths", len(disk.Signatures), len(paths))
	}
	// worker.js's layout: inode, size, mtime and ctime in ns, little-endian.
	script := `for (const p of process.argv.slice(1)) {
		const st = require("fs").statSync(p, { bigint: true });
		const b = Buffer.alloc(32);
		b.writeBigUInt64LE(st.ino, 0); b.writeBigUInt64LE(st.size, 8);
		b.writeBigUInt64LE(st.mtimeNs, 16); b.writeBigUInt64LE(st.ctimeNs, 24);
		console.log(b.toString("hex"));
	}`
	args := []string{"-e", script}
	for _, p := range old {
		args = append(args, filepath.Join(root, p))
	}
	out, err := exec.Command(node, args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(out))
	for i, p := range old {
		got := hex.EncodeToString(disk.Signatures[i*sigSize : (i+1)*sigSize])
		if i >= len(lines) || got != lines[i] {
			t.Errorf("%s: host's signature %s, node's %v", p, got, lines)
		}
	}
	zero := make([]byte, sigSize)
	for i := len(old); i < len(paths); i++ {
		if !bytes.Equal(disk.Signatures[i*sigSize:(i+1)*sigSize], zero) {
			t.Errorf("%s: a signature, want none (just written, or missing)", paths[i])
		}
	}
}
