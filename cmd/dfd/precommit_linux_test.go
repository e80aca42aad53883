package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// TestPreCommitHooks runs the hooks of .pre-commit-hooks.yaml with the
// real pre-commit (Debian's package; scripts/test.sh installs it) in a
// fixture repository, the example project: both pass on it as shipped; a
// badly formatted .sqlx fails dfd-format (which rewrites it); a planted
// column error fails dfd-check, which names it.
func TestPreCommitHooks(t *testing.T) {
	if _, err := exec.LookPath("pre-commit"); err != nil {
		t.Fatalf("pre-commit is needed (apt-get install pre-commit; scripts/test.sh installs it): %v", err)
	}
	t.Setenv("DFD_CACHE_DIR", filepath.Join(os.Getenv("HOME"), ".cache", "dfd-ci", "dfd"))
	work := t.TempDir()

	// dfd on PATH: this test binary, which runs as dfd (TestMain).
	binDir := filepath.Join(work, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/sh\n" + asDFDEnv + "=1 exec '" + self + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(binDir, "dfd"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"PRE_COMMIT_HOME=" + filepath.Join(work, "pre-commit-cache"),
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=dfd", "GIT_AUTHOR_EMAIL=dfd@localhost", "GIT_COMMITTER_NAME=dfd", "GIT_COMMITTER_EMAIL=dfd@localhost",
	}
	run := func(dir, name string, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
		}
		return out.String(), cmd.ProcessState.ExitCode()
	}
	must := func(dir, name string, args ...string) string {
		t.Helper()
		out, code := run(dir, name, args...)
		if code != 0 {
			t.Fatalf("%s %s: exit %d\n%s", name, strings.Join(args, " "), code, out)
		}
		return out
	}

	// The hooks' repository: dfd's .pre-commit-hooks.yaml, committed.
	hooks := filepath.Join(work, "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), ".pre-commit-hooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hooks, ".pre-commit-hooks.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	must(hooks, "git", "init", "-q")
	must(hooks, "git", "add", ".")
	must(hooks, "git", "commit", "-q", "-m", "hooks")
	rev := strings.TrimSpace(must(hooks, "git", "rev-parse", "HEAD"))

	// The fixture repository: the example project, the hooks configured.
	repo := filepath.Join(work, "repo")
	if err := testenv.CopyTree(filepath.Join(testenv.RepoRoot(), "examples", "clickstream"), repo); err != nil {
		t.Fatal(err)
	}
	config := "repos:\n  - repo: " + hooks + "\n    rev: " + rev + "\n    hooks:\n      - id: dfd-format\n      - id: dfd-check\n        args: [--metadata, metadata.json]\n"
	if err := os.WriteFile(filepath.Join(repo, ".pre-commit-config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	must(repo, "git", "init", "-q")
	must(repo, "git", "add", ".")
	must(repo, "git", "commit", "-q", "-m", "project")

	if out, code := run(repo, "pre-commit", "run", "--all-files"); code != 0 {
		t.Fatalf("the hooks fail on the example as shipped: exit %d\n%s", code, out)
	}

	// A badly formatted .sqlx: dfd-format fails and rewrites it.
	bad := filepath.Join(repo, "definitions", "country_clicks.sqlx")
	badText := "config { type: \"view\" }\n\nselect country,sum(clicks) as clicks from ${ref(\"top_countries\")} group by country\n"
	if err := os.WriteFile(bad, []byte(badText), 0o644); err != nil {
		t.Fatal(err)
	}
	must(repo, "git", "add", ".")
	out, code := run(repo, "pre-commit", "run", "dfd-format", "--all-files")
	t.Logf("pre-commit run dfd-format:\n%s", out)
	if code == 0 || !strings.Contains(out, "dfd format") || !strings.Contains(out, "Failed") || !strings.Contains(out, "files were modified by this hook") {
		t.Errorf("dfd-format on a badly formatted file: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(bad); !strings.Contains(string(b), "SELECT\n  country,\n  sum(clicks) AS clicks\n") {
		t.Errorf("dfd-format did not format the file:\n%s", b)
	}
	must(repo, "git", "add", ".")
	if out, code := run(repo, "pre-commit", "run", "--all-files"); code != 0 {
		t.Fatalf("the hooks fail once the file is formatted: exit %d\n%s", code, out)
	}

	// A planted column error: dfd-check fails and names it.
	planted := strings.Replace(string(mustRead(t, bad)), "sum(clicks) AS clicks", "sum(clicks_total) AS clicks", 1)
	if err := os.WriteFile(bad, []byte(planted), 0o644); err != nil {
		t.Fatal(err)
	}
	must(repo, "git", "add", ".")
	out, code = run(repo, "pre-commit", "run", "dfd-check", "--all-files")
	t.Logf("pre-commit run dfd-check:\n%s", out)
	if code == 0 || !strings.Contains(out, "definitions/country_clicks.sqlx:") || !strings.Contains(out, "clicks_total") {
		t.Errorf("dfd-check on a planted column error: exit %d\n%s", code, out)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
