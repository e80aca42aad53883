package incrtest

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Compiler compiles a project both ways after an edit: in full, as the
// host's verification does, and incrementally (falling back to a full
// compile it keeps, as a worker does).
type Compiler interface {
	Compile(paths []string) (full, incr []byte, fullErr, incrErr error)
	// Counts are the incremental side's compiles so far: re-runs of one
	// file, and full compiles by reason.
	Counts() (incremental int, full map[string]int)
}

// Run makes steps random edits of p and checks after the first compile
// and after each edit that the incremental result is the full compile's,
// byte for byte (errors included).
func Run(t *testing.T, p *Project, c Compiler, steps int) {
	t.Helper()
	check := func(what string) {
		t.Helper()
		Check(t, c, p.Paths(), what)
	}
	check("initial compile")
	for i := range steps {
		e, err := p.Step()
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("step %d (%s)", i, e))
	}
	n, full := c.Counts()
	t.Logf("%d incremental, full: %v", n, full)
	if n < steps/2 {
		t.Errorf("only %d of %d edits compiled incrementally: the test compares too few", n, steps)
	}
}

// RunOps is Run for fuzz targets: each byte of ops picks the kind of the
// next edit (Kinds, modulo; at most 12 edits), and kinds the project has
// no place for are skipped.
func RunOps(t *testing.T, p *Project, c Compiler, ops []byte) {
	t.Helper()
	if len(ops) > 12 {
		ops = ops[:12]
	}
	kinds := Kinds()
	Check(t, c, p.Paths(), "initial compile")
	var done []string
	for _, op := range ops {
		e, ok, err := p.StepKind(kinds[int(op)%len(kinds)])
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			continue
		}
		done = append(done, e.String())
		Check(t, c, p.Paths(), strings.Join(done, " → "))
	}
}

// Check compiles paths both ways with c and fails t, naming what was
// compiled, unless the incremental result is the full compile's byte for
// byte, errors included. It returns the full compile's result.
func Check(t testing.TB, c Compiler, paths []string, what string) []byte {
	t.Helper()
	full, incr, fullErr, incrErr := c.Compile(paths)
	if fmt.Sprint(fullErr) != fmt.Sprint(incrErr) {
		t.Fatalf("%s: full compile error %v, incremental %v", what, fullErr, incrErr)
	}
	if !bytes.Equal(full, incr) {
		t.Fatalf("%s: incremental result differs from the full compile's:\n%s", what, GraphDiff(full, incr))
	}
	return full
}

// Steps is how many edits a differential sequence makes: def (10 with
// -short), or $DFD_INCR_STEPS. The sequences of at least 200 edits the
// docs report are DFD_INCR_STEPS=200 runs: every run of the packages
// cannot afford them (a real project's 200 took 400 s on goja on the
// shared machine).
func Steps(def int) int {
	if n, err := strconv.Atoi(os.Getenv("DFD_INCR_STEPS")); err == nil && n > 0 {
		return n
	}
	if testing.Short() {
		return min(def, 10)
	}
	return def
}

// ReasonKind is a short form of why a compile was not incremental, to
// count them by.
func ReasonKind(why string) string {
	if len(why) > 60 {
		why = why[:60]
	}
	return why
}

// GraphDiff names the first differing action or error of two encoded
// compile responses.
func GraphDiff(a, b []byte) string {
	var ra, rb dataformpb.CoreExecutionResponse
	if err := proto.Unmarshal(a, &ra); err != nil {
		return err.Error()
	}
	if err := proto.Unmarshal(b, &rb); err != nil {
		return err.Error()
	}
	ga, gb := ra.GetCompile().GetCompiledGraph(), rb.GetCompile().GetCompiledGraph()
	type item struct {
		key string
		m   proto.Message
	}
	list := func(g *dataformpb.CompiledGraph) []item {
		var out []item
		for _, x := range g.GetTables() {
			out = append(out, item{"table " + x.GetTarget().String(), x})
		}
		for _, x := range g.GetOperations() {
			out = append(out, item{"operation " + x.GetTarget().String(), x})
		}
		for _, x := range g.GetAssertions() {
			out = append(out, item{"assertion " + x.GetTarget().String(), x})
		}
		for _, x := range g.GetDeclarations() {
			out = append(out, item{"declaration " + x.GetTarget().String(), x})
		}
		for _, x := range g.GetTests() {
			out = append(out, item{"test " + x.GetName(), x})
		}
		for _, x := range g.GetGraphErrors().GetCompilationErrors() {
			out = append(out, item{"error " + x.GetFileName(), x})
		}
		return out
	}
	la, lb := list(ga), list(gb)
	for i := 0; i < max(len(la), len(lb)); i++ {
		if i >= len(la) || i >= len(lb) {
			var ka, kb []string
			for _, x := range la {
				ka = append(ka, x.key)
			}
			for _, x := range lb {
				kb = append(kb, x.key)
			}
			return fmt.Sprintf("%d items against %d:\nfull: %s\nincremental: %s", len(la), len(lb), strings.Join(ka, "; "), strings.Join(kb, "; "))
		}
		if la[i].key != lb[i].key || !proto.Equal(la[i].m, lb[i].m) {
			return fmt.Sprintf("full: %s %v\nincremental: %s %v", la[i].key, la[i].m, lb[i].key, lb[i].m)
		}
	}
	return "graphs equal as messages; bytes differ"
}
