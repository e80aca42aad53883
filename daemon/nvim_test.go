package daemon_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testenv"
)

// TestNeovim drives `dfd serve` from a real LSP client: headless Neovim
// (installed by testdata/lsp/nvim/ensure-nvim.sh when missing) runs
// testdata/lsp/nvim/test.lua, which checks diagnostics, definition, hover,
// completion and dfd/preview of a JiT action and reports
// "N passed, N failed".
func TestNeovim(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no editor")
	}
	script := filepath.Join(testenv.RepoRoot(), "testdata", "lsp", "nvim")
	out, err := exec.Command("bash", filepath.Join(script, "ensure-nvim.sh")).Output()
	if err != nil {
		t.Fatalf("installing neovim: %v", err)
	}
	nvim := strings.TrimSpace(string(out))
	root := jitWorkspace(t)
	if err := os.WriteFile(filepath.Join(root, "definitions", "broken.sqlx"), []byte("config { type: \"view\" }\nSELECT * FROM ${ref(\"no_such_table\")}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	result := filepath.Join(t.TempDir(), "result.txt")
	cmd := exec.Command(nvim, "--headless", "--clean", "-c", "luafile "+filepath.Join(script, "test.lua"))
	cmd.Env = append(os.Environ(), "DFD_BIN="+dfdBin(t), "DFD_PROJECT="+root, "DFD_SNAPSHOT="+snapshotPath(), "DFD_RESULT="+result,
		"XDG_CONFIG_HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir())
	cmd.Dir = t.TempDir()
	combined, err := cmd.CombinedOutput()
	report, rerr := os.ReadFile(result)
	if rerr != nil {
		t.Fatalf("neovim wrote no report (err %v):\n%s", err, combined)
	}
	t.Logf("neovim report:\n%s", report)
	m := regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed$`).FindStringSubmatch(string(report))
	if m == nil {
		t.Fatalf("no summary line in the report")
	}
	if m[2] != "0" || m[1] == "0" {
		t.Errorf("neovim: %s passed, %s failed", m[1], m[2])
	}
}

// TestNeovimConfigs loads each Neovim configuration of the README
// (neovim/dfd.lua: vim.lsp.start, or vim.lsp.start_client on 0.7;
// neovim/lspconfig.lua: an nvim-lspconfig custom server) into headless
// Neovim, with `dfd` on PATH as a user has it, and checks through
// testdata/lsp/nvim/configs.lua that opening a project's files starts one
// dfd client with the project as root, that its diagnostics and settings
// arrive, and that a file outside any project starts nothing. Nothing of
// Neovim is supplied: CI's Neovim is Debian's 0.7.2, so the configurations
// must work there as they are (configs.lua supplies only nvim-lspconfig,
// which cannot be installed). dfd.lua is loaded twice: by the script, and
// as a user installs it — copied to ~/.config/nvim/plugin/dfd.lua and read
// by Neovim's own startup (no --clean).
func TestNeovimConfigs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no editor")
	}
	script := filepath.Join(testenv.RepoRoot(), "testdata", "lsp", "nvim")
	out, err := exec.Command("bash", filepath.Join(script, "ensure-nvim.sh")).Output()
	if err != nil {
		t.Fatalf("installing neovim: %v", err)
	}
	nvim := strings.TrimSpace(string(out))
	bin := t.TempDir()
	if err := os.Symlink(dfdBin(t), filepath.Join(bin, "dfd")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, config string
		asPlugin     bool // installed in the user's plugin directory, read at startup
	}{
		{"dfd.lua", "dfd.lua", false},
		{"lspconfig.lua", "lspconfig.lua", false},
		{"dfd.lua as plugin/dfd.lua", "dfd.lua", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := jitWorkspace(t)
			if err := os.WriteFile(filepath.Join(root, "definitions", "broken.sqlx"), []byte("config { type: \"view\" }\nSELECT * FROM ${ref(\"no_such_table\")}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			snap, err := os.ReadFile(snapshotPath())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "metadata.json"), snap, 0o644); err != nil {
				t.Fatal(err)
			}
			outside := filepath.Join(t.TempDir(), "notes.js")
			if err := os.WriteFile(outside, []byte("// not a Dataform project\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			result := filepath.Join(t.TempDir(), "result.txt")
			configHome := t.TempDir()
			config := filepath.Join(testenv.RepoRoot(), "neovim", tc.config)
			args := []string{"--headless", "--clean", "-c", "luafile " + filepath.Join(script, "configs.lua")}
			if tc.asPlugin {
				b, err := os.ReadFile(config)
				if err != nil {
					t.Fatal(err)
				}
				plugin := filepath.Join(configHome, "nvim", "plugin", "dfd.lua")
				if err := os.MkdirAll(filepath.Dir(plugin), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(plugin, b, 0o644); err != nil {
					t.Fatal(err)
				}
				config = "" // Neovim loads it
				args = []string{"--headless", "-c", "luafile " + filepath.Join(script, "configs.lua")}
			}
			cmd := exec.Command(nvim, args...)
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
				"DFD_CONFIG="+config, "DFD_PROJECT="+root, "DFD_OUTSIDE="+outside,
				"DFD_RESULT="+result, "XDG_CONFIG_HOME="+configHome, "XDG_DATA_HOME="+t.TempDir(),
				"XDG_STATE_HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir())
			cmd.Dir = t.TempDir()
			combined, err := cmd.CombinedOutput()
			report, rerr := os.ReadFile(result)
			if rerr != nil {
				t.Fatalf("neovim wrote no report (err %v):\n%s", err, combined)
			}
			t.Logf("neovim report:\n%s", report)
			m := regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed$`).FindStringSubmatch(string(report))
			if m == nil {
				t.Fatalf("no summary line in the report")
			}
			if m[2] != "0" || m[1] == "0" {
				t.Errorf("neovim: %s passed, %s failed", m[1], m[2])
			}
		})
	}
}

// TestReadmeNeovimConfigs keeps the README's Neovim section and the files
// the headless test loads the same text.
func TestReadmeNeovimConfigs(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, config := range []string{"dfd.lua", "lspconfig.lua"} {
		b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "neovim", config))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(readme), "```lua\n"+string(b)+"```\n") {
			t.Errorf("README.md does not quote neovim/%s verbatim in a ```lua block", config)
		}
	}
}
