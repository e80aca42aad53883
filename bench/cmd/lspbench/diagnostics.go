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
	d, open, err := openDiffer(ctx, s, root, file, false)
	if err != nil {
		return nil, err
	}
	res.OpenMs = ms(open)
	// Untimed rounds first: as many as an incremental daemon's learning
	// edits (dfd.incremental is on by default), so that the timed ones
	// measure the steady state an editing session is in.
	for i := -learningEdits; i < runs; i++ {
		time.Sleep(pause)
		t, err := d.toggle(ctx)
		if err != nil {
			return nil, s.fail(err)
		}
		if i >= 0 {
			res.AfterPauseMs = append(res.AfterPauseMs, ms(t))
		}
	}
	if typing > 0 {
		if err := d.startTyping(ctx); err != nil {
			return nil, s.fail(err)
		}
		for i := -1; i < runs; i++ {
			time.Sleep(pause)
			t, err := d.burst(ctx, typing, typingGap)
			if err != nil {
				return nil, s.fail(err)
			}
			if i >= 0 {
				res.TypingMs = append(res.TypingMs, ms(t))
			}
		}
	}
	res.AfterPause, res.Typing = percentiles(res.AfterPauseMs), percentiles(res.TypingMs)
	return res, nil
}

// differ makes edits of one open .sqlx file that change its diagnostics
// and times them: didChange → the publishDiagnostics that shows them.
type differ struct {
	s          *session
	root, file string
	u          uri.URI
	// sqlToo makes every toggle change the action's SQL as well (a comment
	// line with a counter), so that each edit has a statement BigQuery has
	// not seen: -mode cost, where a dry run follows every edit.
	sqlToo bool
	edits  int
	typed  string
}

const typingMarker = "-- lspbench typing "

// editTimeout bounds the wait for one edit's diagnostics: minutes more
// than the slowest compile measured (3,000 actions, ≈2 s).
const editTimeout = 2 * time.Minute

// openDiffer initializes s on root, waits for its first compile (how long
// that took is returned) and opens file.
func openDiffer(ctx context.Context, s *session, root, file string, sqlToo bool) (*differ, time.Duration, error) {
	open, err := s.open(ctx, root)
	if err != nil {
		return nil, 0, err
	}
	if err := s.ed.Open(ctx, file); err != nil {
		return nil, 0, s.fail(err)
	}
	if !strings.HasPrefix(s.ed.Text(file), "config {") {
		return nil, 0, fmt.Errorf("%s does not start with a config block", file)
	}
	return &differ{s: s, root: root, file: file, u: uri.File(file), sqlToo: sqlToo}, open, nil
}

func isBroken(ds []protocol.Diagnostic) bool {
	for _, d := range ds {
		if strings.Contains(fakeeditor.Message(d), brokenProperty) {
			return true
		}
	}
	return false
}

// toggle makes the edit that changes the diagnostics (adding or removing
// an unknown config property) and returns how long until they show it.
func (d *differ) toggle(ctx context.Context) (time.Duration, error) {
	const fixed, broken = "config {", "config {\n  " + brokenProperty + ": \"lspbench\","
	ed := d.s.ed
	st := ed.Snapshot()
	published, wasBroken := st.Published[d.u], isBroken(st.Diagnostics[d.u])
	old, repl := fixed, broken
	if wasBroken {
		old, repl = broken, fixed
	}
	d.edits++
	start := time.Now()
	var err error
	if d.sqlToo {
		// One didChange with both changes: the whole text.
		text := strings.Replace(ed.Text(d.file), old, repl, 1)
		prev, next := fmt.Sprintf("\n-- lspbench edit %d\n", d.edits-1), fmt.Sprintf("\n-- lspbench edit %d\n", d.edits)
		if strings.Contains(text, prev) {
			text = strings.Replace(text, prev, next, 1)
		} else {
			text = strings.TrimRight(text, "\n") + next
		}
		start = time.Now()
		err = ed.SetText(ctx, d.file, text)
	} else {
		err = ed.Replace(ctx, d.file, old, repl)
	}
	if err != nil {
		return 0, err
	}
	// Bounded, so that a server that loses an edit (publishes nothing
	// for it, or an older state) fails the run with its stderr instead of
	// holding it until -timeout.
	actx, cancel := context.WithTimeout(ctx, editTimeout)
	defer cancel()
	err = ed.Await(actx, "diagnostics of "+rel(d.root, d.file), func(st *fakeeditor.State) bool {
		return st.Published[d.u] > published && isBroken(st.Diagnostics[d.u]) != wasBroken
	})
	if err != nil && actx.Err() != nil && ctx.Err() == nil {
		err = fmt.Errorf("edit %d: no diagnostics showing it within %v: the server lost the edit: %w", d.edits, editTimeout, err)
	}
	return time.Since(start), err
}

// startTyping adds the comment line the keystrokes of burst go into.
func (d *differ) startTyping(ctx context.Context) error {
	return d.s.ed.SetText(ctx, d.file, strings.TrimRight(d.s.ed.Text(d.file), "\n")+"\n"+typingMarker+"\n")
}

// burst types n-1 keystrokes gap apart into the comment line, then makes
// the toggle edit and returns how long its diagnostics took.
func (d *differ) burst(ctx context.Context, n int, gap time.Duration) (time.Duration, error) {
	for k := 0; k < n-1; k++ {
		if err := d.s.ed.Replace(ctx, d.file, typingMarker+d.typed+"\n", typingMarker+d.typed+"x\n"); err != nil {
			return 0, err
		}
		d.typed += "x"
		time.Sleep(gap)
	}
	return d.toggle(ctx)
}
