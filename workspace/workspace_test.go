package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dfdtools/dfd/settings"
)

// fakeBackend opens every project; a compile reports an error on every
// line containing "BROKEN", and the later phase a warning on every line
// containing "SLOW", after waiting for checkGate when it is set.
type fakeBackend struct {
	mu        sync.Mutex
	opened    int
	closed    int
	compiles  int
	compiled  []string // each compile's buffer of definitions/a.sqlx, as it starts
	checks    int
	checkGate chan struct{}
	checkRan  chan string // receives the overlays' keys of each check, when set
	// compileTime is how long each compile takes (until its context ends).
	compileTime time.Duration
}

func (b *fakeBackend) compileCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.compiles
}

func (b *fakeBackend) OpenProject(ctx context.Context, root string, progress func(string)) (ProjectBackend, ProjectInfo, error) {
	b.mu.Lock()
	b.opened++
	b.mu.Unlock()
	return &fakeProject{b: b, root: root}, ProjectInfo{CoreVersion: "0.0.0-fake"}, nil
}

func (b *fakeBackend) Configure(settings.Settings) error { return nil }

type fakeProject struct {
	b    *fakeBackend
	root string
}

func (p *fakeProject) files(overlays map[string][]byte) map[string]string {
	out := map[string]string{}
	entries, _ := os.ReadDir(filepath.Join(p.root, "definitions"))
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(p.root, "definitions", e.Name()))
		out["definitions/"+e.Name()] = string(b)
	}
	for k, v := range overlays {
		out[k] = string(v)
	}
	return out
}

func marked(root string, files map[string]string, word string, sev Severity) []Diagnostic {
	var out []Diagnostic
	for name, text := range files {
		for i, line := range strings.Split(text, "\n") {
			if strings.Contains(line, word) {
				out = append(out, Diagnostic{Path: filepath.Join(root, name), Line: i, EndLine: -1, Severity: sev, Message: word + " in " + name})
			}
		}
	}
	return out
}

func (p *fakeProject) Compile(ctx context.Context, req CompileRequest) (*CompileResult, error) {
	p.b.mu.Lock()
	p.b.compiles++
	p.b.compiled = append(p.b.compiled, string(req.Overlays["definitions/a.sqlx"]))
	p.b.mu.Unlock()
	if d := p.b.compileTime; d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	files := p.files(req.Overlays)
	res := &CompileResult{CoreVersion: "0.0.0-fake", Graph: files}
	for name := range files {
		base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
		res.Actions = append(res.Actions, &Action{Target: Target{Name: base}, File: name, Kind: KindTable})
	}
	res.Diagnostics = marked(p.root, files, "BROKEN", SeverityError)
	return res, nil
}

func (p *fakeProject) Check(ctx context.Context, req CheckRequest) []Diagnostic {
	p.b.mu.Lock()
	p.b.checks++
	gate, ran := p.b.checkGate, p.b.checkRan
	p.b.mu.Unlock()
	if ran != nil {
		var keys []string
		for k := range req.Overlays {
			keys = append(keys, k)
		}
		ran <- strings.Join(keys, ",")
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil
		}
	}
	return marked(p.root, req.Result.Graph.(map[string]string), "SLOW", SeverityWarning)
}

func (p *fakeProject) JitPreview(ctx context.Context, req JitRequest) (*JitResult, error) {
	return &JitResult{Adapter: "fake"}, nil
}

func (p *fakeProject) TableMetadata(context.Context, Target) (*TableInfo, bool) { return nil, false }

func (p *fakeProject) Close() error {
	p.b.mu.Lock()
	p.b.closed++
	p.b.mu.Unlock()
	return nil
}

// recorder is the Events of a test: every publication, in order.
type recorder struct {
	mu    sync.Mutex
	pubs  []publication
	wake  chan struct{}
	warns []string
}

type publication struct {
	root    string
	version int64
	diags   []Diagnostic
	gone    bool
}

func newRecorder() *recorder { return &recorder{wake: make(chan struct{}, 1)} }

func (r *recorder) Diagnostics(root string, snap *Snapshot, diags []Diagnostic) {
	r.mu.Lock()
	p := publication{root: root, diags: diags, gone: snap == nil}
	if snap != nil {
		p.version = snap.Version
	}
	r.pubs = append(r.pubs, p)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *recorder) Compiled(*Snapshot) {}
func (r *recorder) Warn(msg string) {
	r.mu.Lock()
	r.warns = append(r.warns, msg)
	r.mu.Unlock()
}
func (r *recorder) Progress(context.Context, string, string) Progress { return noProgress{} }

type noProgress struct{}

func (noProgress) Report(string) {}
func (noProgress) End(string)    {}

// await waits for a publication satisfying ok, from the n-th on.
func (r *recorder) await(t *testing.T, from int, what string, ok func(publication) bool) (publication, int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		for i := from; i < len(r.pubs); i++ {
			if ok(r.pubs[i]) {
				p := r.pubs[i]
				r.mu.Unlock()
				return p, i + 1
			}
		}
		r.mu.Unlock()
		select {
		case <-r.wake:
		case <-deadline:
			t.Fatalf("waiting for %s", what)
		}
	}
}

func messages(ds []Diagnostic) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Message)
	}
	return strings.Join(out, "; ")
}

func writeProject(t *testing.T, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files["workflow_settings.yaml"] = "defaultProject: p\n"
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func newSession(t *testing.T, b *fakeBackend, r *recorder) *Session {
	s := New(context.Background(), Options{Backend: b, Events: r, Debounce: time.Millisecond})
	t.Cleanup(s.Close)
	return s
}

// The compile's errors are published at once, then the later phase of the
// same snapshot with them; an edit cancels a later phase in progress, and
// until the new later phase is known the old one stays on files the edit
// did not touch — not on the edited file.
func TestPhases(t *testing.T) {
	root := writeProject(t, map[string]string{
		"definitions/a.sqlx": "SELECT 1 -- BROKEN\n-- SLOW\n",
		"definitions/b.sqlx": "SELECT 2 -- SLOW\n",
	})
	b := &fakeBackend{checkGate: make(chan struct{})}
	r := newRecorder()
	s := newSession(t, b, r)
	p := s.AddProject(root)

	first, next := r.await(t, 0, "the compile phase", func(p publication) bool { return len(p.diags) > 0 })
	if got := messages(first.diags); got != "BROKEN in definitions/a.sqlx" {
		t.Fatalf("compile phase: %q", got)
	}
	if !p.Checking() {
		t.Error("the later phase is not running")
	}
	close(b.checkGate)
	later, next := r.await(t, next, "the later phase", func(p publication) bool { return len(p.diags) == 3 })
	if later.version != first.version {
		t.Errorf("later phase for version %d, compile phase %d", later.version, first.version)
	}

	// An edit of a.sqlx: its SLOW warning goes with the edit, b's stays
	// until the new later phase says otherwise.
	b.mu.Lock()
	b.checkGate = make(chan struct{})
	b.mu.Unlock()
	a := filepath.Join(root, "definitions", "a.sqlx")
	s.OpenDocument(NewDocument("file://"+a, a, 1, []byte("SELECT 1 -- BROKEN\n-- SLOW\n-- unsaved\n")))
	pub, next := r.await(t, next, "the compile phase after opening", func(p publication) bool { return p.version > first.version })
	if got := messages(pub.diags); !strings.Contains(got, "BROKEN in definitions/a.sqlx") || !strings.Contains(got, "SLOW in definitions/b.sqlx") ||
		strings.Contains(got, "SLOW in definitions/a.sqlx") {
		t.Errorf("compile phase of the edit: %q", got)
	}
	if err := s.ChangeDocument(NewDocument("file://"+a, a, 2, []byte("SELECT 1\n"))); err != nil {
		t.Fatal(err)
	}
	close(b.checkGate)
	last, _ := r.await(t, next, "the later phase of the edit", func(p publication) bool {
		return !strings.Contains(messages(p.diags), "BROKEN") && len(p.diags) == 1
	})
	if got := messages(last.diags); got != "SLOW in definitions/b.sqlx" {
		t.Errorf("after the edit: %q", got)
	}
}

// An edit whose version does not follow the open document's is refused.
func TestDocumentVersions(t *testing.T) {
	root := writeProject(t, map[string]string{"definitions/a.sqlx": "SELECT 1\n"})
	s := newSession(t, &fakeBackend{}, newRecorder())
	a := filepath.Join(root, "definitions", "a.sqlx")
	s.OpenDocument(NewDocument("file://"+a, a, 5, []byte("SELECT 1\n")))
	for _, v := range []int32{5, 4} {
		if err := s.ChangeDocument(NewDocument("file://"+a, a, v, []byte("x"))); err == nil {
			t.Errorf("version %d after 5 accepted", v)
		}
	}
	if err := s.ChangeDocument(NewDocument("file://"+a, a, 6, []byte("y"))); err != nil {
		t.Fatal(err)
	}
	if got := string(s.Document(a).Text); got != "y" {
		t.Errorf("text %q", got)
	}
	if err := s.ChangeDocument(NewDocument("file://x", "/nowhere/x.sqlx", 1, nil)); err == nil {
		t.Error("a change of a document that is not open was accepted")
	}
}

// Opening a file as it is on disk does not compile again, but the later
// phase (which covers open files) runs again with the file among them.
func TestOpenRechecks(t *testing.T) {
	root := writeProject(t, map[string]string{"definitions/a.sqlx": "SELECT 1\n"})
	b := &fakeBackend{checkRan: make(chan string, 4)}
	s := newSession(t, b, newRecorder())
	s.AddProject(root)
	if got := <-b.checkRan; got != "" {
		t.Fatalf("first check with open files %q", got)
	}
	a := filepath.Join(root, "definitions", "a.sqlx")
	s.OpenDocument(NewDocument("file://"+a, a, 1, []byte("SELECT 1\n")))
	if got := <-b.checkRan; got != "definitions/a.sqlx" {
		t.Fatalf("check after opening with open files %q", got)
	}
	b.mu.Lock()
	compiles := b.compiles
	b.mu.Unlock()
	if compiles != 1 {
		t.Errorf("%d compiles; opening an unchanged file should not compile", compiles)
	}
}

// Removing a project returns at once; its backend is closed and its
// diagnostics cleared in the background.
func TestRemoveProject(t *testing.T) {
	root := writeProject(t, map[string]string{"definitions/a.sqlx": "BROKEN\n"})
	b := &fakeBackend{}
	r := newRecorder()
	s := newSession(t, b, r)
	s.AddProject(root)
	_, next := r.await(t, 0, "diagnostics", func(p publication) bool { return len(p.diags) > 0 })
	s.RemoveProject(root)
	if s.Project(root) != nil {
		t.Error("the project is still registered")
	}
	r.await(t, next, "the diagnostics cleared", func(p publication) bool { return p.gone })
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed != b.opened || b.opened != 1 {
		t.Errorf("opened %d, closed %d", b.opened, b.closed)
	}
}

// The adaptive debounce: an edit after a pause compiles at once; edits
// made while typing wait for the debounce delay, shortened to what the
// last compile took (at least minDebounce); a save compiles at once.
func TestAdaptiveDebounce(t *testing.T) {
	for _, c := range []struct {
		name    string
		compile time.Duration
		// typingWaits: the typed edits wait (the delay is half the
		// compile's time, 200 ms); else they compile in about minDebounce,
		// not after the hour-long delay set.
		typingWaits bool
	}{
		{"slow compiles", 400 * time.Millisecond, true},
		{"cheap compiles", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := writeProject(t, map[string]string{"definitions/a.sqlx": "SELECT 1\n"})
			b := &fakeBackend{compileTime: c.compile}
			s := New(context.Background(), Options{Backend: b, Events: newRecorder(), Debounce: time.Hour})
			t.Cleanup(s.Close)
			p := s.AddProject(root)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := p.Await(ctx, 1); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(root, "definitions", "a.sqlx")
			s.OpenDocument(NewDocument("file://"+path, path, 1, []byte("SELECT 1\n")))
			if err := s.ChangeDocument(NewDocument("file://"+path, path, 2, []byte("SELECT 2\n"))); err != nil {
				t.Fatal(err)
			}
			snap, err := p.Await(ctx, p.Version())
			if err != nil {
				t.Fatalf("an edit after a pause waited for the hour-long debounce: %v", err)
			}
			if got := string(snap.Docs["definitions/a.sqlx"].Text); got != "SELECT 2\n" {
				t.Fatalf("compiled %q", got)
			}
			before := b.compileCount()
			// Typing: the next edits come within the delay of the previous one.
			for v := int32(3); v <= 5; v++ {
				if err := s.ChangeDocument(NewDocument("file://"+path, path, v, []byte("SELECT "+string(rune('0'+v))+"\n"))); err != nil {
					t.Fatal(err)
				}
			}
			typed := p.Version()
			if !c.typingWaits {
				if _, err := p.Await(ctx, typed); err != nil {
					t.Fatalf("edits made while typing waited for the hour-long debounce though compiles are cheap: %v", err)
				}
				return
			}
			// The first of them may compile at once: it came after the
			// compile of the previous edit, a pause as long as the delay.
			// The ones typed right after it must wait. Timers never fire
			// early, so however loaded the machine, no compile of edit 4
			// or 5 starts in half the delay.
			time.Sleep(100 * time.Millisecond)
			b.mu.Lock()
			started := b.compiled[before:]
			b.mu.Unlock()
			for _, text := range started {
				if text == "SELECT 4\n" || text == "SELECT 5\n" {
					t.Errorf("edits made while typing compiled within half the debounce delay: %q", started)
				}
			}
			s.SaveDocument(path, nil)
			if _, err := p.Await(ctx, typed); err != nil {
				t.Fatalf("a save did not compile at once: %v", err)
			}
		})
	}
}

// A later-phase diagnostic that confirms a compile-phase one replaces it
// where both start, and only there and with that code.
func TestCombineReplaces(t *testing.T) {
	warn := func(path string, line, col int, code string) Diagnostic {
		return Diagnostic{Path: path, Line: line, Col: col, Code: code, Severity: SeverityWarning}
	}
	compile := []Diagnostic{
		warn("/p/a.js", 4, 12, "jit-free-variable"), // confirmed
		warn("/p/a.js", 5, 30, "jit-free-variable"), // another place
		warn("/p/a.js", 4, 12, "other"),             // another code
		warn("/p/b.js", 4, 12, "jit-free-variable"), // another file
	}
	later := []Diagnostic{{Path: "/p/a.js", Line: 4, Col: 12, Code: "jit-failed", Replaces: "jit-free-variable"}}
	got := combine(compile, later)
	var keys []string
	for _, d := range got {
		keys = append(keys, filepath.Base(d.Path)+":"+strconv.Itoa(d.Line)+":"+strconv.Itoa(d.Col)+" "+d.Code)
	}
	want := "a.js:5:30 jit-free-variable, a.js:4:12 other, b.js:4:12 jit-free-variable, a.js:4:12 jit-failed"
	if strings.Join(keys, ", ") != want {
		t.Errorf("combine: %s\nwant %s", strings.Join(keys, ", "), want)
	}
	if len(compile) != 4 {
		t.Errorf("combine changed its input")
	}
}
