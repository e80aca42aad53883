package main

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"time"
)

// Timings of the CLI's --watch: chokidar's awaitWriteFinish (a change
// counts once the files have been still for stabilityThreshold, checked
// every pollInterval), then the CLI's RECOMPILE_DELAY.
const (
	watchPoll      = 200 * time.Millisecond
	watchStability = time.Second
	watchDelay     = 500 * time.Millisecond
)

// watchProject is `dataform compile --watch` after the first compile: it
// prints "Watching for changes...", then, whenever something in dir
// changes (anything but node_modules, which the CLI's watcher ignores) and
// stays unchanged for a moment, recompiles (recompile prints, as the first
// compile did) and says so again. It polls the project's files itself and
// stops when ctx ends (SIGINT), with the CLI's exit status then, 1.
func watchProject(ctx context.Context, out cliOut, dir string, recompile func()) int {
	snap, err := snapshotProject(dir)
	if err != nil {
		out.printError("Error: "+err.Error(), 0)
		return 1
	}
	ready := func() { out.print("\nWatching for changes...\n") }
	ready()
	ticker := time.NewTicker(watchPoll)
	defer ticker.Stop()
	var changedAt time.Time
	pending := false
	for {
		select {
		case <-ctx.Done():
			return 1
		case <-ticker.C:
		}
		cur, err := snapshotProject(dir)
		if err != nil {
			continue // a file went away while it was listed: look again
		}
		if !sameSnapshot(cur, snap) {
			snap, changedAt, pending = cur, time.Now(), true
			continue
		}
		if pending && time.Since(changedAt) >= watchStability+watchDelay {
			pending = false
			recompile()
			if ctx.Err() != nil {
				return 1
			}
			ready()
		}
	}
}

type fileState struct {
	size    int64
	modTime time.Time
	mode    fs.FileMode
}

// snapshotProject is what the watcher compares: every path under dir that
// does not contain "node_modules" (chokidar's `ignored: /node_modules/`),
// with its size, modification time and mode.
func snapshotProject(dir string) (map[string]fileState, error) {
	snap := map[string]fileState{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(filepath.ToSlash(p), "node_modules") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		snap[p] = fileState{fi.Size(), fi.ModTime(), fi.Mode()}
		return nil
	})
	return snap, err
}

func sameSnapshot(a, b map[string]fileState) bool {
	if len(a) != len(b) {
		return false
	}
	for p, s := range a {
		if t, ok := b[p]; !ok || !s.modTime.Equal(t.modTime) || s.size != t.size || s.mode != t.mode {
			return false
		}
	}
	return true
}
