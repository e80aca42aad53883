package daemon

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/regfile"
	"github.com/dfdtools/dfd/project"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/workspace"
)

// Incremental compiles, as the daemon verifies them (docs/architecture.md,
// "Incremental compiles"). The runner re-runs an edited definitions file
// in its kept context (engine.Keeper); here every such result is compared
// byte for byte with a full compile of the same buffers:
//   - until trustAfter results of the project matched, the full result is
//     what is published and the incremental one is only compared;
//   - after that the incremental result is published at once and the full
//     compile runs in the background (cancelled by the next one: only the
//     newest is verified), never in the way of the next compile;
//   - a mismatch publishes the full result (a recompile is asked for),
//     switches the project to full compiles, remembers that across
//     restarts (keyed by root and core version), and logs which file and
//     action differed.

// trustAfter is how many incremental results must match their full
// compiles before they are published first.
const trustAfter = 3

// verifyAfter is how long no newer compile must start before a published
// incremental result's verification does: the server's default debounce,
// the gap under which edits count as typing.
const verifyAfter = 150 * time.Millisecond

// incrementalState is one open project's incremental compiles.
type incrementalState struct {
	op *openProject

	mu        sync.Mutex // guards the fields below
	st        workspace.IncrementalStatus
	trusted   bool
	fellBack  string // why the project compiles in full; persisted
	noEngine  string // why the runner has no incremental compiles
	recompile func()
	vcancel   context.CancelFunc // the background verification running
	verifies  int                // background verifications finished
	verifyCPU time.Duration      // their engine time, summed

	wg sync.WaitGroup // background verifications
}

func (in *incrementalState) init(op *openProject) {
	in.op = op
	if why := readFallback(op.p.Root, op.core.Version); why != "" {
		in.fellBack = why
	}
}

// SetRecompile implements workspace.RecompileNotifier.
func (op *openProject) SetRecompile(f func()) {
	op.incr.mu.Lock()
	op.incr.recompile = f
	op.incr.mu.Unlock()
}

// mode is how the next compile uses the runner's kept context.
func (in *incrementalState) mode() engine.Mode {
	if !in.op.b.currentSettings().Incremental {
		return engine.ModeFull
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.fellBack != "" || in.noEngine != "" {
		return engine.ModeFull
	}
	return engine.ModeIncremental
}

// after decides what a compile in mode publishes: res, or the full compile
// it was verified against.
func (in *incrementalState) after(ctx context.Context, job CompileJob, res *compile.Result) (*compile.Result, error) {
	if job.Mode != engine.ModeIncremental {
		return res, nil
	}
	out := res.Incremental
	in.mu.Lock()
	if out == nil {
		in.noEngine = "the engine of this project's workers has no incremental compiles"
		in.mu.Unlock()
		return res, nil
	}
	if !out.Rerun {
		in.st.Full++
		in.st.LastFull = out.Reason
		in.mu.Unlock()
		in.op.b.log.Debug("compiled in full, not incrementally", "project", in.op.p.Root, "reason", out.Reason)
		return res, nil
	}
	in.st.Incremental++
	trusted := in.trusted
	in.mu.Unlock()
	if ctx.Err() != nil {
		// A rerun canceled by a newer edit that still finished (the
		// engine lets it, to keep its context): superseded, so nobody
		// sees it and there is nothing to verify.
		return res, nil
	}

	verify := job
	verify.Mode = engine.ModeFullHooked
	if trusted {
		in.verifyLater(verify, res.GraphWire, out.File)
		return res, nil
	}
	full, err := in.op.runner.Compile(ctx, verify)
	if err != nil {
		return nil, err
	}
	in.compare(out.File, res.GraphWire, full)
	return full, nil
}

// verifyLater runs the full compile of job in the background and compares
// it with an incremental result already published; a newer one cancels it.
func (in *incrementalState) verifyLater(job CompileJob, incr []byte, file string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.vcancel != nil {
		in.vcancel()
	}
	ctx, cancel := context.WithCancel(in.op.bg.ctx)
	in.vcancel = cancel
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		defer cancel()
		// Not while edits keep coming: the next one would cancel it, and
		// on a small machine a full compile started between keystrokes
		// takes CPU from the rerun of the next one.
		t := time.NewTimer(verifyAfter)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		full, err := in.op.runner.Compile(ctx, job)
		if err != nil {
			return // superseded or failed: the next incremental result is verified
		}
		in.mu.Lock()
		in.verifies++
		in.verifyCPU += full.Run
		in.mu.Unlock()
		if !in.compare(file, incr, full) {
			in.mu.Lock()
			f := in.recompile
			in.mu.Unlock()
			if f != nil {
				f() // the next compile is a full one: it publishes the full result
			}
		}
	}()
}

// compare records whether an incremental result equals the full compile's
// and reports it.
func (in *incrementalState) compare(file string, incr []byte, full *compile.Result) bool {
	if bytes.Equal(incr, full.GraphWire) {
		in.mu.Lock()
		in.st.Matched++
		if in.st.Matched >= trustAfter {
			in.trusted = true
		}
		in.mu.Unlock()
		return true
	}
	diff := graphDifference(incr, full.GraphWire)
	why := fmt.Sprintf("an incremental compile after an edit of %s differed from the full compile: %s", orNone(file), diff)
	in.mu.Lock()
	in.st.Mismatched++
	in.fellBack = why
	in.trusted = false
	in.mu.Unlock()
	in.op.b.log.Warn("incremental compiles off for this project: "+why, "project", in.op.p.Root, "file", file)
	writeFallback(in.op.p.Root, in.op.core.Version, why)
	return false
}

func orNone(file string) string {
	if file == "" {
		return "no file (nothing changed)"
	}
	return file
}

// status is the project's part of dfd/status.
func (in *incrementalState) status() *workspace.IncrementalStatus {
	st := func() workspace.IncrementalStatus {
		in.mu.Lock()
		defer in.mu.Unlock()
		s := in.st
		switch {
		case in.fellBack != "":
			s.State, s.Detail = workspace.IncrementalFellBack, in.fellBack
		case in.noEngine != "":
			s.State, s.Detail = workspace.IncrementalNone, in.noEngine
		case in.trusted:
			s.State = workspace.IncrementalTrusted
		default:
			s.State = workspace.IncrementalLearning
			s.Detail = fmt.Sprintf("%d of %d incremental results matched their full compiles; full results are published until then", s.Matched, trustAfter)
		}
		if in.verifies > 0 {
			s.VerifyMs = float64(in.verifyCPU.Microseconds()) / 1000 / float64(in.verifies)
		}
		return s
	}()
	if !in.op.b.currentSettings().Incremental {
		st.State, st.Detail = workspace.IncrementalOff, "dfd.incremental is false"
	}
	return &st
}

// cancelVerify cancels the background verification: a newer compile
// starts, and a verification must never take CPU from it (the newer
// result is verified instead).
func (in *incrementalState) cancelVerify() {
	in.mu.Lock()
	if in.vcancel != nil {
		in.vcancel()
		in.vcancel = nil
	}
	in.mu.Unlock()
}

// stop cancels a background verification and waits for it.
func (in *incrementalState) stop() {
	in.mu.Lock()
	if in.vcancel != nil {
		in.vcancel()
	}
	in.mu.Unlock()
	in.wg.Wait()
}

// graphDifference names the first action (or error) whose encoding differs
// between two encoded CompiledGraphs.
func graphDifference(a, b []byte) string {
	var ga, gb dataformpb.CompiledGraph
	if err := proto.Unmarshal(a, &ga); err != nil {
		return "the incremental graph does not decode: " + err.Error()
	}
	if err := proto.Unmarshal(b, &gb); err != nil {
		return "the full graph does not decode: " + err.Error()
	}
	type item struct {
		what string
		m    proto.Message
	}
	target := func(t *dataformpb.Target) string {
		if t == nil {
			return "?"
		}
		return t.GetDatabase() + "." + t.GetSchema() + "." + t.GetName()
	}
	list := func(g *dataformpb.CompiledGraph) []item {
		var out []item
		for _, x := range g.GetTables() {
			out = append(out, item{"action " + target(x.GetTarget()) + " (" + x.GetFileName() + ")", x})
		}
		for _, x := range g.GetOperations() {
			out = append(out, item{"action " + target(x.GetTarget()) + " (" + x.GetFileName() + ")", x})
		}
		for _, x := range g.GetAssertions() {
			out = append(out, item{"action " + target(x.GetTarget()) + " (" + x.GetFileName() + ")", x})
		}
		for _, x := range g.GetDeclarations() {
			out = append(out, item{"action " + target(x.GetTarget()) + " (" + x.GetFileName() + ")", x})
		}
		for _, x := range g.GetTests() {
			out = append(out, item{"test " + x.GetName() + " (" + x.GetFileName() + ")", x})
		}
		for _, x := range g.GetNotebooks() {
			out = append(out, item{"action " + target(x.GetTarget()) + " (" + x.GetFileName() + ")", x})
		}
		for _, x := range g.GetDataPreparations() {
			out = append(out, item{"action " + target(x.GetTarget()) + " (" + x.GetFileName() + ")", x})
		}
		for _, x := range g.GetGraphErrors().GetCompilationErrors() {
			out = append(out, item{"compilation error in " + x.GetFileName() + " (" + x.GetMessage() + ")", x})
		}
		return out
	}
	la, lb := list(&ga), list(&gb)
	for i := 0; i < min(len(la), len(lb)); i++ {
		if la[i].what != lb[i].what {
			return fmt.Sprintf("%s where the full compile has %s", la[i].what, lb[i].what)
		}
		if !proto.Equal(la[i].m, lb[i].m) {
			return la[i].what + " differs"
		}
	}
	if len(la) != len(lb) {
		return fmt.Sprintf("%d actions and errors against the full compile's %d", len(la), len(lb))
	}
	return "the graphs' other fields differ (project config, targets, jitData)"
}

// fallbackFile is where root's fall-back to full compiles is remembered
// ("" without a cache directory).
func fallbackFile(root string) string {
	dir, err := project.CacheDir()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, "incremental-fallback", hex.EncodeToString(sum[:12])+".json")
}

type fallbackRecord struct {
	Core   string `json:"core"`
	Reason string `json:"reason"`
	At     string `json:"at"`
}

// writeFallback remembers that root compiles in full with core; failing
// to write it costs only the memory of it.
func writeFallback(root, core, why string) {
	file := fallbackFile(root)
	if file == "" {
		return
	}
	b, err := json.Marshal(fallbackRecord{Core: core, Reason: why, At: time.Now().UTC().Format(time.RFC3339)})
	if err != nil || os.MkdirAll(filepath.Dir(file), 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".fallback-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), file) != nil {
		_ = os.Remove(tmp.Name())
	}
}

// readFallback is why root fell back to full compiles with core, or "":
// another core version tries incremental compiles again.
func readFallback(root, core string) string {
	file := fallbackFile(root)
	if file == "" {
		return ""
	}
	b, err := regfile.ReadFile(file)
	if err != nil {
		return ""
	}
	var r fallbackRecord
	if json.Unmarshal(b, &r) != nil || r.Core != core || r.Reason == "" {
		return ""
	}
	return r.Reason + " (remembered from " + r.At + "; delete " + file + " to try again)"
}
