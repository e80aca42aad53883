//go:build linux

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The measurements besides edit → preview (-mode preview, the default):
//
//   - -mode diagnostics: edit → publishDiagnostics on an open .sqlx file
//     with the server's defaults (debounce, engine), after a pause and at
//     the end of a burst of keystrokes (diagnosticsResult);
//   - -mode requests: hover, definition, completion, document and
//     workspace symbols on a big unsaved .sqlx buffer while a compile of
//     it runs and after (requestsResult);
//   - -mode cost: edit → diagnostics with the metadata source snapshot,
//     and bigquery against a stand-in that answers in -bigquery-latency
//     without and with cost figures (dry runs), side by side in one run
//     (costResult);
//   - -mode incremental: edit → diagnostics on goja in full, on goja with
//     incremental compiles and on Node.js in full, side by side in one run
//     (incrementalResult).
var (
	mode       = flag.String("mode", "preview", "what to measure: preview, diagnostics, cost, incremental or requests")
	bigBytes   = flag.Int("big-sqlx-bytes", 2<<20, "-mode requests: size of the big .sqlx buffer")
	debounceMs = flag.Int("debounce-ms", 0, "-mode diagnostics and cost: dfd.debounceMs to send (0: send no settings, the server's defaults)")
	pause      = flag.Duration("pause", 300*time.Millisecond, "-mode diagnostics: pause before each edit")
	typing     = flag.Int("typing", 5, "-mode diagnostics: keystrokes per burst (0: no bursts)")
	typingGap  = flag.Duration("typing-gap", 60*time.Millisecond, "-mode diagnostics: time between keystrokes of a burst")
)

// runMode runs -mode diagnostics or requests and prints its result; it
// returns the exit status.
func runMode(ctx context.Context, mode, dfd, project string, runs int, serveArgs []string) int {
	root, err := filepath.Abs(project)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	var file string
	if err == nil {
		file, err = pickSQLX(root)
	}
	var res any
	if err == nil {
		switch mode {
		case "diagnostics":
			res, err = runDiagnostics(ctx, dfd, root, file, runs, serveArgs, *debounceMs, *pause, *typingGap, *typing)
		case "cost":
			res, err = runCost(ctx, dfd, root, file, runs, serveArgs, *debounceMs, *pause, *typingGap, *typing)
		case "incremental":
			res, err = runIncremental(ctx, dfd, root, file, runs, *debounceMs, *pause, *typingGap, *typing)
		case "requests":
			res, err = runRequests(ctx, dfd, root, file, runs, *bigBytes, serveArgs)
		default:
			err = fmt.Errorf("unknown -mode %q (preview, diagnostics, cost, incremental, requests)", mode)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lspbench:", strings.TrimSpace(err.Error()))
		return 1
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
	return 0
}
