//go:build linux

package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
)

// diagnosticsResult is what -mode diagnostics prints: how long an edit
// takes to show in the diagnostics, from didChange to the
// publishDiagnostics that reflects it, with the server's defaults (no
// settings sent, no engine chosen) unless -serve-args or -debounce-ms say
// otherwise.
type diagnosticsResult struct {
	Project    string  `json:"project"`
	ServeArgs  string  `json:"serveArgs"`
	DebounceMs int     `json:"debounceMs,omitempty"` // 0: the server's default
	EditedFile string  `json:"editedFile"`
	OpenMs     float64 `json:"openMs"`
	// AfterPauseMs: an incremental edit made -pause after the previous
	// one's diagnostics arrived, alternately adding and removing an
	// unknown config property (core's error), until the file's
	// diagnostics show it.
	AfterPauseMs []float64   `json:"afterPauseMs"`
	AfterPause   Percentiles `json:"afterPause"`
	// TypingMs: the same, for the last of -typing keystrokes made
	// -typing-gap apart (typing in a comment, then the edit that changes
	// the diagnostics).
	TypingMs []float64   `json:"typingMs"`
	Typing   Percentiles `json:"typing"`
}

const brokenProperty = "descripton" // core: unexpected property

func runDiagnostics(ctx context.Context, dfd, root, file string, runs int, serveArgs []string, debounceMs int, pause, typingGap time.Duration, typing int) (*diagnosticsResult, error) {
	var settings map[string]any
	if debounceMs > 0 {
		settings = map[string]any{"debounceMs": debounceMs}
	}
	s, err := startSession(ctx, dfd, serveArgs, settings)
	if err != nil {
		return nil, err
	}
	defer s.close(ctx)
	res := &diagnosticsResult{Project: root, ServeArgs: strings.Join(serveArgs, " "), DebounceMs: debounceMs, EditedFile: rel(root, file)}
	open, err := s.open(ctx, root)
	if err != nil {
		return nil, err
	}
	res.OpenMs = ms(open)
	if err := s.ed.Open(ctx, file); err != nil {
		return nil, s.fail(err)
	}
	text := s.ed.Text(file)
	if !strings.HasPrefix(text, "config {") {
		return nil, fmt.Errorf("%s does not start with a config block", file)
	}
	u := uri.File(file)
	isBroken := func(ds []protocol.Diagnostic) bool {
		for _, d := range ds {
			if strings.Contains(fakeeditor.Message(d), brokenProperty) {
				return true
			}
		}
		return false
	}
	const fixed, broken = "config {", "config {\n  " + brokenProperty + ": \"lspbench\","
	// toggle makes the edit that changes the diagnostics and returns how
	// long until they show it.
	toggle := func() (time.Duration, error) {
		st := s.ed.Snapshot()
		published, wasBroken := st.Published[u], isBroken(st.Diagnostics[u])
		old, repl := fixed, broken
		if wasBroken {
			old, repl = broken, fixed
		}
		start := time.Now()
		if err := s.ed.Replace(ctx, file, old, repl); err != nil {
			return 0, err
		}
		err := s.ed.Await(ctx, "diagnostics of "+rel(root, file), func(st *fakeeditor.State) bool {
			return st.Published[u] > published && isBroken(st.Diagnostics[u]) != wasBroken
		})
		return time.Since(start), err
	}
	// One untimed round first.
	for i := -1; i < runs; i++ {
		time.Sleep(pause)
		d, err := toggle()
		if err != nil {
			return nil, s.fail(err)
		}
		if i >= 0 {
			res.AfterPauseMs = append(res.AfterPauseMs, ms(d))
		}
	}
	if typing > 0 {
		// Keystrokes go into a comment line at the end of the file.
		const marker = "-- lspbench typing "
		typed := ""
		if err := s.ed.SetText(ctx, file, strings.TrimRight(s.ed.Text(file), "\n")+"\n"+marker+"\n"); err != nil {
			return nil, s.fail(err)
		}
		for i := -1; i < runs; i++ {
			time.Sleep(pause)
			for k := 0; k < typing-1; k++ {
				if err := s.ed.Replace(ctx, file, marker+typed+"\n", marker+typed+"x\n"); err != nil {
					return nil, s.fail(err)
				}
				typed += "x"
				time.Sleep(typingGap)
			}
			d, err := toggle()
			if err != nil {
				return nil, s.fail(err)
			}
			if i >= 0 {
				res.TypingMs = append(res.TypingMs, ms(d))
			}
		}
	}
	res.AfterPause, res.Typing = percentiles(res.AfterPauseMs), percentiles(res.TypingMs)
	return res, nil
}
