package engine

import (
	"os"
	"reflect"
	"regexp"
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

// findVerifies finds what the whole-text search of incrVerifyRE (without
// its anchor) finds, up to two matches: in every core's bundle and in
// texts that put names, dots and repeats around the literal.
func TestFindVerifiesMatchesRegexp(t *testing.T) {
	const m = `a.verifyObjectMatchesProto(b.dataform.CompiledGraph,c,d.VerifyProtoErrorBehaviour.SUGGEST_REPORTING_TO_DATAFORM_TEAM)`
	texts := map[string]string{
		"alone":           m,
		"long name":       strings.Repeat("x", 300) + m,
		"after a dot":     "q." + m + ";",
		"dollar names":    "$" + m,
		"no name":         ";" + m[1:],
		"twice":           m + ";" + m,
		"three times":     m + m + m,
		"back to back":    m + "x" + m[1:],
		"literal only":    "f" + incrVerifyLit + ")",
		"cut short":       m[:len(m)-1],
		"literal then it": "g" + incrVerifyLit + m,
	}
	for _, v := range []string{"3.0.62", "3.0.59", "3.0.52"} {
		b, err := os.ReadFile(testenv.CoreDir(t, v) + "/bundle.js")
		if err != nil {
			t.Fatal(err)
		}
		texts["core "+v] = string(b)
	}
	whole := regexp.MustCompile(strings.TrimPrefix(incrVerifyRE.String(), "^"))
	for name, text := range texts {
		t.Run(name, func(t *testing.T) {
			want := whole.FindAllStringIndex(text, 2)
			if got := findVerifies(text); !reflect.DeepEqual(got, want) {
				t.Errorf("findVerifies = %v, the whole-text search %v", got, want)
			}
		})
	}
}

func FuzzFindVerifies(f *testing.F) {
	const m = `a.verifyObjectMatchesProto(b.dataform.CompiledGraph,c,d.VerifyProtoErrorBehaviour.SUGGEST_REPORTING_TO_DATAFORM_TEAM)`
	f.Add("x" + m + m)
	f.Add(";" + m[1:] + "$" + m)
	whole := regexp.MustCompile(strings.TrimPrefix(incrVerifyRE.String(), "^"))
	f.Fuzz(func(t *testing.T, text string) {
		want := whole.FindAllStringIndex(text, 2)
		if got := findVerifies(text); !reflect.DeepEqual(got, want) {
			t.Errorf("findVerifies(%q) = %v, the whole-text search %v", text, got, want)
		}
	})
}
