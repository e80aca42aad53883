package project

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The official CLI's `dataform compile` checks a project before it
// compiles it, and refuses some that dfd's daemon accepts (it prefers a
// core in node_modules over dataformCoreVersion so that an editor keeps
// working). `dfd compile`, a drop-in for the CLI, applies the CLI's checks
// with the CLI's messages (@dataform/cli 3.0.69: the project-dir check of
// its yargs options, compile() and the compile worker).

// Messages of the official CLI.
const (
	// MissingCoreVersionMessage: neither dataformCoreVersion nor a
	// package.json.
	MissingCoreVersionMessage = "dataformCoreVersion must be specified either in workflow_settings.yaml or via a package.json"
	// NoInstalledCoreMessage: a package.json project without
	// node_modules/@dataform/core/bundle.js.
	NoInstalledCoreMessage = "Could not find a recent installed version of @dataform/core in the project. Check that " +
		"either `dataformCoreVersion` is specified in `workflow_settings.yaml`, or " +
		"`@dataform/core` is specified in `package.json`. If using `package.json`, then run " +
		"`dataform install`."
)

// CLIError is a refusal worded as the official CLI words it. The CLI
// prints most of them as "Dataform encountered an error: …"; Bare ones as
// they are.
type CLIError struct {
	Message string
	Bare    bool
}

func (e *CLIError) Error() string { return e.Message }

// CLIProjectDir is the official CLI's check of its project-dir argument:
// the directory (resolved against the working directory, "~" expanded,
// symbolic links kept, as the CLI prints it) must exist and hold a
// workflow_settings.yaml or a dataform.json. It returns that path.
func CLIProjectDir(dir string) (string, error) {
	abs, err := filepath.Abs(untildify(dir))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return abs, &CLIError{Message: abs + " does not exist!"}
	}
	if !exists(filepath.Join(abs, DataformJSONFile)) && !exists(filepath.Join(abs, WorkflowSettingsFile)) {
		return abs, &CLIError{Message: abs + " does not appear to be a dataform directory (missing workflow_settings.yaml file)."}
	}
	return abs, nil
}

// CheckForCLI applies the checks the official CLI's compile makes of the
// project p found at dir (the path CLIProjectDir returned), in its order:
//
//   - without dataformCoreVersion in workflow_settings.yaml there must be a
//     package.json;
//   - with it, there must be no node_modules, package.json or
//     package-lock.json (the CLI installs that core into a copy of the
//     project; dfd installs it into its cache);
//   - without it, node_modules/@dataform/core/bundle.js must be installed.
func CheckForCLI(dir string, p *Project) error {
	version := ""
	if p.SettingsFile == WorkflowSettingsFile {
		version = p.Settings.DataformCoreVersion
	}
	if version == "" && !exists(filepath.Join(dir, "package.json")) {
		return &CLIError{Message: MissingCoreVersionMessage}
	}
	if version != "" {
		for _, name := range []string{"node_modules", "package.json", "package-lock.json"} {
			if f := filepath.Join(dir, name); exists(f) {
				return &CLIError{Message: fmt.Sprintf("'%s' unexpected; remove it and try again", f)}
			}
		}
		return nil
	}
	if !exists(filepath.Join(p.Root, "node_modules", "@dataform", "core", "bundle.js")) {
		return &CLIError{Message: NoInstalledCoreMessage}
	}
	return nil
}

// exists is fs.existsSync: anything at path (a broken symbolic link is
// nothing).
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// untildify expands a leading "~" as the CLI's untildify does.
func untildify(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return home + p[1:]
}
