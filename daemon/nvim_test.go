package daemon_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
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
	runNeovim(t, cmd, result)
}

// TestNeovimConfigs loads each Neovim configuration of docs/editors.md
// with the plugin in neovim/ on the runtimepath (Neovim's startup sources
// its plugin/dfd.lua) and `dfd` on PATH as a user has it: the plugin
// alone, neovim/examples/setup.lua (every option at its default) and
// neovim/examples/lspconfig.lua (an nvim-lspconfig custom server, with the
// plugin's autostart off), and checks through testdata/lsp/nvim/configs.lua
// that opening a project's files starts one dfd client with the project
// as root, that its diagnostics and settings (the project's metadata.json
// as the snapshot) arrive, and that a file outside any project starts
// nothing. Nothing of Neovim is supplied: CI's Neovim is Debian's 0.7.2,
// so the configurations must work there as they are (configs.lua
// supplies only nvim-lspconfig, which cannot be installed).
func TestNeovimConfigs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no editor")
	}
	script := filepath.Join(testenv.RepoRoot(), "testdata", "lsp", "nvim")
	out, err := exec.Command("bash", filepath.Join(script, "ensure-nvim.sh")).Output()
	if err != nil {
		t.Fatalf("installing neovim: %v", err)
	}
	bin := t.TempDir()
	if err := os.Symlink(dfdBin(t), filepath.Join(bin, "dfd")); err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(testenv.RepoRoot(), "neovim")
	for _, nv := range testNeovims(t, strings.TrimSpace(string(out))) {
		for _, tc := range []struct {
			name, config string
			minMinor     int // the Neovim 0.x it needs
		}{
			{"plugin alone", "", 7},
			{"examples/setup.lua", filepath.Join(plugin, "examples", "setup.lua"), 7},
			{"examples/lspconfig.lua", filepath.Join(plugin, "examples", "lspconfig.lua"), 7},
			{"examples/enable.lua", filepath.Join(plugin, "examples", "enable.lua"), 11},
		} {
			if nv.minor < tc.minMinor {
				continue
			}
			nvim := nv.path
			t.Run(nv.version+"/"+tc.name, func(t *testing.T) {
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
				cmd := exec.Command(nvim, "--headless", "--clean", "--cmd", "set rtp^="+plugin, "-c", "luafile "+filepath.Join(script, "configs.lua"))
				cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
					"DFD_CONFIG="+tc.config, "DFD_PROJECT="+root, "DFD_OUTSIDE="+outside,
					"DFD_RESULT="+result, "XDG_CONFIG_HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir(),
					"XDG_STATE_HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir())
				runNeovim(t, cmd, result)
			})
		}
	}
}

// TestNeovimEdits renames and formats through Neovim's own LSP client with
// the plugin in neovim/ on the runtimepath and `dfd` on PATH (testdata/lsp/nvim/edits.lua does the editing):
// vim.lsp.buf.rename on a ref("daily_clicks") of a .sqlx renames the ref
// and the publish("daily_clicks", …) of the .js that defines it; a rename
// of an action named by its file renames the file when the client
// announces the "rename" resource operation (Neovim 0.7.2 does; dfd needs
// nothing more), and is otherwise refused with the reason, changing
// nothing (edits.lua checks whichever the client announced); formatting a messy
// .sqlx (vim.lsp.buf.formatting_sync on 0.7, vim.lsp.buf.format on 0.8+)
// leaves in the buffer what `dfd format` writes for a copy of the file.
// Neovim writes the buffers it edited (:wall), and the files on disk are
// checked here as well.
func TestNeovimEdits(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no editor")
	}
	out, err := exec.Command("bash", filepath.Join(testenv.RepoRoot(), "testdata", "lsp", "nvim", "ensure-nvim.sh")).Output()
	if err != nil {
		t.Fatalf("installing neovim: %v", err)
	}
	nvim := strings.TrimSpace(string(out))
	dfd := dfdBin(t)
	bin := t.TempDir()
	if err := os.Symlink(dfd, filepath.Join(bin, "dfd")); err != nil {
		t.Fatal(err)
	}

	root := jitWorkspace(t)
	snap, err := os.ReadFile(snapshotPath())
	if err != nil {
		t.Fatal(err)
	}
	// The config block is written with odd spacing: formatting must leave
	// it (and the ${…} placeholder) exactly as written.
	const config = "config {\n  type:   \"view\",\n  tags: [\"messy\"]\n}\n"
	const placeholder = `${ref("raw_clicks")}`
	messy := config + "select country,count(*) as n from " + placeholder + " where country='US' group by country\n"
	for name, content := range map[string]string{
		"metadata.json":                   string(snap), // the plugin's default snapshot
		"definitions/messy.sqlx":          messy,
		"definitions/uses_campaigns.sqlx": "config { type: \"view\" }\nSELECT * FROM ${ref(\"campaigns\")}\n",
	} {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The expected text is what the CLI makes of the same file.
	copyDir := t.TempDir()
	messyCopy := filepath.Join(copyDir, "messy.sqlx")
	if err := os.WriteFile(messyCopy, []byte(messy), 0o644); err != nil {
		t.Fatal(err)
	}
	if fout, err := exec.Command(dfd, "format", messyCopy).CombinedOutput(); err != nil {
		t.Fatalf("dfd format: %v\n%s", err, fout)
	}
	expected, err := os.ReadFile(messyCopy)
	if err != nil {
		t.Fatal(err)
	}
	if string(expected) == messy {
		t.Fatalf("dfd format left messy.sqlx as it was: nothing for Neovim to do")
	}
	if !strings.HasPrefix(string(expected), config) || !strings.Contains(string(expected), placeholder) {
		t.Fatalf("dfd format changed the config block or the placeholder:\n%s", expected)
	}
	expectedPath := filepath.Join(copyDir, "expected.sqlx")
	if err := os.WriteFile(expectedPath, expected, 0o644); err != nil {
		t.Fatal(err)
	}

	result := filepath.Join(t.TempDir(), "result.txt")
	cmd := exec.Command(nvim, "--headless", "--clean", "--cmd", "set rtp^="+filepath.Join(testenv.RepoRoot(), "neovim"),
		"-c", "luafile "+filepath.Join(testenv.RepoRoot(), "testdata", "lsp", "nvim", "edits.lua"))
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"DFD_PROJECT="+root, "DFD_EXPECTED="+expectedPath, "DFD_RESULT="+result,
		"XDG_CONFIG_HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir())
	runNeovim(t, cmd, result)

	// What Neovim wrote.
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Errorf("after the edits: %v", err)
		}
		return string(b)
	}
	if got := read("definitions/messy.sqlx"); got != string(expected) {
		t.Errorf("messy.sqlx on disk is not what dfd format writes:\n%s\nwant:\n%s", got, expected)
	}
	if got := read("definitions/top_countries.sqlx"); !strings.Contains(got, `${ref("clicks_per_day")}`) || strings.Contains(got, `"daily_clicks"`) {
		t.Errorf("top_countries.sqlx on disk, after renaming daily_clicks to clicks_per_day:\n%s", got)
	}
	if got := read("definitions/jit/daily_clicks.js"); !strings.Contains(got, `publish("clicks_per_day",`) || strings.Contains(got, `"daily_clicks"`) {
		t.Errorf("daily_clicks.js on disk, after renaming daily_clicks to clicks_per_day:\n%s", got)
	}
	// Every other place that names daily_clicks (dependencies, jctx.ref in
	// JiT code) was renamed too, in files Neovim had not opened.
	err = filepath.WalkDir(filepath.Join(root, "definitions"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), `"daily_clicks"`) {
			t.Errorf("%s still names daily_clicks after the rename:\n%s", p, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEditorsDocNeovimConfigs keeps the Neovim section of docs/editors.md
// and the plugin in agreement: the page quotes the example configurations
// that TestNeovimConfigs loads verbatim (a user copies them from there),
// and the page and :help dfd name every command plugin/dfd.lua defines
// and every option of lua/dfd/config.lua.
func TestEditorsDocNeovimConfigs(t *testing.T) {
	plugin := filepath.Join(testenv.RepoRoot(), "neovim")
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	page := read(filepath.Join(testenv.RepoRoot(), "docs", "editors.md"))
	help := read(filepath.Join(plugin, "doc", "dfd.txt"))
	for _, config := range []string{"setup.lua", "enable.lua", "lspconfig.lua"} {
		if b := read(filepath.Join(plugin, "examples", config)); !strings.Contains(page, "```lua\n"+b+"```\n") {
			t.Errorf("docs/editors.md does not quote neovim/examples/%s verbatim in a ```lua block", config)
		}
	}
	commands := regexp.MustCompile(`command\("(Dfd\w+)"`).FindAllStringSubmatch(read(filepath.Join(plugin, "plugin", "dfd.lua")), -1)
	if len(commands) < 5 {
		t.Fatalf("found %d commands in plugin/dfd.lua", len(commands))
	}
	for _, m := range commands {
		if !strings.Contains(page, "`:"+m[1]) {
			t.Errorf("docs/editors.md does not name :%s", m[1])
		}
		if !strings.Contains(help, "*:"+m[1]+"*") {
			t.Errorf("doc/dfd.txt has no help tag *:%s*", m[1])
		}
	}
	config := read(filepath.Join(plugin, "lua", "dfd", "config.lua"))
	defaults := config[strings.Index(config, "M.defaults = {"):strings.Index(config, "\n}\n")]
	options := regexp.MustCompile(`(?m)^  (\w+) = `).FindAllStringSubmatch(defaults, -1)
	if len(options) < 8 {
		t.Fatalf("found %d options in lua/dfd/config.lua", len(options))
	}
	setup := read(filepath.Join(plugin, "examples", "setup.lua"))
	for _, m := range options {
		if !strings.Contains(help, "  "+m[1]+" = ") {
			t.Errorf("doc/dfd.txt's setup() example does not show the option %s", m[1])
		}
		if !strings.Contains(setup, "  "+m[1]+" = ") {
			t.Errorf("neovim/examples/setup.lua does not show the option %s", m[1])
		}
	}
}

// runNeovim runs a headless Neovim whose script writes its checks to
// result, ending with "N passed, N failed", and fails t unless every check
// passed (and there was one).
func runNeovim(t *testing.T, cmd *exec.Cmd, result string) {
	t.Helper()
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
