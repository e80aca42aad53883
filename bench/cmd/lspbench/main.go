//go:build linux

// Command lspbench measures a warm `dfd serve` as an editor sees it: it
// starts the real binary over stdio, opens a project, and times
//
//   - open: from initialize to the first compile's dfd/previewChanged;
//   - edit: an unsaved edit of one .sqlx file (didChange adding a comment
//     line) until dfd/preview of that file shows it (-file, or the first
//     table or view .sqlx);
//   - includes: an unsaved edit of an includes/ file until dfd/preview of
//     the .sqlx file answers from a compile that covers it (every file can
//     use includes, so the whole project is recompiled);
//
// and samples the summed resident memory of the daemon and its worker
// processes every 25 ms. The as-you-type debounce is set to 1 ms so that
// the figures are the recompile, not the deliberate delay.
//
//	lspbench -dfd bin/dfd -project DIR [-runs 5] [-serve-args "--engine=node"] [-file definitions/x.sqlx]
//
// It prints one JSON object (see result) on stdout. -mode diagnostics and
// -mode requests measure edit → diagnostics and the editor's read-only
// requests instead (modes.go).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/lsp"
)

type result struct {
	Project   string    `json:"project"`
	ServeArgs string    `json:"serveArgs"`
	OpenMs    float64   `json:"openMs"`
	EditMs    []float64 `json:"editMs"`
	// CompileMs is what the daemon reports the compile behind each edit's
	// answer took (the worker's compile, decoding and mapping); the rest of
	// EditMs is the LSP round trips, the debounce and the preview.
	CompileMs   []float64 `json:"compileMs"`
	IncludesMs  []float64 `json:"includesMs"`
	PeakRSSKiB  int64     `json:"peakRssKiB"`
	Processes   int       `json:"processes"` // most processes seen at once (daemon + workers)
	EditedFile  string    `json:"editedFile"`
	IncludeFile string    `json:"includeFile"`
}

func main() {
	dfd := flag.String("dfd", "dfd", "the dfd binary")
	project := flag.String("project", "", "project directory")
	runs := flag.Int("runs", 5, "timed edits of each kind")
	serveArgs := flag.String("serve-args", "", "extra arguments of `dfd serve`, space-separated")
	timeout := flag.Duration("timeout", 20*time.Minute, "give up after this long")
	edit := flag.String("file", "", "the .sqlx file to edit, relative to the project (default: the first table or view .sqlx)")
	flag.Parse()
	if *project == "" {
		fmt.Fprintln(os.Stderr, "lspbench: -project is required")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if *mode != "preview" {
		os.Exit(runMode(ctx, *mode, *dfd, *project, *runs, strings.Fields(*serveArgs)))
	}
	res, err := run(ctx, *dfd, *project, *edit, *runs, strings.Fields(*serveArgs))
	if err != nil {
		fmt.Fprintln(os.Stderr, "lspbench:", err)
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
}

type pipes struct {
	io.ReadCloser
	w io.WriteCloser
}

func (p pipes) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipes) Close() error {
	_ = p.w.Close()
	return p.ReadCloser.Close()
}

func run(ctx context.Context, dfd, project, edit string, runs int, serveArgs []string) (*result, error) {
	root, err := filepath.Abs(project)
	if err != nil {
		return nil, err
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, err
	}
	file := filepath.Join(root, filepath.FromSlash(edit))
	if edit == "" {
		if file, err = pickSQLX(root); err != nil {
			return nil, err
		}
	}
	include, err := pickInclude(root)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(dfd, append([]string{"serve"}, serveArgs...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := os.CreateTemp("", "lspbench-stderr-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(stderr.Name())
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting dfd serve: %w", err)
	}
	var memWG sync.WaitGroup
	mem := startSampler(cmd.Process.Pid, &memWG)
	defer func() {
		close(mem.stop)
		memWG.Wait()
	}()
	ed := fakeeditor.New(ctx, pipes{stdout, stdin}, fakeeditor.Config{
		InitializationOptions: map[string]any{"dfd": map[string]any{"debounceMs": 1}},
		Configuration:         map[string]any{"debounceMs": 1},
	})
	defer func() {
		_ = ed.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	fail := func(err error) (*result, error) {
		b, _ := os.ReadFile(stderr.Name())
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		return nil, fmt.Errorf("%w\ndfd serve stderr (last lines):\n%s", err, strings.Join(lines[max(0, len(lines)-30):], "\n"))
	}

	res := &result{Project: root, ServeArgs: strings.Join(serveArgs, " "), EditedFile: rel(root, file), IncludeFile: rel(root, include)}
	start := time.Now()
	if _, err := ed.Initialize(ctx, root); err != nil {
		return fail(fmt.Errorf("initialize: %w", err))
	}
	if err := ed.Await(ctx, "first compile", func(s *fakeeditor.State) bool { return len(s.PreviewChanged) > 0 }); err != nil {
		return fail(err)
	}
	res.OpenMs = ms(time.Since(start))

	if err := ed.Open(ctx, file); err != nil {
		return fail(err)
	}
	if err := ed.Open(ctx, include); err != nil {
		return fail(err)
	}
	base, incBase := ed.Text(file), ed.Text(include)
	preview := func() (*lsp.PreviewResult, error) {
		var pr lsp.PreviewResult
		params := map[string]any{"textDocument": map[string]any{"uri": uri.File(file)}, "jit": false}
		if err := ed.Call(ctx, lsp.MethodPreview, params, &pr); err != nil {
			return nil, fmt.Errorf("dfd/preview: %w", err)
		}
		if pr.Error != "" {
			return nil, fmt.Errorf("dfd/preview: %s", pr.Error)
		}
		return &pr, nil
	}
	// One untimed round of each, so that both paths are warm.
	for i := -1; i < runs; i++ {
		marker := fmt.Sprintf("lspbench_edit_%d", i+1)
		t0 := time.Now()
		if err := ed.SetText(ctx, file, base+"\n-- "+marker+"\n"); err != nil {
			return fail(err)
		}
		for {
			pr, err := preview()
			if err != nil {
				return fail(err)
			}
			if len(pr.Actions) > 0 && strings.Contains(pr.Actions[0].SQL.Query, marker) {
				if i >= 0 {
					res.CompileMs = append(res.CompileMs, pr.CompileMs)
				}
				break
			}
			if time.Since(t0) > 5*time.Minute {
				return fail(fmt.Errorf("dfd/preview never showed the edit of %s", file))
			}
		}
		if i >= 0 {
			res.EditMs = append(res.EditMs, ms(time.Since(t0)))
		}

		t0 = time.Now()
		before, err := preview()
		if err != nil {
			return fail(err)
		}
		t0 = time.Now()
		if err := ed.SetText(ctx, include, incBase+fmt.Sprintf("\n// lspbench_include_%d\n", i+1)); err != nil {
			return fail(err)
		}
		// dfd/preview waits for a compile covering every edit sent
		// before it: its first answer is the recompile.
		after, err := preview()
		if err != nil {
			return fail(err)
		}
		if after.Version <= before.Version {
			return fail(fmt.Errorf("the includes edit did not produce a new compile (version %d → %d)", before.Version, after.Version))
		}
		if i >= 0 {
			res.IncludesMs = append(res.IncludesMs, ms(time.Since(t0)))
		}
	}
	res.PeakRSSKiB, res.Processes = mem.peak()
	_ = ed.Shutdown(ctx)
	_ = ed.Exit(ctx)
	return res, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func rel(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(r)
}

// pickSQLX is the first .sqlx file (in path order) of a table or view.
func pickSQLX(root string) (string, error) {
	var found string
	err := filepath.WalkDir(filepath.Join(root, "definitions"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" || d.IsDir() || !strings.HasSuffix(p, ".sqlx") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		text := string(data)
		if strings.HasPrefix(text, "config {") && (strings.Contains(text, `type: "table"`) || strings.Contains(text, `type: "view"`)) {
			found = p
		}
		return nil
	})
	if err == nil && found == "" {
		err = fmt.Errorf("no table or view .sqlx under %s/definitions", root)
	}
	return found, err
}

// pickInclude is the first .js file of includes/.
func pickInclude(root string) (string, error) {
	m, err := filepath.Glob(filepath.Join(root, "includes", "*.js"))
	if err != nil || len(m) == 0 {
		return "", fmt.Errorf("no includes/*.js in %s", root)
	}
	sort.Strings(m)
	return m[0], nil
}

// sampler tracks the summed RSS of a process and its descendants.
type sampler struct {
	pid  int
	stop chan struct{}

	mu       sync.Mutex
	max      int64
	maxProcs int
}

// startSampler starts sampling the summed RSS of pid and its
// descendants, on a goroutine wg waits for once the sampler is stopped.
func startSampler(pid int, wg *sync.WaitGroup) *sampler {
	s := &sampler{pid: pid, stop: make(chan struct{})}
	wg.Add(1)
	go func() { defer wg.Done(); s.loop() }()
	return s
}

func (s *sampler) loop() {
	t := time.NewTicker(25 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			rss, n := treeRSS(s.pid)
			s.mu.Lock()
			s.max = max(s.max, rss)
			s.maxProcs = max(s.maxProcs, n)
			s.mu.Unlock()
		}
	}
}

func (s *sampler) peak() (int64, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max, s.maxProcs
}

// treeRSS sums VmRSS (KiB) over pid and its descendants.
func treeRSS(pid int) (int64, int) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command may contain spaces and parentheses: fields start
		// after the last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], p)
	}
	var total int64
	n := 0
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		queue = append(queue, children[p]...)
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "VmRSS:") {
				f := strings.Fields(line)
				if len(f) >= 2 {
					v, _ := strconv.ParseInt(f[1], 10, 64)
					total += v
					n++
				}
			}
		}
	}
	return total, n
}
