package daemon_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/adapters/drycost"
	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// TestNeovimPlugin drives the Neovim plugin in neovim/ against the real
// `dfd serve` on examples/clickstream, in headless Neovim (Debian's 0.7.2
// on CI; $DFD_TEST_NVIM names more Neovim binaries to run it on, separated
// by the path list separator: testdata/lsp/nvim/current-nvim.sh prints a
// current one). The plugin is installed as plugin managers
// install it: on the runtimepath (lazy.nvim, packer and vim-plug add the
// plugin's directory, here the repository's neovim/ subdirectory), or as a
// package under pack/*/start, and Neovim's own startup sources its
// plugin/dfd.lua. testdata/lsp/nvim/plugin.lua then checks, on the
// runtimepath: the help tags; dfd starting for the project with omnifunc
// and keymaps; :DfdPreview showing the JiT SQL built from the project's
// metadata.json, not following an unsaved edit and following it after
// :write; every code lens of the JiT action and of the view running through
// vim.lsp.codelens.run(); :DfdGraph's tree and <CR>; :DfdLineage of the
// column under the cursor; :DfdStatus; <C-x><C-o> completing a column;
// :DfdRefreshMetadata; :DfdCost saying why there is no figure with the
// snapshot, and showing the figure of a recording BigQuery stand-in with
// metadata source bigquery; a project without metadata.json opening with
// no error and no metadata source; :checkhealth dfd. As a package, the start
// and the preview only.
func TestNeovimPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no editor")
	}
	out, err := exec.Command("bash", filepath.Join(testenv.RepoRoot(), "testdata", "lsp", "nvim", "ensure-nvim.sh")).Output()
	if err != nil {
		t.Fatalf("installing neovim: %v", err)
	}
	nvims := testNeovims(t, strings.TrimSpace(string(out)))
	bin := t.TempDir()
	if err := os.Symlink(dfdBin(t), filepath.Join(bin, "dfd")); err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(testenv.RepoRoot(), "neovim")
	script := filepath.Join(testenv.RepoRoot(), "testdata", "lsp", "nvim", "plugin.lua")
	for i, nv := range nvims {
		nvim := nv.path
		for _, install := range []string{"runtimepath", "package"} {
			if install == "package" && i > 0 {
				continue
			}
			t.Run(nv.version+"/"+install, func(t *testing.T) {
				root := testenv.ProjectCopy(t, filepath.Join(testenv.RepoRoot(), "examples", "clickstream"), testenv.CoreVersion)
				bare := testenv.ProjectCopy(t, filepath.Join(testenv.RepoRoot(), "examples", "clickstream"), testenv.CoreVersion)
				if _, err := os.Stat(filepath.Join(root, "metadata.json")); err != nil {
					t.Fatalf("examples/clickstream has no metadata.json: %v", err)
				}
				if err := os.Remove(filepath.Join(bare, "metadata.json")); err != nil {
					t.Fatal(err)
				}
				// :DfdCost against the recording stand-in: every statement
				// 5 GiB, so the figure the plugin shows is BigQuery's.
				costRoot := testenv.ProjectCopy(t, filepath.Join(testenv.RepoRoot(), "examples", "clickstream"), testenv.CoreVersion)
				const costBytes = 5 << 30
				rec := bqrecorder.Start(t, bqrecorder.Options{Bytes: func(string) int64 { return costBytes }})
				costLabel := "≈ " + drycost.FormatBytes(costBytes) + " · " + drycost.FormatUSD(drycost.Cost(costBytes, drycost.DefaultPricePerTiB))
				dataHome := t.TempDir()
				args := []string{"--headless", "--clean", "--cmd", "set rtp^=" + plugin}
				env := []string{}
				if install == "package" {
					// pack/*/start/* is on 'packpath' only without --clean;
					// the empty XDG_CONFIG_HOME keeps any user config out.
					pack := filepath.Join(dataHome, "nvim", "site", "pack", "dfd", "start")
					if err := os.MkdirAll(pack, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.Symlink(plugin, filepath.Join(pack, "dfd")); err != nil {
						t.Fatal(err)
					}
					args = []string{"--headless"}
					env = append(env, "DFD_ONLY_START=1")
				}
				result := filepath.Join(t.TempDir(), "result.txt")
				cmd := exec.Command(nvim, append(args, "-c", "luafile "+script)...)
				cmd.Env = append(append(os.Environ(), env...), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
					"DFD_PROJECT="+root, "DFD_BARE="+bare, "DFD_COST_PROJECT="+costRoot, "DFD_BQ_ENDPOINT="+rec.URL, "DFD_COST_LABEL="+costLabel, "DFD_PLUGIN="+plugin, "DFD_TMP="+t.TempDir(), "DFD_RESULT="+result,
					"XDG_CONFIG_HOME="+t.TempDir(), "XDG_DATA_HOME="+dataHome, "XDG_STATE_HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir())
				runNeovim(t, cmd, result)
			})
		}
	}
}

// testNeovim is a Neovim binary the editor tests run.
type testNeovim struct {
	path, version string // version: "v0.7.2"
	minor         int
}

// testNeovims returns the Neovim of ensure-nvim.sh (Debian's 0.7.2 on CI)
// and those $DFD_TEST_NVIM names (separated by the path list separator),
// each with its version.
func testNeovims(t *testing.T, debian string) []testNeovim {
	t.Helper()
	paths := []string{debian}
	for _, extra := range filepath.SplitList(os.Getenv("DFD_TEST_NVIM")) {
		if extra != "" {
			paths = append(paths, extra)
		}
	}
	var out []testNeovim
	for _, p := range paths {
		b, err := exec.Command(p, "--version").Output()
		if err != nil {
			t.Fatalf("%s --version: %v", p, err)
		}
		version := strings.TrimPrefix(strings.SplitN(string(b), "\n", 2)[0], "NVIM ")
		var major, minor int
		if _, err := fmt.Sscanf(version, "v%d.%d", &major, &minor); err != nil || major != 0 {
			t.Fatalf("%s --version: cannot read the version of %q", p, version)
		}
		out = append(out, testNeovim{path: p, version: version, minor: minor})
	}
	return out
}

// TestNeovimPluginHandlesEveryLensCommand: every client-side command a
// code lens of dfd names (the "dfd.…" constants of lsp/code_lens.go) has a
// handler in the plugin's lua/dfd/codelens.lua, so vim.lsp.codelens.run()
// never says "Language server does not support command" for one of them
// (TestNeovimPlugin runs the lenses the example shows).
func TestNeovimPluginHandlesEveryLensCommand(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(testenv.RepoRoot(), "lsp", "code_lens.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var commands []string
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil && strings.HasPrefix(s, "dfd.") {
				commands = append(commands, s)
			}
		}
		return true
	})
	if len(commands) < 2 {
		t.Fatalf("found %d dfd.… commands in lsp/code_lens.go: %v", len(commands), commands)
	}
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "neovim", "lua", "dfd", "codelens.lua"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range commands {
		if !strings.Contains(string(b), `["`+c+`"] = function(`) {
			t.Errorf("neovim/lua/dfd/codelens.lua has no handler for the code lens command %s", c)
		}
	}
}
