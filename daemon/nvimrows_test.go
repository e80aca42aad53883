package daemon_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/bqtest"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// TestNeovimRows runs :DfdRows of the plugin in neovim/ in Neovim
// (CI's is Debian's 0.7.2) against dfd serve with the BigQuery emulator
// as its metadata source (testdata/lsp/nvim/rows.lua): a view's query rows
// and a declared table's rows open in a scratch buffer, with the columns'
// types, NULL and nested values.
func TestNeovimRows(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no editor")
	}
	script := filepath.Join(testenv.RepoRoot(), "testdata", "lsp", "nvim")
	out, err := exec.Command("bash", filepath.Join(script, "ensure-nvim.sh")).Output()
	if err != nil {
		t.Fatalf("installing neovim: %v", err)
	}
	nvim := strings.TrimSpace(string(out))
	emu, err := bqtest.Start(context.Background(), bqtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emu.Stop)
	ctx := context.Background()
	if err := emu.Client(t).Dataset("shop").Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		"CREATE TABLE shop.orders (id INT64, name STRING)",
		"INSERT INTO shop.orders (id, name) VALUES (1, 'Ann'), (2, 'Bo')",
	} {
		job, err := emu.Client(t).Query(sql).Run(ctx)
		if err == nil {
			_, err = job.Wait(ctx)
		}
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	bin := dfdBin(t) // before XDG_CACHE_HOME moves: go build uses the Go build cache under it
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml":  "defaultProject: test\ndefaultDataset: shop\ndefaultLocation: US\n",
		"definitions/orders.sqlx": "config { type: \"declaration\" }\n",
		"definitions/order_view.sqlx": "config { type: \"view\" }\n" +
			"SELECT id, name, STRUCT(name AS n) AS buyer, [id, id + 1] AS ids, CAST(NULL AS STRING) AS nothing\n" +
			"FROM ${ref(\"orders\")}\nORDER BY id\n",
	})
	root, err = filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	result := filepath.Join(t.TempDir(), "result.txt")
	// Bounded: a Neovim that never quits fails here rather than hang.
	nctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	path := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(path, "dfd")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(nctx, nvim, "--headless", "--clean", "--cmd", "set rtp^="+filepath.Join(testenv.RepoRoot(), "neovim"),
		"-c", "luafile "+filepath.Join(script, "rows.lua"))
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(), "PATH="+path+string(os.PathListSeparator)+os.Getenv("PATH"),
		"DFD_PROJECT="+root, "DFD_ENDPOINT="+emu.URL, "DFD_RESULT="+result,
		"XDG_CONFIG_HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())
	runNeovim(t, cmd, result)
}
