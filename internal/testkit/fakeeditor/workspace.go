package fakeeditor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/tools/txtar"
)

// WriteTxtar writes the files of a txtar archive under dir. Names are
// slash-separated and relative. The archive's comment is ignored.
func WriteTxtar(dir string, archive []byte) error {
	a := txtar.Parse(archive)
	for _, f := range a.Files {
		name := filepath.FromSlash(strings.TrimSpace(f.Name))
		if name == "" || filepath.IsAbs(name) || strings.HasPrefix(filepath.Clean(name), "..") {
			return fmt.Errorf("txtar: bad file name %q", f.Name)
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
