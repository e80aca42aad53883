package compile

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/project"
)

// CLIVersion is the official CLI `dfd compile` is a drop-in for.
const CLIVersion = "3.0.69"

// MissingDependenciesMessage is the CLI's answer when loading core fails
// on a module that is not installed.
const MissingDependenciesMessage = "Could not find NPM dependencies. Have you run 'dataform install'?"

// CheckCLICore refuses a core the official CLI refuses, with its message:
// the CLI (3.0.69) compiles only with a core of its major version, 3, and
// at least its major.minor.0, judged by the `version` core exports ("0.0.0"
// when it exports none, as cores before 2.9.0). A core whose package is a
// 3.x version is accepted without loading it.
func CheckCLICore(core *project.Core) error {
	if cliCompatible(core.Version) {
		return nil
	}
	v, err := engine.ExportedVersion(core.BundlePath, core.Version)
	if errors.Is(err, engine.ErrMissingDependency) {
		return &project.CLIError{Message: MissingDependenciesMessage, Bare: true}
	}
	if err != nil {
		return err
	}
	if v == "" {
		v = "0.0.0"
	}
	if cliCompatible(v) {
		return nil
	}
	min := cliMinCore()
	return &project.CLIError{Message: fmt.Sprintf("@dataform/core %s is not compatible with @dataform/cli %s. "+
		"The CLI requires @dataform/core >= %s (matching major.minor). Set `dataformCoreVersion: %s` in "+
		"workflow_settings.yaml (or pin @dataform/core in package.json), then run `dataform install`.",
		v, CLIVersion, min, CLIVersion)}
}

var semverRE = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// cliMinCore is the CLI's major.minor.0.
func cliMinCore() string {
	m := semverRE.FindStringSubmatch(CLIVersion)
	return m[1] + "." + m[2] + ".0"
}

// cliCompatible is the CLI's test: semver.major(v) equals its own and
// !semver.lt(v, major.minor.0).
func cliCompatible(v string) bool {
	m, c := semverRE.FindStringSubmatch(v), semverRE.FindStringSubmatch(CLIVersion)
	if m == nil {
		return false
	}
	n := func(s string) int { i, _ := strconv.Atoi(s); return i }
	if n(m[1]) != n(c[1]) {
		return false
	}
	if n(m[2]) != n(c[2]) {
		return n(m[2]) > n(c[2])
	}
	return n(m[3]) > 0 || m[4] == "" // a pre-release of major.minor.0 is below it
}
