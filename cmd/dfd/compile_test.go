package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testenv"
)

const testSettings = "defaultProject: proj\ndefaultDataset: ds\ndefaultLocation: US\n"

func TestCompileBadProjects(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  []string // substrings of stderr
	}{
		{
			name:  "not a project",
			files: map[string]string{"README.md": "hello"},
			want:  []string{"workflow_settings.yaml"},
		},
		{
			name:  "no core installed",
			files: map[string]string{"workflow_settings.yaml": testSettings, "definitions/a.sqlx": "select 1"},
			want:  []string{"@dataform/core", "dataformCoreVersion"},
		},
		{
			name:  "a core version that cannot be installed",
			files: map[string]string{"workflow_settings.yaml": "dataformCoreVersion: 3.0.9999\n" + testSettings},
			want:  []string{"3.0.9999"},
		},
		{
			name:  "a core version that is not a version",
			files: map[string]string{"workflow_settings.yaml": "dataformCoreVersion: ../../evil\n" + testSettings},
			want:  []string{"../../evil"},
		},
		{
			name:  "malformed workflow_settings.yaml",
			files: map[string]string{"workflow_settings.yaml": "defaultProject: [unclosed\n"},
			want:  []string{"workflow_settings.yaml:"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && strings.Contains(c.name, "installed") {
				t.Skip("asks the npm registry")
			}
			t.Setenv("DFD_CACHE_DIR", t.TempDir())
			t.Setenv("npm_config_fetch_retries", "0")
			dir := testenv.WriteProject(t, "", c.files)
			res := runDFD(t, "compile", dir, "--json")
			if res.code != 1 {
				t.Errorf("exit status %d, want 1", res.code)
			}
			if len(res.stdout) != 0 {
				t.Errorf("printed on stdout: %s", res.stdout)
			}
			for _, w := range c.want {
				if !strings.Contains(string(res.stderr), w) {
					t.Errorf("stderr does not mention %q:\n%s", w, res.stderr)
				}
			}
		})
	}
}

func TestCompileSummaryAndErrors(t *testing.T) {
	dir := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": testSettings,
		"definitions/ok.sqlx":    "config { type: 'table' }\nselect 1 as id",
		"definitions/bad.js":     "throw new Error('broken on purpose');",
	})
	res := runDFD(t, "compile", dir)
	if res.code != 1 {
		t.Errorf("exit status %d, want 1", res.code)
	}
	if !strings.Contains(string(res.stdout), "Compiled 1 action(s).") || !strings.Contains(string(res.stdout), "ds.ok [table]") {
		t.Errorf("summary:\n%s", res.stdout)
	}
	if !strings.Contains(string(res.stderr), "definitions/bad.js: broken on purpose") {
		t.Errorf("stderr:\n%s", res.stderr)
	}
}

func TestCompileFlags(t *testing.T) {
	dir := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": testSettings,
		"definitions/ok.sqlx":    "config { type: 'table' }\nselect '${dataform.projectConfig.vars.region}' as r",
	})
	t.Chdir(dir)
	res := runDFD(t, "compile", "--json", "--schema-suffix=dev", "--vars=region=eu", "--timeout", "30s")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	for _, want := range []string{`"schema": "ds_dev"`, `select 'eu' as r`} {
		if !strings.Contains(string(res.stdout), want) {
			t.Errorf("output lacks %s", want)
		}
	}
	if res := runDFD(t, "compile", filepath.Join(dir, "nope")); res.code != 1 {
		t.Errorf("missing dir: exit %d", res.code)
	}
	if res := runDFD(t, "compile", "--schema-suffix=bad-suffix"); res.code != 2 {
		t.Errorf("bad --schema-suffix: exit %d, want 2", res.code)
	}
	if res := runDFD(t, "compile", "--timeout=soon"); res.code != 2 {
		t.Errorf("bad --timeout: exit %d, want 2", res.code)
	}
}
