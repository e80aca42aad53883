//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/lsp"
)

// requestsResult is what -mode requests prints: the latency of the
// editor's read-only requests on a big .sqlx buffer, while a compile of
// it runs (busy: each round edits the buffer and sends the requests once
// the compile has started) and after it (idle). Every request of a round
// is sent at once, as editors do on a keystroke.
type requestsResult struct {
	Project   string `json:"project"`
	ServeArgs string `json:"serveArgs"`
	// BigFile is the unsaved buffer the requests are about (never on
	// disk), of BigBytes bytes; OtherFile is a small file of the project.
	BigFile   string  `json:"bigFile"`
	BigBytes  int     `json:"bigBytes"`
	OtherFile string  `json:"otherFile"`
	OpenMs    float64 `json:"openMs"`
	// CompileMs is how long the daemon took to compile the project with
	// the big buffer (dfd/preview's compileMs).
	CompileMs []float64 `json:"compileMs"`
	// Busy and Idle are the samples per request (milliseconds).
	Busy      map[string][]float64   `json:"busy"`
	Idle      map[string][]float64   `json:"idle"`
	BusyStats map[string]Percentiles `json:"busyStats"`
	IdleStats map[string]Percentiles `json:"idleStats"`
	// StillCompiling counts the busy rounds whose compile was still
	// running when their last answer arrived (all of them, normally).
	StillCompiling int `json:"stillCompiling"`
}

// The requests of a round, in the order of the report.
var requestNames = []string{"hover", "definition", "completion", "documentSymbol", "workspaceSymbol", "hoverOtherFile"}

func runRequests(ctx context.Context, dfd, root, other string, runs, bigBytes int, serveArgs []string) (*requestsResult, error) {
	s, err := startSession(ctx, dfd, serveArgs, nil)
	if err != nil {
		return nil, err
	}
	defer s.close(ctx)
	open, err := s.open(ctx, root)
	if err != nil {
		return nil, err
	}
	res := &requestsResult{Project: root, ServeArgs: strings.Join(serveArgs, " "), OpenMs: ms(open), OtherFile: rel(root, other),
		Busy: map[string][]float64{}, Idle: map[string][]float64{}}

	// The action the big file reads: the other file's.
	var graph lsp.GraphResult
	if err := s.ed.Call(ctx, lsp.MethodGraph, map[string]any{"uri": uri.File(root)}, &graph); err != nil {
		return nil, s.fail(err)
	}
	name := ""
	for _, p := range graph.Projects {
		for _, a := range p.Actions {
			if a.URI == uri.File(other) {
				name = a.Target.Name
			}
		}
	}
	if name == "" {
		return nil, fmt.Errorf("no action defined in %s", other)
	}
	big := filepath.Join(root, "definitions", "lspbench_big.sqlx")
	if _, err := os.Stat(big); err == nil {
		return nil, fmt.Errorf("%s exists; the benchmark's buffer must not", big)
	}
	text := bigSQLX(bigBytes, name)
	res.BigFile, res.BigBytes = rel(root, big), len(text)
	if err := s.ed.OpenText(ctx, big, text); err != nil {
		return nil, s.fail(err)
	}
	if err := s.ed.Open(ctx, other); err != nil {
		return nil, s.fail(err)
	}
	preview := func() (*lsp.PreviewResult, error) {
		var pr lsp.PreviewResult
		err := s.ed.Call(ctx, lsp.MethodPreview, map[string]any{"textDocument": map[string]any{"uri": uri.File(big)}, "jit": false}, &pr)
		if err == nil && pr.Error != "" {
			err = fmt.Errorf("dfd/preview: %s", pr.Error)
		}
		if err == nil && len(pr.Actions) == 0 {
			err = fmt.Errorf("dfd/preview: %s defines no action", res.BigFile)
		}
		return &pr, err
	}
	if _, err := preview(); err != nil {
		return nil, s.fail(err)
	}

	at := func(path, marker string, delta int, last bool) protocol.TextDocumentPositionParams {
		t := s.ed.Text(path)
		i := strings.Index(t, marker)
		if last {
			i = strings.LastIndex(t, marker)
		}
		return protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(path)}, Position: fakeeditor.PositionOf(t, i+delta)}
	}
	refAt := at(big, `ref("`+name+`")`, 6, true) // the last ref, near the end
	colAt := at(big, "\n  src.\n", len("\n  src."), true)
	otherAt := at(other, "ref(", 5, false)
	if !strings.Contains(s.ed.Text(other), "ref(") {
		otherAt = at(other, "SELECT", 2, false)
	}
	requests := map[string]func() error{
		"hover": func() error {
			_, err := s.ed.Server.Hover(ctx, &protocol.HoverParams{TextDocumentPositionParams: refAt})
			return err
		},
		"definition": func() error {
			_, err := s.ed.Server.Definition(ctx, &protocol.DefinitionParams{TextDocumentPositionParams: refAt})
			return err
		},
		"completion": func() error {
			_, err := s.ed.Server.Completion(ctx, &protocol.CompletionParams{TextDocumentPositionParams: colAt})
			return err
		},
		"documentSymbol": func() error {
			_, err := s.ed.Server.DocumentSymbol(ctx, &protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(big)}})
			return err
		},
		"workspaceSymbol": func() error {
			_, err := s.ed.Server.Symbols(ctx, &protocol.WorkspaceSymbolParams{Query: ""})
			return err
		},
		"hoverOtherFile": func() error {
			_, err := s.ed.Server.Hover(ctx, &protocol.HoverParams{TextDocumentPositionParams: otherAt})
			return err
		},
	}
	// round sends every request at once and records how long each took.
	round := func(into map[string][]float64) error {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var firstErr error
		for _, n := range requestNames {
			wg.Go(func() {
				t0 := time.Now()
				err := requests[n]()
				d := ms(time.Since(t0))
				mu.Lock()
				defer mu.Unlock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("%s: %w", n, err)
				}
				if into != nil {
					into[n] = append(into[n], d)
				}
			})
		}
		wg.Wait()
		return firstErr
	}
	const marker = "-- lspbench edit marker"
	for i := -1; i < runs; i++ {
		busy, idle := res.Busy, res.Idle
		if i < 0 {
			busy, idle = nil, nil // one untimed round
		}
		st := s.ed.Snapshot()
		before := len(st.Progress)
		if err := s.ed.Replace(ctx, big, marker, fmt.Sprintf("-- lspbench edit %d\n%s", i+1, marker)); err != nil {
			return nil, s.fail(err)
		}
		var compiling *fakeeditor.Progress
		if err := s.ed.Await(ctx, "a compile of the edit", func(st *fakeeditor.State) bool {
			for _, p := range st.Progress[min(before, len(st.Progress)):] {
				if strings.Contains(p.Title, "compiling") {
					compiling = p
					return true
				}
			}
			return false
		}); err != nil {
			return nil, s.fail(err)
		}
		if err := round(busy); err != nil {
			return nil, s.fail(err)
		}
		if i >= 0 {
			st := s.ed.Snapshot()
			for _, p := range st.Progress {
				if p.Token == compiling.Token && p.Title == compiling.Title && !p.Ended {
					res.StillCompiling++
					break
				}
			}
		}
		pr, err := preview() // waits for the compile of the edit
		if err != nil {
			return nil, s.fail(err)
		}
		if i >= 0 {
			res.CompileMs = append(res.CompileMs, pr.CompileMs)
		}
		if err := round(idle); err != nil {
			return nil, s.fail(err)
		}
	}
	res.BusyStats, res.IdleStats = map[string]Percentiles{}, map[string]Percentiles{}
	for _, n := range requestNames {
		res.BusyStats[n], res.IdleStats[n] = percentiles(res.Busy[n]), percentiles(res.Idle[n])
	}
	return res, nil
}

// bigSQLX is a .sqlx file of about size bytes that defines one table
// reading the action called source: a config block, a js {} block, and
// one SELECT whose long CASE mapping has strings of every quoting, line
// and block comments, ${} placeholders (helper calls and refs in
// subqueries), ending with a select-list line "  src." (where column
// completion is asked), its FROM and a marker comment the edits replace.
func bigSQLX(size int, source string) string {
	var b strings.Builder
	b.Grow(size + 4096)
	b.WriteString(`config {
  type: "table",
  schema: "lspbench",
  description: "A long generated mapping (lspbench).",
  tags: ["lspbench"]
}

js {
  const SEGMENTS = { a: "retail", b: "wholesale", c: "online" };
  function segment(code) {
    return code in SEGMENTS ? ` + "`'${SEGMENTS[code]}'`" + ` : "'other'";
  }
}

SELECT
  src.*,
  CASE src.code
`)
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	for i := 0; b.Len() < size-200; i++ {
		w := words[i%len(words)]
		switch i % 8 {
		case 0:
			fmt.Fprintf(&b, "    WHEN 'A%06d' THEN 'O\\'%s' -- escaped quote\n", i, w)
		case 1:
			fmt.Fprintf(&b, "    WHEN \"B%06d\" THEN \"%s \\\"x\\\"\"\n", i, w)
		case 2:
			fmt.Fprintf(&b, "    WHEN 'C%06d' THEN (SELECT label FROM ${ref(\"%s\")} WHERE id = %d)\n", i, source, i)
		case 3:
			fmt.Fprintf(&b, "    WHEN 'D%06d' THEN ${segment(\"a\")} /* segment */\n", i)
		case 4:
			fmt.Fprintf(&b, "    WHEN 'E%06d' THEN '''%s\n      (multi-line)'''\n", i, w)
		default:
			fmt.Fprintf(&b, "    WHEN 'F%06d' THEN '%s %d'\n", i, w, i)
		}
	}
	fmt.Fprintf(&b, "  END AS label,\n  src.\nFROM ${ref(%q)} src\n-- lspbench edit marker\n", source)
	return b.String()
}
