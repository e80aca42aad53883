package engine

import (
	"os"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// The hooks of incremental compiles apply to every core version we
// support, each found exactly once (patchIncremental refuses otherwise);
// TestIncrementalOlderCores shows them working on each.
func TestIncrementalPatchesApply(t *testing.T) {
	for _, v := range []string{"3.0.62", "3.0.59", "3.0.52"} {
		t.Run(v, func(t *testing.T) {
			b, err := os.ReadFile(testenv.CoreDir(t, v) + "/bundle.js")
			if err != nil {
				t.Fatal(err)
			}
			patched, ok := patchIncremental(string(b))
			if !ok {
				t.Fatalf("core %s: the incremental hooks did not apply", v)
			}
			for _, want := range []string{"global.__dfdRunFile(", "global.__dfdGraphStage(", "(global.__dfdSkipGraphVerify||"} {
				if n := strings.Count(patched, want); n != 1 {
					t.Errorf("core %s: %q found %d times", v, want, n)
				}
			}
			// Applied twice it finds nothing left to patch.
			if _, again := patchIncremental(patched); again {
				t.Errorf("core %s: the patched bundle can be patched again", v)
			}
		})
	}
}
