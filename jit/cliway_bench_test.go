package jit_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/internal/testkit/workertest"
	"github.com/dfdtools/dfd/jit"
)

// recordedCall is one adapter call and its answer, in the JiT oracle's form.
type recordedCall struct {
	Method   string `json:"method"`
	Request  string `json:"request"`
	Response string `json:"response,omitempty"`
	Error    string `json:"error,omitempty"`
}

// BenchmarkJitCLIWay measures, beside BenchmarkJitWarm and on the same
// requests and adapter answers, what a JiT action costs the official CLI's
// way: a fresh Node process that loads core and runs its jitCompiler
// ("node"), and the CLI's own JiT worker process with vm2 ("cli-worker"),
// as `dataform run` starts one per action. Adapter answers are recorded
// from a dfd run first, so both sides see the same database.
func BenchmarkJitCLIWay(b *testing.B) {
	if _, err := exec.LookPath("node"); err != nil {
		b.Skip("node is needed for the CLI's way")
	}
	root := workertest.Project(b, nil)
	oracle := filepath.Join(testenv.RepoRoot(), "compile", "testdata", "jit_oracle.js")
	cliModules := filepath.Dir(filepath.Dir(filepath.Dir(testenv.CLIBundle(b)))) // …/node_modules
	p := gojaWorkers.NewPool(b, root, jit.PoolOptions{Workers: 1})
	for _, c := range []struct{ name, code string }{{"0-calls", workertest.JitNoCalls}, {"3-calls", workertest.JitThreeCalls}} {
		job := workertest.JitJob(c.code)
		var mu sync.Mutex
		var answers []recordedCall
		a := &workertest.Adapter{}
		record := func(ctx context.Context, method string, req []byte) ([]byte, error) {
			resp, err := a.RPC(ctx, method, req)
			rc := recordedCall{Method: method, Request: base64.StdEncoding.EncodeToString(req), Response: base64.StdEncoding.EncodeToString(resp)}
			if err != nil {
				rc.Response, rc.Error = "", err.Error()
			}
			mu.Lock()
			answers = append(answers, rc)
			mu.Unlock()
			return resp, err
		}
		want, err := p.Jit(context.Background(), job, record)
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range []string{"node", "cli-worker"} {
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				in := map[string]any{"request": base64.StdEncoding.EncodeToString(job.Request), "answers": answers}
				args := []string{oracle, workertest.BundlePath(root)}
				if mode == "cli-worker" {
					in["cliWorker"] = root
					args = append(args, cliModules)
				}
				input, _ := json.Marshal(in)
				var lat []time.Duration
				for i := 0; i < b.N; i++ {
					cmd := exec.Command("node", args...)
					cmd.Stdin = bytes.NewReader(input)
					start := time.Now()
					out, err := cmd.Output()
					lat = append(lat, time.Since(start))
					if err != nil {
						b.Fatalf("%s: %v", mode, err)
					}
					var res struct{ Response, Error string }
					if err := json.Unmarshal(out, &res); err != nil || res.Error != "" {
						b.Fatalf("%s: %v %s", mode, err, out)
					}
					if res.Response != base64.StdEncoding.EncodeToString(want.Response) {
						b.Fatalf("%s answered differently from dfd", mode)
					}
				}
				workertest.ReportLatency(b, lat, "")
			})
		}
	}
}
