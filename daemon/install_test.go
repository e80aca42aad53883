package daemon_test

import (
	"strings"
	"testing"

	"github.com/dfdtools/dfd/daemon"
	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/project"
)

// A project that names its core (dataformCoreVersion) gets it installed
// into dfd's cache with npm; the install shows as work-done progress.
func TestCoreInstallProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs npm")
	}
	root := testenv.ProjectCopy(t, testenv.Fixture("core_version_setting"), "")
	s := startServer(t, serverConfig{backend: daemon.BackendOptions{Resolver: &project.CoreResolver{CacheDir: t.TempDir()}}})
	s.init(t, root)
	var p *fakeeditor.Progress
	if err := s.ed.Await(s.ctx, "the install's progress to end", func(st *fakeeditor.State) bool {
		for _, x := range st.Progress {
			if strings.Contains(x.Title, "opening") && x.Ended {
				p = x
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatal(err)
	}
	reported := strings.Join(p.Messages, "\n")
	if !strings.Contains(reported, "installing @dataform/core@3.0.62") || p.EndMsg != "@dataform/core 3.0.62 installed" {
		t.Errorf("install progress: reports %q, end %q", reported, p.EndMsg)
	}
	s.awaitPreviewChanged(t, 0, "")
	if st := s.ed.Snapshot(); st.EndedProgress("compiling") == 0 {
		t.Errorf("no compile progress after the install")
	}
}
