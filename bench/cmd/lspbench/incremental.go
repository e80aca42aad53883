//go:build linux

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// incrementalResult is what -mode incremental prints: edit → diagnostics
// (as -mode diagnostics measures it) on `dfd serve` processes side by side
// on the same project: compiles on goja and on Node.js (what --engine=auto
// picks for such projects), each in full and with incremental compiles
// (dfd.incremental), as -variants chooses. The edits go in blocks
// of -cost-block per daemon, rotating, so that a shared machine's load
// falls on all alike; the first edits of the incremental daemon are its
// learning ones (3 verified before it trusts the project), so the untimed
// warm-up is longer there.
type incrementalResult struct {
	Project    string               `json:"project"`
	DebounceMs int                  `json:"debounceMs,omitempty"`
	EditedFile string               `json:"editedFile"`
	Variants   []incrementalVariant `json:"variants"`
}

type incrementalVariant struct {
	Engine      string `json:"engine"`
	Incremental bool   `json:"incremental"`
	// Status is dfd/status's incremental object for the project at the
	// end (state, counts): the incremental daemon must say "trusted", or
	// its figures are of full compiles.
	Status       json.RawMessage `json:"status,omitempty"`
	OpenMs       float64         `json:"openMs"`
	AfterPauseMs []float64       `json:"afterPauseMs"`
	AfterPause   Percentiles     `json:"afterPause"`
	TypingMs     []float64       `json:"typingMs"`
	Typing       Percentiles     `json:"typing"`
	// PeakRSSKiB is the largest RSS of the daemon and its workers, summed,
	// sampled every 25 ms from the first compile to the end: with
	// incremental compiles it includes the kept context.
	PeakRSSKiB int64 `json:"peakRssKiB"`
	// EditsPeakRSSKiB is the same peak over the edits only (from the
	// first edit of any daemon): the steady state, without the opening
	// compile's garbage.
	EditsPeakRSSKiB int64 `json:"editsPeakRssKiB"`
	// SettledRSSKiB is the summed RSS once the edits are over and the
	// daemon is idle (-settle after the last edit): what the kept
	// context costs, apart from the collectors' timing.
	SettledRSSKiB int64 `json:"settledRssKiB"`
}

// settleTime is how long after the last edit the settled RSS is taken:
// past a background verification (a full compile, 1.5 s at 3,000
// actions) and, given long enough, V8's memory reducer, which gives an
// idle worker's heap back after some seconds.
var settleTime = flag.Duration("settle", 30*time.Second, "-mode incremental: how long after the last edit the settled RSS is sampled")

var incrVariants = flag.String("variants", "goja,goja+incremental,node,node+incremental", "-mode incremental: the daemons, comma-separated: an engine (goja, node), +incremental for dfd.incremental")

// learningEdits are the untimed edits before the timed ones: more than
// the 3 an incremental daemon verifies before it trusts a project.
const learningEdits = 5

func runIncremental(ctx context.Context, dfd, root, file string, runs int, debounceMs int, pause, typingGap time.Duration, typing int) (*incrementalResult, error) {
	scratch, err := os.MkdirTemp("", "lspbench-incremental-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	type variant struct {
		engine      string
		incremental bool
	}
	var variants []variant
	for _, name := range strings.Split(*incrVariants, ",") {
		engine, incr := strings.CutSuffix(strings.TrimSpace(name), "+incremental")
		if engine != "goja" && engine != "node" {
			return nil, fmt.Errorf("-variants: %q is not goja or node, with or without +incremental", name)
		}
		if engine == "node" {
			if _, err := exec.LookPath("node"); err != nil {
				return nil, fmt.Errorf("-variants %s: node is not on PATH", name)
			}
		}
		variants = append(variants, variant{engine, incr})
	}
	res := &incrementalResult{Project: root, DebounceMs: debounceMs, EditedFile: rel(root, file)}
	ds := make([]*differ, len(variants))
	mems := make([]*sampler, len(variants))
	var memWG sync.WaitGroup
	defer func() {
		for _, m := range mems {
			if m != nil {
				close(m.stop)
			}
		}
		memWG.Wait()
	}()
	for i, v := range variants {
		settings := map[string]any{"incremental": v.incremental}
		if debounceMs > 0 {
			settings["debounceMs"] = debounceMs
		}
		cache := filepath.Join(scratch, fmt.Sprintf("cache-%d", i))
		s, err := startSession(ctx, dfd, []string{"--engine=" + v.engine}, settings, "XDG_CACHE_HOME="+cache)
		if err != nil {
			return nil, err
		}
		defer s.close(ctx)
		mems[i] = startSampler(s.cmd.Process.Pid, &memWG)
		d, open, err := openDiffer(ctx, s, root, file, true)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.engine, err)
		}
		ds[i] = d
		res.Variants = append(res.Variants, incrementalVariant{Engine: v.engine, Incremental: v.incremental, OpenMs: ms(open)})
	}
	edits := make([]*sampler, len(mems))
	for i, v := range mems {
		edits[i] = startSampler(v.pid, &memWG)
	}
	defer func() {
		for _, m := range edits {
			close(m.stop)
		}
	}()
	type edit func(d *differ) (time.Duration, error)
	session := func(what string, untimed int, do edit, record func(i int, t time.Duration)) error {
		return inBlocks(runs+untimed, len(ds), pause, func(i, e int) error {
			t, err := do(ds[i])
			if err != nil {
				return ds[i].s.fail(fmt.Errorf("%s (%s, incremental %v): %w", what, variants[i].engine, variants[i].incremental, err))
			}
			if e >= untimed {
				record(i, t)
			}
			return nil
		})
	}
	err = session("after a pause", learningEdits, func(d *differ) (time.Duration, error) { return d.toggle(ctx) }, func(i int, t time.Duration) {
		res.Variants[i].AfterPauseMs = append(res.Variants[i].AfterPauseMs, ms(t))
	})
	if err != nil {
		return nil, err
	}
	if typing > 0 {
		for _, d := range ds {
			if err := d.startTyping(ctx); err != nil {
				return nil, d.s.fail(err)
			}
		}
		err = session("typing", 1, func(d *differ) (time.Duration, error) { return d.burst(ctx, typing, typingGap) }, func(i int, t time.Duration) {
			res.Variants[i].TypingMs = append(res.Variants[i].TypingMs, ms(t))
		})
		if err != nil {
			return nil, err
		}
	}
	time.Sleep(*settleTime)
	for i, d := range ds {
		v := &res.Variants[i]
		v.AfterPause, v.Typing = percentiles(v.AfterPauseMs), percentiles(v.TypingMs)
		v.PeakRSSKiB, _ = mems[i].peak()
		v.EditsPeakRSSKiB, _ = edits[i].peak()
		v.SettledRSSKiB, _ = treeRSS(mems[i].pid)
		var st struct {
			Projects []struct {
				Incremental json.RawMessage `json:"incremental"`
			} `json:"projects"`
		}
		if err := d.s.ed.Call(ctx, "dfd/status", map[string]any{}, &st); err != nil {
			return nil, d.s.fail(fmt.Errorf("dfd/status: %w", err))
		}
		if len(st.Projects) > 0 {
			v.Status = st.Projects[0].Incremental
		}
	}
	return res, nil
}
