//go:build linux

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
)

// costResult is what -mode cost prints: edit → diagnostics (as -mode
// diagnostics measures it) on three `dfd serve` processes running side by
// side on the same project: the metadata source `snapshot`; `bigquery`
// against a bqrecorder stand-in that holds every answer -bigquery-latency,
// with dfd.cost.enabled false (no dry runs); and the same with cost
// figures on, so that a dry run follows every edit that changes an
// action's SQL and is in flight when the next edit comes. The second is
// the control that tells the dry runs' share from the metadata source's.
// The edits rotate between the three (each round starts with the next
// one) so that the load of a shared machine falls on all alike.
type costResult struct {
	Project    string `json:"project"`
	ServeArgs  string `json:"serveArgs"`
	DebounceMs int    `json:"debounceMs,omitempty"`
	EditedFile string `json:"editedFile"`
	Snapshot   string `json:"snapshot"` // the snapshot variant's file
	LatencyMs  int64  `json:"latencyMs"`
	// DryRuns are the dry runs the stand-in answered over the session
	// (the cost figures of the last variant), Requests all its requests.
	DryRuns  int           `json:"dryRuns"`
	Requests int           `json:"requests"`
	Variants []costVariant `json:"variants"`
}

type costVariant struct {
	Source string `json:"source"` // snapshot or bigquery
	Cost   bool   `json:"cost"`   // dfd.cost.enabled
	// InFlightEdits are the timed edits (of the variant with cost
	// figures) made while the stand-in held a request: a dry run was in
	// flight.
	InFlightEdits int         `json:"inFlightEdits,omitempty"`
	OpenMs        float64     `json:"openMs"`
	AfterPauseMs  []float64   `json:"afterPauseMs"`
	AfterPause    Percentiles `json:"afterPause"`
	TypingMs      []float64   `json:"typingMs"`
	Typing        Percentiles `json:"typing"`
}

var (
	bqLatency = flag.Duration("bigquery-latency", 200*time.Millisecond, "-mode cost: how long the BigQuery stand-in holds every answer")
	costBlock = flag.Int("cost-block", 5, "-mode cost: edits per daemon before the next one's")
	snapshot  = flag.String("snapshot", "", "-mode cost: the snapshot variant's file (default: the project's metadata.json, else an empty snapshot)")
)

// inBlocks makes n edits on each of daemons in blocks of -cost-block,
// each block's first daemon rotating, so that a shared machine's load
// falls on all alike; each edit comes pause after the previous one and
// gets its daemon and its index among that daemon's edits.
func inBlocks(n, daemons int, pause time.Duration, edit func(i, e int) error) error {
	for first := 0; first < n; first += *costBlock {
		for k := range daemons {
			i := (first / *costBlock + k) % daemons
			for e := first; e < min(first+*costBlock, n); e++ {
				time.Sleep(pause)
				if err := edit(i, e); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func runCost(ctx context.Context, dfd, root, file string, runs int, serveArgs []string, debounceMs int, pause, typingGap time.Duration, typing int) (*costResult, error) {
	scratch, err := os.MkdirTemp("", "lspbench-cost-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	snap := *snapshot
	if snap == "" {
		snap = filepath.Join(root, "metadata.json")
		if _, err := os.Stat(snap); err != nil {
			// No snapshot of the warehouse: an empty one, which answers
			// that it knows no table.
			snap = filepath.Join(scratch, "empty-snapshot.json")
			if err := os.WriteFile(snap, []byte(`{"tables": []}`+"\n"), 0o644); err != nil {
				return nil, err
			}
		}
	}
	if snap, err = filepath.Abs(snap); err != nil {
		return nil, err
	}
	rec, err := bqrecorder.Listen(bqrecorder.Options{Latency: *bqLatency})
	if err != nil {
		return nil, err
	}
	defer rec.Close()

	bq := func(cost bool) map[string]any {
		return map[string]any{"metadata": map[string]any{"source": "bigquery"}, "bigquery": map[string]any{"endpoint": rec.URL},
			"cost": map[string]any{"enabled": cost}}
	}
	variants := []struct {
		source   string
		cost     bool
		settings map[string]any
	}{
		{"snapshot", false, map[string]any{"metadata": map[string]any{"source": "snapshot", "snapshot": snap}}},
		{"bigquery", false, bq(false)},
		{"bigquery", true, bq(true)},
	}
	res := &costResult{Project: root, ServeArgs: strings.Join(serveArgs, " "), DebounceMs: debounceMs, EditedFile: rel(root, file),
		Snapshot: snap, LatencyMs: bqLatency.Milliseconds()}
	ds := make([]*differ, len(variants))
	for i, v := range variants {
		if debounceMs > 0 {
			v.settings["debounceMs"] = debounceMs
		}
		// Each daemon gets a cache directory of its own: the metadata and
		// cost caches start empty, and neither reads the other's.
		cache := filepath.Join(scratch, fmt.Sprintf("cache-%d", i))
		s, err := startSession(ctx, dfd, serveArgs, v.settings, "XDG_CACHE_HOME="+cache, "DFD_BIGQUERY_ENDPOINT=")
		if err != nil {
			return nil, err
		}
		defer s.close(ctx)
		d, open, err := openDiffer(ctx, s, root, file, true)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.source, err)
		}
		ds[i] = d
		res.Variants = append(res.Variants, costVariant{Source: v.source, Cost: v.cost, OpenMs: ms(open)})
	}
	// The edits go in blocks of -cost-block per daemon, each block's
	// first daemon rotating: within a block an edit comes -pause after
	// the same daemon's previous diagnostics, so that its dry run is in
	// flight (the stand-in says whether it was), and the blocks are short
	// enough that a shared machine's load falls on all three alike.
	type edit func(d *differ) (time.Duration, error)
	session := func(what string, do edit, record func(i int, t time.Duration, inFlight bool)) error {
		// One untimed edit first.
		return inBlocks(runs+1, len(ds), pause, func(i, e int) error {
			inFlight := rec.Holding() > 0
			t, err := do(ds[i])
			if err != nil {
				return ds[i].s.fail(fmt.Errorf("%s (%s, cost %v): %w", what, variants[i].source, variants[i].cost, err))
			}
			if e > 0 {
				record(i, t, inFlight)
			}
			return nil
		})
	}
	err = session("after a pause", func(d *differ) (time.Duration, error) { return d.toggle(ctx) }, func(i int, t time.Duration, inFlight bool) {
		v := &res.Variants[i]
		v.AfterPauseMs = append(v.AfterPauseMs, ms(t))
		if inFlight && v.Cost {
			v.InFlightEdits++
		}
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
		err = session("typing", func(d *differ) (time.Duration, error) { return d.burst(ctx, typing, typingGap) }, func(i int, t time.Duration, inFlight bool) {
			v := &res.Variants[i]
			v.TypingMs = append(v.TypingMs, ms(t))
			if inFlight && v.Cost {
				v.InFlightEdits++
			}
		})
		if err != nil {
			return nil, err
		}
	}
	for i := range res.Variants {
		v := &res.Variants[i]
		v.AfterPause, v.Typing = percentiles(v.AfterPauseMs), percentiles(v.TypingMs)
	}
	res.DryRuns, res.Requests = len(rec.DryRuns()), len(rec.Requests())

	if res.DryRuns == 0 {
		return nil, ds[2].s.fail(fmt.Errorf("the bigquery variant with cost figures sent no dry run: no cost figures were fetched, the comparison would show nothing"))
	}
	return res, nil
}
