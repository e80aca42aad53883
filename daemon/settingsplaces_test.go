package daemon_test

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/project"
)

// A settings value of the wrong type is refused by dfd's own reader, as
// `dfd compile` refuses it, however it reached the daemon: on disk when
// the project opens, in an unsaved buffer (which only core read, failing
// on it with an internal TypeError), saved.
func TestSettingsTypeErrorAsDfdCompileSaysIt(t *testing.T) {
	const bad = "defaultLocation: US\ndefaultProject: [1, 2]\ndefaultDataset: d\n"
	project1 := func(settings string) string {
		return testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
			"workflow_settings.yaml": settings,
			"package.json":           "{}\n",
			"definitions/a.sqlx":     "SELECT 1\n",
		})
	}
	// What `dfd compile` says: it reads the settings with project.Open.
	_, err := project.Open(project1(bad))
	var want *project.SettingsError
	if !errors.As(err, &want) || want.Line != 2 {
		t.Fatalf("project.Open: %v, want a settings error on line 2", err)
	}
	anyDiag := func(ds []protocol.Diagnostic) bool { return len(ds) > 0 }
	noDiags := func(ds []protocol.Diagnostic) bool { return len(ds) == 0 }
	check := func(t *testing.T, how string, ds []protocol.Diagnostic) {
		t.Helper()
		if len(ds) != 1 {
			t.Fatalf("%s: %q, want dfd's settings error alone", how, messages(ds))
		}
		if got := fakeeditor.Message(ds[0]); got != want.Msg || int(ds[0].Range.Start.Line) != want.Line-1 {
			t.Errorf("%s: %q on line %d, want %q on line %d (dfd compile's)", how, got, ds[0].Range.Start.Line+1, want.Msg, want.Line)
		}
	}

	t.Run("on disk at open", func(t *testing.T) {
		root := project1(bad)
		s := startServer(t, serverConfig{})
		s.init(t, root)
		settings := filepath.Join(root, "workflow_settings.yaml")
		check(t, "on disk", s.awaitDiags(t, settings, "settings error", anyDiag))
	})

	t.Run("unsaved then saved", func(t *testing.T) {
		root := project1(errorPlacesSettings)
		settings := filepath.Join(root, "workflow_settings.yaml")
		s := startServer(t, serverConfig{})
		s.init(t, root)
		s.awaitPreviewChanged(t, 0, "")
		if err := s.ed.Open(s.ctx, settings); err != nil {
			t.Fatal(err)
		}
		if err := s.ed.SetText(s.ctx, settings, bad); err != nil {
			t.Fatal(err)
		}
		check(t, "unsaved", s.awaitDiags(t, settings, "settings error in the buffer", anyDiag))
		// The project compiles again as soon as the buffer is right.
		mark := s.previewChanges()
		if err := s.ed.SetText(s.ctx, settings, errorPlacesSettings); err != nil {
			t.Fatal(err)
		}
		s.awaitDiags(t, settings, "unsaved fix", noDiags)
		s.awaitPreviewChanged(t, mark, "")

		if err := s.ed.SetText(s.ctx, settings, bad); err != nil {
			t.Fatal(err)
		}
		if err := s.ed.Save(s.ctx, settings); err != nil {
			t.Fatal(err)
		}
		// Said only when the reopening (which reads the disk) failed.
		if err := s.ed.Await(s.ctx, "the reopening's failure", func(st *fakeeditor.State) bool {
			return len(st.Shown) > 0 && strings.Contains(st.Shown[len(st.Shown)-1], want.Msg)
		}); err != nil {
			t.Fatal(err)
		}
		check(t, "saved", s.awaitDiags(t, settings, "settings error on disk", anyDiag))
	})

	t.Run("on disk, fixed in the buffer", func(t *testing.T) {
		root := project1(bad)
		settings := filepath.Join(root, "workflow_settings.yaml")
		s := startServer(t, serverConfig{})
		s.init(t, root)
		s.awaitDiags(t, settings, "settings error", anyDiag)
		if err := s.ed.Open(s.ctx, settings); err != nil {
			t.Fatal(err)
		}
		// The buffer is fine; the saved file is what fails, and says so
		// on the first line, not on a line of the buffer it does not
		// describe.
		fixed := "# fixed, not saved\n" + errorPlacesSettings
		if err := s.ed.SetText(s.ctx, settings, fixed); err != nil {
			t.Fatal(err)
		}
		ds := s.awaitDiags(t, settings, "the saved file's error", func(ds []protocol.Diagnostic) bool { return hasMessage(ds, "as saved is invalid") })
		if len(ds) != 1 || ds[0].Range.Start.Line != 0 || !strings.Contains(fakeeditor.Message(ds[0]), "(line 2): "+want.Msg+"; save the file") {
			t.Errorf("fixed buffer: %q at %v", messages(ds), ds[0].Range)
		}
		// A buffer broken otherwise: its own error, where it is.
		if err := s.ed.SetText(s.ctx, settings, "defaultLocation: US\ndefaultProject: p\ndefaultDataset: [d]\n"); err != nil {
			t.Fatal(err)
		}
		ds = s.awaitDiags(t, settings, "the buffer's error", func(ds []protocol.Diagnostic) bool {
			return len(ds) == 1 && ds[0].Range.Start.Line == 2
		})
		if strings.Contains(fakeeditor.Message(ds[0]), "as saved") {
			t.Errorf("buffer error: %q", messages(ds))
		}
		// Saved right: the project opens and the error goes.
		if err := s.ed.SetText(s.ctx, settings, fixed); err != nil {
			t.Fatal(err)
		}
		if err := s.ed.Save(s.ctx, settings); err != nil {
			t.Fatal(err)
		}
		s.awaitDiags(t, settings, "cleared by the save", noDiags)
	})
}

// An unknown key of the settings is marked where it is written, with
// core's message as the official CLI prints it, when dfd is sure which key
// core names: one key of that name at the top level and none deeper. Else
// it stays on the first line.
func TestUnknownSettingsKeyOnTheKey(t *testing.T) {
	const typo = "defaultProject: p\ndefaultDataset: d\ndefaultLocation: US\ndefaultAssertionDatasett: x\n"
	files := map[string]string{
		"workflow_settings.yaml": typo,
		"package.json":           "{}\n",
		"definitions/a.sqlx":     "SELECT 1\n",
	}
	stdout, stderr := officialCompile(t, testenv.WriteProject(t, testenv.CoreVersion, files))
	wantMsg := regexp.MustCompile(`Workflow settings error: Unexpected property "defaultAssertionDatasett".*`).FindString(stdout + stderr)
	if wantMsg == "" {
		t.Fatalf("the CLI did not refuse the key: %s%s", stdout, stderr)
	}

	root := testenv.WriteProject(t, testenv.CoreVersion, files)
	settings := filepath.Join(root, "workflow_settings.yaml")
	s := startServer(t, serverConfig{})
	s.init(t, root)
	refused := func(key string) func([]protocol.Diagnostic) bool {
		return func(ds []protocol.Diagnostic) bool { return hasMessage(ds, `Unexpected property "`+key+`"`) }
	}
	ds := s.awaitDiags(t, settings, "the unknown key on disk", refused("defaultAssertionDatasett"))
	if len(ds) != 1 || fakeeditor.Message(ds[0]) != wantMsg {
		t.Errorf("%q, want core's %q", messages(ds), wantMsg)
	}
	if got := textRange(typo, ds[0].Range); got != "defaultAssertionDatasett" || ds[0].Range.Start.Line != 3 {
		t.Errorf("on disk: on %q (%v), want on the key", got, ds[0].Range)
	}

	if err := s.ed.Open(s.ctx, settings); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, text string
		key        string // the key core names
		on         string // the text it is on; "" for the first line
	}{
		{"quoted, in a buffer", "defaultProject: p\ndefaultDataset: d\ndefaultLocation: US\n\"defaultSchemaa\": x\n", "defaultSchemaa", `"defaultSchemaa"`},
		{"flow mapping after a wide character", "{vars: {é: \"1\"}, defaultProject: p, defaultDataset: d, defaultLocationz: US}\n", "defaultLocationz", "defaultLocationz"},
		{"also nested", "defaultProject: p\ndefaultDataset: d\ndefaultLocation: US\ndefaultDatabase: x\nvars:\n  defaultDatabase: y\n", "defaultDatabase", ""},
	} {
		if err := s.ed.SetText(s.ctx, settings, tc.text); err != nil {
			t.Fatal(err)
		}
		ds := s.awaitDiags(t, settings, tc.name, refused(tc.key))
		if len(ds) != 1 {
			t.Errorf("%s: %q, want one diagnostic", tc.name, messages(ds))
			continue
		}
		r := ds[0].Range
		switch {
		case tc.on == "" && (r.Start != protocol.Position{} || r.End.Line != 0):
			t.Errorf("%s: at %v, want on the first line", tc.name, r)
		case tc.on != "" && textRangeUTF16(tc.text, r) != tc.on:
			t.Errorf("%s: on %q (%v), want on %q", tc.name, textRangeUTF16(tc.text, r), r, tc.on)
		}
	}
}

// textRangeUTF16 is the text a one-line range (in UTF-16, as LSP's) covers
// in text.
func textRangeUTF16(text string, r protocol.Range) string {
	lines := strings.Split(text, "\n")
	if int(r.Start.Line) >= len(lines) || r.End.Line != r.Start.Line {
		return ""
	}
	u := utf16.Encode([]rune(lines[r.Start.Line]))
	end := min(int(r.End.Character), len(u))
	return string(utf16.Decode(u[min(int(r.Start.Character), end):end]))
}
