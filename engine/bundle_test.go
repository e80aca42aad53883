package engine

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
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

// A damaged bundle.js (an interrupted install) is reported as such, naming
// the file, whether it no longer compiles or no longer defines compiler().
func TestDamagedBundle(t *testing.T) {
	src, err := os.ReadFile(testenv.CoreDir(t, "3.0.62") + "/bundle.js")
	if err != nil {
		t.Fatal(err)
	}
	zeroed := append([]byte(nil), src...)
	for i := len(zeroed) / 2; i < len(zeroed); i++ {
		zeroed[i] = 0
	}
	for _, tc := range []struct {
		name       string
		content    []byte
		noCompiler bool
	}{
		{"truncated to half", src[:len(src)/2], false},
		{"truncated near the end", src[:len(src)-100], false},
		{"second half zeroed", zeroed, false},
		{"empty", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := t.TempDir() + "/bundle.js"
			if err := os.WriteFile(path, tc.content, 0o644); err != nil {
				t.Fatal(err)
			}
			b, err := LoadBundle(path, "3.0.62")
			if err == nil {
				_, err = b.NewRuntime(Options{Root: t.TempDir()})
			}
			var be *BundleError
			if !errors.As(err, &be) {
				t.Fatalf("error %v (%T), want a *BundleError", err, err)
			}
			if be.Path != path || be.NoCompiler != tc.noCompiler {
				t.Errorf("%+v, want path %s, NoCompiler %v", be, path, tc.noCompiler)
			}
			if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "truncated or corrupt") {
				t.Errorf("message %q does not name the file and say it is damaged", msg)
			}
		})
	}
}
