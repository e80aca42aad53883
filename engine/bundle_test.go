package engine

import (
	"os"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testenv"
)

// The performance rewrites must apply to every core version we support;
// parity tests then prove they change no result.
func TestConcatPatchesApply(t *testing.T) {
	for _, v := range []string{"3.0.62", "3.0.59", "3.0.52"} {
		t.Run(v, func(t *testing.T) {
			b, err := os.ReadFile(testenv.CoreDir(t, v) + "/bundle.js")
			if err != nil {
				t.Fatal(err)
			}
			patched := patchQuadraticConcat(string(b))
			for _, want := range []string{"__dfdFlush(){", "t.map((p=>p.join(\"\")))"} {
				if !strings.Contains(patched, want) {
					t.Errorf("core %s: rewrite producing %q did not apply", v, want)
				}
			}
		})
	}
}
