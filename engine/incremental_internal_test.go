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

// findVerifies and findGraphs find what the whole-text search of their
// expressions (without the anchor) finds, up to two matches: in every
// core's bundle and in texts that put names, dots and repeats around a
// match.
func TestFindAroundMatchesRegexp(t *testing.T) {
	cores := coreBundles(t)
	for _, f := range findAroundCases {
		texts := map[string]string{
			"alone":         f.match,
			"long name":     strings.Repeat("x", 300) + f.match,
			"after a dot":   "q." + f.match + ";",
			"dollar names":  "$" + f.match,
			"twice":         f.match + ";" + f.match,
			"three times":   f.match + f.match + f.match,
			"back to back":  f.match + "x" + f.match[1:],
			"literal only":  "f" + f.lit + ")",
			"cut short":     f.match[:len(f.match)-1],
			"literal first": "g" + f.lit + f.match,
			"no first name": strings.Replace(f.match, "a"+f.lit, f.lit, 1),
			"names joined":  strings.Replace(f.match, "=", "", 1),
			"constant":      strings.Replace(f.match, "const ", "xconst ", 1),
		}
		for v, text := range cores {
			texts["core "+v] = text
		}
		whole := regexp.MustCompile(strings.TrimPrefix(f.re.String(), "^"))
		for name, text := range texts {
			t.Run(f.name+"/"+name, func(t *testing.T) {
				want := whole.FindAllStringSubmatchIndex(text, 2)
				if got := f.find(text); !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %v, the whole-text search %v", f.name, got, want)
				}
			})
		}
	}
}

var findAroundCases = []struct {
	name, match, lit string
	re               *regexp.Regexp
	find             func(string) [][]int
}{
	{"findVerifies", `a.verifyObjectMatchesProto(b.dataform.CompiledGraph,c,d.VerifyProtoErrorBehaviour.SUGGEST_REPORTING_TO_DATAFORM_TEAM)`,
		incrVerifyLit, incrVerifyRE, findVerifies},
	{"findGraphs", `const z=a.dataform.CoreExecutionResponse.create({compile:{compiledGraph:s.compile()}});`,
		incrGraphLit, incrGraphRE, findGraphs},
}

func FuzzFindAround(f *testing.F) {
	for _, c := range findAroundCases {
		f.Add("x" + c.match + c.match)
		f.Add(";" + c.match[1:] + "$" + c.match)
	}
	var whole []*regexp.Regexp
	for _, c := range findAroundCases {
		whole = append(whole, regexp.MustCompile(strings.TrimPrefix(c.re.String(), "^")))
	}
	f.Fuzz(func(t *testing.T, text string) {
		for k, c := range findAroundCases {
			want := whole[k].FindAllStringSubmatchIndex(text, 2)
			if got := c.find(text); !reflect.DeepEqual(got, want) {
				t.Errorf("%s(%q) = %v, the whole-text search %v", c.name, text, got, want)
			}
		}
	})
}
