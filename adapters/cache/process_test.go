package cache

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// These tests run the test binary again as separate processes (the role in
// childEnv), since what they test is several processes on one file.
const (
	childEnv     = "DFD_CACHE_TEST_CHILD" // writer, reader or refresher
	childPath    = "DFD_CACHE_TEST_PATH"  // the cache file
	childDir     = "DFD_CACHE_TEST_DIR"   // where processes leave marker files
	childID      = "DFD_CACHE_TEST_ID"    // which writer or reader, or the run
	childN       = "DFD_CACHE_TEST_N"     // entries each writer writes
	childReaders = "DFD_CACHE_TEST_READERS"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		var err error
		switch role {
		case "writer":
			err = writerChild()
		case "reader":
			err = readerChild()
		case "refresher":
			err = refresherChild()
		default:
			err = fmt.Errorf("unknown role %q", role)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s %s: %v\n", role, os.Getenv(childID), err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func envInt(name string) int {
	n, _ := strconv.Atoi(os.Getenv(name))
	return n
}

// sharedName is entry j of writer w: table p.ds<w>.w<w>_<j>, whose
// description says who wrote it.
func sharedName(w, j int) (tkey, string) {
	return tkey{"p", fmt.Sprintf("ds%d", w), fmt.Sprintf("w%d_%03d", w, j)}, fmt.Sprintf("written by writer %d as entry %d", w, j)
}

// marker files let the processes wait for each other's progress, so that
// their reads and writes interleave on any machine, however loaded.
func mark(name string) error {
	return os.WriteFile(filepath.Join(os.Getenv(childDir), name), nil, 0o600)
}

func awaitMarks(names ...string) error {
	deadline := time.Now().Add(60 * time.Second)
	for _, name := range names {
		for {
			if _, err := os.Stat(filepath.Join(os.Getenv(childDir), name)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("no %s after 60s", name)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return nil
}

// expectEntry checks that c, a cache without a backend, serves entry j of
// writer w.
func expectEntry(c *Cache, w, j int) error {
	k, desc := sharedName(w, j)
	m, err := c.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: k.target()})
	switch {
	case adapters.CodeOf(err) == adapters.Unavailable:
		return fmt.Errorf("%s is not in the cache", k)
	case err != nil:
		return fmt.Errorf("%s: %w", k, err)
	case m.GetDescription() != desc || len(m.GetFields()) != 2:
		return fmt.Errorf("%s: description %q, %d fields", k, m.GetDescription(), len(m.GetFields()))
	}
	return nil
}

// expectAll checks every entry of both writers, and their listings, in c.
func expectAll(c *Cache, n int) error {
	for w := range 2 {
		for j := range n {
			if err := expectEntry(c, w, j); err != nil {
				return err
			}
		}
		resp, err := c.ListTables(context.Background(), &dataformpb.ListTablesRequest{Database: "p", Schema: fmt.Sprintf("ds%d", w)})
		if err != nil || len(resp.GetTables()) != n {
			return fmt.Errorf("listing of ds%d: %d tables, %v", w, len(resp.GetTables()), err)
		}
	}
	return nil
}

// writerChild fetches its n entries one by one through its own backend
// (each fetch is one write transaction), refreshing its dataset's listing
// every tenth entry; halfway it waits until the other writer and every
// reader have seen its entries, and reads the other writer's.
func writerChild() error {
	w, n, readers := envInt(childID), envInt(childN), envInt(childReaders)
	b := newBackend(0)
	c := Open(b, Options{Path: os.Getenv(childPath)})
	defer c.Close()
	// view reads what the others wrote (c would fetch what it does not
	// have from b, which knows only this writer's tables).
	view := Open(nil, Options{Path: os.Getenv(childPath)})
	defer view.Close()
	if w := append(c.Warnings(), view.Warnings()...); len(w) > 0 {
		return fmt.Errorf("warnings: %q", w)
	}
	ctx := context.Background()
	list := &dataformpb.ListTablesRequest{Database: "p", Schema: fmt.Sprintf("ds%d", w)}
	for j := range n {
		// The backend gains the table now, so that listings hold only
		// the tables written so far.
		k, desc := sharedName(w, j)
		b.add(k.db, k.schema, k.name, desc)
		if _, err := c.GetTable(ctx, &dataformpb.GetTableRequest{Target: k.target()}); err != nil {
			return err
		}
		if j%10 == 9 {
			if _, err := c.Refresh(ctx, Scope{Database: "p", Schema: list.Schema}); err != nil {
				return err
			}
		}
		if j == n/2 {
			if err := mark(fmt.Sprintf("half-w%d", w)); err != nil {
				return err
			}
			other := 1 - w
			if err := awaitMarks(fmt.Sprintf("half-w%d", other)); err != nil {
				return err
			}
			for i := 0; i <= n/2; i++ {
				if err := expectEntry(view, other, i); err != nil {
					return fmt.Errorf("halfway: %w", err)
				}
			}
			for r := range readers {
				if err := awaitMarks(fmt.Sprintf("saw-r%d-w%d", r, w)); err != nil {
					return err
				}
			}
		}
	}
	if _, err := c.Refresh(ctx, Scope{Database: "p", Schema: list.Schema}); err != nil {
		return err
	}
	if err := mark(fmt.Sprintf("done-w%d", w)); err != nil {
		return err
	}
	if err := awaitMarks(fmt.Sprintf("done-w%d", 1-w)); err != nil {
		return err
	}
	if err := expectAll(view, n); err != nil {
		return err
	}
	if b.gets.Load() != int64(n) {
		return fmt.Errorf("asked its backend for %d tables, want %d", b.gets.Load(), n)
	}
	return nil
}

// readerChild reads, without any backend, each writer's entries in the
// order they are written while the writers run, then checks everything
// they wrote, in its cache and in a fresh one.
func readerChild() error {
	r, n := envInt(childID), envInt(childN)
	path := os.Getenv(childPath)
	c := Open(nil, Options{Path: path})
	defer c.Close()
	if w := c.Warnings(); len(w) > 0 {
		return fmt.Errorf("warnings: %q", w)
	}
	next := [2]int{}
	deadline := time.Now().Add(60 * time.Second)
	for next[0] < n || next[1] < n {
		progressed := false
		for w := range 2 {
			if next[w] == n {
				continue
			}
			if err := expectEntry(c, w, next[w]); err != nil {
				if strings.Contains(err.Error(), "is not in the cache") {
					continue // not written yet
				}
				return err
			}
			if next[w] == n/2 {
				if err := mark(fmt.Sprintf("saw-r%d-w%d", r, w)); err != nil {
					return err
				}
			}
			next[w]++
			progressed = true
		}
		if !progressed {
			if time.Now().After(deadline) {
				return fmt.Errorf("stuck at entries %v after 60s", next)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if err := awaitMarks("done-w0", "done-w1"); err != nil {
		return err
	}
	if err := expectAll(c, n); err != nil {
		return err
	}
	fresh := Open(nil, Options{Path: path})
	defer fresh.Close()
	return expectAll(fresh, n)
}

// Two writers and four readers, six processes, on one cache file at once:
// every process sees what the writers wrote, while they write (each
// writer waits halfway until the others have seen its entries) and once
// they are done, and nothing is fetched twice.
func TestProcessesShareCache(t *testing.T) {
	if testing.Short() {
		t.Skip("starts six processes")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "cache", "m.db")
	const n, readers = 30, 4
	type child struct {
		name string
		cmd  *exec.Cmd
		out  strings.Builder
	}
	var children []*child
	start := func(role string, id int) {
		ch := &child{name: fmt.Sprintf("%s %d", role, id)}
		ch.cmd = exec.Command(os.Args[0], "-test.run=^$")
		ch.cmd.Env = append(os.Environ(), childEnv+"="+role, childPath+"="+path, childDir+"="+dir,
			childID+"="+strconv.Itoa(id), childN+"="+strconv.Itoa(n), childReaders+"="+strconv.Itoa(readers))
		ch.cmd.Stdout, ch.cmd.Stderr = &ch.out, &ch.out
		if err := ch.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children = append(children, ch)
	}
	for r := range readers {
		start("reader", r)
	}
	for w := range 2 {
		start("writer", w)
	}
	var wg sync.WaitGroup
	for _, ch := range children {
		wg.Go(func() {
			done := make(chan error, 1)
			go func() { done <- ch.cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s: %v\n%s", ch.name, err, ch.out.String())
				}
			case <-time.After(3 * time.Minute):
				ch.cmd.Process.Kill()
				<-done
				t.Errorf("%s still running after 3 minutes\n%s", ch.name, ch.out.String())
			}
		})
	}
	wg.Wait()
	c := openTest(t, nil, Options{Path: path})
	if err := expectAll(c, n); err != nil {
		t.Error(err)
	}
}

// refresherSchedule is what iteration i of run `run` of refresherChild
// writes: a listing of dataset ds, which (re)writes tables with version v
// in their description. Iterations revisit the same 7×8×5 tables, so the
// file stays small however many runs there are.
func refresherSchedule(run, i int) (ds string, names []string, v int) {
	ds = fmt.Sprintf("ds%d", i%7)
	for j := range 5 {
		names = append(names, fmt.Sprintf("t%d_%d", (i/7)%8, j))
	}
	return ds, names, run*1_000_000 + i
}

// refresherChild refreshes listings of its backend, which gains or changes
// tables before each, until it is killed; after each refresh it prints
// "ok <i>": what it wrote up to iteration i is committed.
func refresherChild() error {
	run := envInt(childID)
	b := newBackend(0)
	c := Open(b, Options{Path: os.Getenv(childPath)})
	if w := c.Warnings(); len(w) > 0 {
		return fmt.Errorf("warnings: %q", w)
	}
	ctx := context.Background()
	for i := 0; ; i++ {
		ds, names, v := refresherSchedule(run, i)
		for _, name := range names {
			b.add("p", ds, name, fmt.Sprintf("v%d", v))
		}
		if _, err := c.Refresh(ctx, Scope{Database: "p", Schema: ds}); err != nil {
			return err
		}
		fmt.Printf("ok %d\n", i)
	}
}

// TestKillMidRefresh SIGKILLs a process at a random moment of its
// refreshes, 100 times; after each kill the cache must open cleanly (not
// moved aside) and hold every entry the killed processes had committed,
// at that version or a later one. DFD_CACHE_KILL_SEED repeats a run.
func TestKillMidRefresh(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 100 processes")
	}
	seed := time.Now().UnixNano()
	if s := os.Getenv("DFD_CACHE_KILL_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (DFD_CACHE_KILL_SEED=%d repeats this run)", seed, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	path := filepath.Join(t.TempDir(), "m.db")
	want := map[tkey]int{}   // committed version of each table
	lists := map[lkey]bool{} // committed listings
	for run := 1; run <= 100; run++ {
		delay := time.Duration(rng.Int64N(int64(30 * time.Millisecond)))
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=refresher", childPath+"="+path, childID+"="+strconv.Itoa(run))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Lines are read as they come; the kill lands delay after the
		// first commit, anywhere in a later refresh.
		lines := make(chan string, 1024)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		first, ok := <-lines
		if !ok {
			cmd.Wait()
			t.Fatalf("run %d: the child stopped before its first commit: %s", run, stderr.String())
		}
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		last := -1
		for _, line := range append([]string{first}, drain(lines)...) {
			i, err := strconv.Atoi(strings.TrimPrefix(line, "ok "))
			if err != nil {
				t.Fatalf("run %d: child said %q", run, line)
			}
			last = i
		}
		err = cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("run %d: child ended with %v before the kill: %s", run, err, stderr.String())
		}
		for i := 0; i <= last; i++ {
			ds, names, v := refresherSchedule(run, i)
			lists[lkey{"p", ds}] = true
			for _, name := range names {
				want[tkey{"p", ds, name}] = v
			}
		}

		c := Open(nil, Options{Path: path})
		if w := c.Warnings(); len(w) != 0 {
			t.Fatalf("run %d (killed %v after the first commit, %d commits): store damaged: %q", run, delay, last+1, w)
		}
		keys := make([]tkey, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		got := c.loadTables(keys, true)
		for k, v := range want {
			e := got[k]
			var have int
			if e != nil {
				fmt.Sscanf(e.meta.GetDescription(), "v%d", &have)
			}
			if have < v {
				t.Fatalf("run %d (killed %v after the first commit, %d commits): %s has version %d, want %d or later", run, delay, last+1, k, have, v)
			}
		}
		for l := range lists {
			if _, err := c.ListTables(context.Background(), &dataformpb.ListTablesRequest{Database: l.db, Schema: l.schema}); err != nil {
				t.Fatalf("run %d: listing %s.%s: %v", run, l.db, l.schema, adapters.AsError(err))
			}
		}
		c.Close()
		if run%25 == 0 {
			t.Logf("run %d: killed %v after the first commit, %d commits in this run; %d tables checked", run, delay, last+1, len(want))
		}
	}
}

// drain returns what is left in lines once the writer closes it.
func drain(lines <-chan string) []string {
	var out []string
	for l := range lines {
		out = append(out, l)
	}
	return out
}
