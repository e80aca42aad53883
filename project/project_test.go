package project

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// realTempDir is t.TempDir with symlinks resolved (macOS's /var is a link),
// so it can be compared with Project.Root.
func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestOpen(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		wantFile string
		want     Settings
		wantErr  []string // substrings of the error; nil means success
		wantIs   error
		wantLine int // for *SettingsError
	}{
		{
			name: "workflow_settings.yaml",
			files: map[string]string{"workflow_settings.yaml": `
dataformCoreVersion: 3.0.0
defaultProject: my-project
defaultDataset: dataform
defaultLocation: EU
defaultAssertionDataset: dataform_assertions
vars:
  x: y
`},
			wantFile: WorkflowSettingsFile,
			want: Settings{DataformCoreVersion: "3.0.0", DefaultProject: "my-project", DefaultDataset: "dataform",
				DefaultLocation: "EU", DefaultAssertionDataset: "dataform_assertions"},
		},
		{
			name:     "empty workflow_settings.yaml",
			files:    map[string]string{"workflow_settings.yaml": ""},
			wantFile: WorkflowSettingsFile,
		},
		{
			name:     "numeric-looking version kept as written",
			files:    map[string]string{"workflow_settings.yaml": "dataformCoreVersion: 3.0\n"},
			wantFile: WorkflowSettingsFile,
			want:     Settings{DataformCoreVersion: "3.0"},
		},
		{
			name: "dataform.json maps legacy names",
			files: map[string]string{"dataform.json": `{
  "warehouse": "bigquery",
  "defaultDatabase": "my-project",
  "defaultSchema": "dataform",
  "assertionSchema": "dataform_assertions",
  "defaultLocation": "US"
}`},
			wantFile: DataformJSONFile,
			want: Settings{DefaultProject: "my-project", DefaultDataset: "dataform",
				DefaultLocation: "US", DefaultAssertionDataset: "dataform_assertions"},
		},
		{
			name:    "no settings file",
			files:   map[string]string{"definitions/a.sqlx": ""},
			wantErr: []string{"workflow_settings.yaml", "dataform.json", "not a Dataform project"},
			wantIs:  ErrNotProject,
		},
		{
			name:    "both settings files",
			files:   map[string]string{"workflow_settings.yaml": "", "dataform.json": "{}"},
			wantErr: []string{"both", "remove one"},
		},
		{
			name:     "malformed yaml",
			files:    map[string]string{"workflow_settings.yaml": "defaultProject: p\ndefaultDataset: d\n  bad: indent: here\n"},
			wantErr:  []string{"workflow_settings.yaml:3:"},
			wantLine: 3,
		},
		{
			name:     "wrong yaml type",
			files:    map[string]string{"workflow_settings.yaml": "defaultProject: p\n\ndefaultDataset: [a, b]\n"},
			wantErr:  []string{"workflow_settings.yaml:3:", "cannot unmarshal"},
			wantLine: 3,
		},
		{
			name:     "malformed json",
			files:    map[string]string{"dataform.json": "{\n  \"defaultSchema\": \"d\",\n  \"defaultDatabase\" \"p\"\n}\n"},
			wantErr:  []string{"dataform.json:3:21:"},
			wantLine: 3,
		},
		{
			name:     "wrong json type",
			files:    map[string]string{"dataform.json": "{\n  \"defaultSchema\": 42\n}\n"},
			wantErr:  []string{"dataform.json:2:"},
			wantLine: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := realTempDir(t)
			for name, content := range tt.files {
				writeFile(t, filepath.Join(dir, name), content)
			}
			p, err := Open(dir)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Open() = %+v, want error", p)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("Open() error %q does not mention %q", err, s)
					}
				}
				if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
					t.Errorf("Open() error %v is not %v", err, tt.wantIs)
				}
				if tt.wantLine != 0 {
					var se *SettingsError
					if !errors.As(err, &se) || se.Line != tt.wantLine {
						t.Errorf("Open() error %#v: want *SettingsError at line %d", err, tt.wantLine)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(): %v", err)
			}
			if p.Root != dir || p.SettingsFile != tt.wantFile || p.Settings != tt.want {
				t.Errorf("Open() = %+v, want Root %s, SettingsFile %s, Settings %+v", p, dir, tt.wantFile, tt.want)
			}
		})
	}
}

func TestOpenResolvesSymlinksAndRelativePaths(t *testing.T) {
	dir := realTempDir(t)
	writeFile(t, filepath.Join(dir, "real", "workflow_settings.yaml"), "defaultProject: p\n")
	if err := os.Symlink("real", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, in := range []string{"link", "real", "./link/", filepath.Join(dir, "link")} {
		p, err := Open(in)
		if err != nil {
			t.Fatalf("Open(%q): %v", in, err)
		}
		if want := filepath.Join(dir, "real"); p.Root != want {
			t.Errorf("Open(%q).Root = %s, want %s", in, p.Root, want)
		}
	}
}

func TestOpenNotADirectory(t *testing.T) {
	dir := realTempDir(t)
	f := filepath.Join(dir, "workflow_settings.yaml")
	writeFile(t, f, "")
	if _, err := Open(f); !errors.Is(err, ErrNotProject) {
		t.Errorf("Open(file) error = %v, want ErrNotProject", err)
	}
	if _, err := Open(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Open(missing) error = %v, want one naming the path", err)
	}
}

func TestFindRoot(t *testing.T) {
	dir := realTempDir(t)
	writeFile(t, filepath.Join(dir, "repo", "workflow_settings.yaml"), "")
	writeFile(t, filepath.Join(dir, "repo", "definitions", "a.sqlx"), "")
	writeFile(t, filepath.Join(dir, "repo", "nested", "dataform.json"), "{}")
	writeFile(t, filepath.Join(dir, "repo", "nested", "definitions", "b.sqlx"), "")
	writeFile(t, filepath.Join(dir, "elsewhere", "x.sqlx"), "")
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(dir, "repo", "linked")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		path    string
		want    string // "" means ErrNotProject
		comment string
	}{
		{"repo", "repo", "the root itself"},
		{"repo/workflow_settings.yaml", "repo", "the settings file"},
		{"repo/definitions/a.sqlx", "repo", "a file"},
		{"repo/definitions", "repo", "a directory"},
		{"repo/definitions/unsaved.sqlx", "repo", "a file that does not exist yet"},
		{"repo/new/dir/unsaved.sqlx", "repo", "in directories that do not exist yet"},
		{"repo/nested/definitions/b.sqlx", "repo/nested", "the nearest root wins"},
		{"repo/linked/x.sqlx", "repo", "walks the path as given, not the link target"},
		{"elsewhere/x.sqlx", "", "no root above"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := FindRoot(filepath.Join(dir, tt.path))
			if tt.want == "" {
				if !errors.Is(err, ErrNotProject) || !strings.Contains(err.Error(), "any parent") {
					t.Errorf("FindRoot() = %q, %v; want ErrNotProject (%s)", got, err, tt.comment)
				}
				return
			}
			if err != nil || got != filepath.Join(dir, tt.want) {
				t.Errorf("FindRoot() = %q, %v; want %s (%s)", got, err, tt.want, tt.comment)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	dir := realTempDir(t)
	for _, f := range []string{
		"a/workflow_settings.yaml",
		"a/definitions/x.sqlx",
		"a/nested/dataform.json",
		"b/c/d/workflow_settings.yaml",
		"node_modules/pkg/workflow_settings.yaml",
		"a/node_modules/pkg/dataform.json",
		".git/workflow_settings.yaml",
		"e/.cache/workflow_settings.yaml",
		"f/workflow_settings.yaml/", // a directory, not a settings file
	} {
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(filepath.Join(dir, f), 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		writeFile(t, filepath.Join(dir, f), "")
	}
	if err := os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		start string
		want  []string
	}{
		{".", []string{"a", "a/nested", "b/c/d"}},
		{"a", []string{"a", "a/nested"}},
		{"b", []string{"b/c/d"}},
		{"link", []string{"a", "a/nested"}}, // the start may be a link; results are resolved
		{"e/.cache", []string{"e/.cache"}},  // a dot start directory is searched
		{"f", nil},
	}
	for _, tt := range tests {
		t.Run(tt.start, func(t *testing.T) {
			got, err := Discover(context.Background(), filepath.Join(dir, tt.start))
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, filepath.Join(dir, w))
			}
			if !slices.Equal(got, want) {
				t.Errorf("Discover() = %q, want %q", got, want)
			}
		})
	}

	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := Discover(ctx, dir); !errors.Is(err, context.Canceled) {
			t.Errorf("Discover(cancelled) error = %v, want context.Canceled", err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		if _, err := Discover(context.Background(), filepath.Join(dir, "missing")); err == nil {
			t.Error("Discover(missing) succeeded")
		}
	})
}
