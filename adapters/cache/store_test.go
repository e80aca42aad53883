package cache

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

func TestPersistenceAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "m.db")
	b := newBackend(4)
	c := Open(b, Options{Path: path})
	ctx := context.Background()
	if _, err := c.ListTables(ctx, &dataformpb.ListTablesRequest{Database: "p", Schema: "ds"}); err != nil {
		t.Fatal(err)
	}
	get(t, c, "missing")
	if w := c.Warnings(); len(w) != 0 {
		t.Fatalf("warnings: %q", w)
	}
	c.Close()

	b2 := newBackend(4)
	c2 := openTest(t, b2, Options{Path: path})
	rec := adapters.NewRecorder(c2)
	resp, err := rec.ListTables(ctx, &dataformpb.ListTablesRequest{Database: "p", Schema: "ds"})
	if err != nil || len(resp.GetTables()) != 4 || !rec.Calls()[0].Cached {
		t.Fatalf("warm list: %d tables, %v, %+v", len(resp.GetTables()), err, rec.Calls())
	}
	if call, m, err := get(t, c2, "t03"); err != nil || !call.Cached || len(m.GetFields()) != 2 || m.GetFields()[1].GetFlags()[0] != dataformpb.Field_REPEATED {
		t.Errorf("warm get: %v %v %+v", m, err, call)
	}
	if call, _, err := get(t, c2, "missing"); adapters.CodeOf(err) != adapters.NotFound || !call.Cached {
		t.Errorf("warm missing: %v %+v", err, call)
	}
	if b2.gets.Load()+b2.lists.Load() != 0 {
		t.Errorf("a warm start asked the backend: gets=%d lists=%d", b2.gets.Load(), b2.lists.Load())
	}
	s := c2.Stats()
	if s.Path != path || s.Tables != 5 || s.Missing != 1 || s.Lists != 1 || s.FileBytes == 0 || s.Oldest.IsZero() {
		t.Errorf("stats = %+v", s)
	}

	// Invalidate and Clear reach the disk too.
	c2.Invalidate(target("t00"))
	c2.Close()
	c3 := Open(nil, Options{Path: path})
	if _, _, err := get(t, c3, "t00"); adapters.CodeOf(err) != adapters.Unavailable {
		t.Errorf("invalidated entry survived a restart: %v", err)
	}
	if err := c3.Clear(); err != nil {
		t.Fatal(err)
	}
	if s := c3.Stats(); s.Tables+s.Lists != 0 {
		t.Errorf("after clear: %+v", s)
	}
	c3.Close()
}

// corrupt damages a store file in several ways; each must give an empty,
// working cache, a warning, and the bad file kept aside.
func TestCorruptStore(t *testing.T) {
	damages := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"not a bbolt file", func(t *testing.T, path string) {
			os.WriteFile(path, []byte("this is not a database\n"), 0o600)
		}},
		{"truncated", func(t *testing.T, path string) {
			fi, _ := os.Stat(path)
			os.Truncate(path, fi.Size()/3)
		}},
		{"both meta pages garbled", func(t *testing.T, path string) {
			overwrite(t, path, 16, 4096*2-32)
		}},
		{"leaf pages garbled", func(t *testing.T, path string) {
			// Every page but the meta, root and freelist pages: only reading
			// the records finds the damage.
			f, _ := os.Open(path)
			keep := map[uint64]bool{0: true, 1: true}
			for _, off := range []int64{16, 4096 + 16} {
				if m, ok := readMeta(f, off); ok {
					keep[m.root], keep[m.freelist] = true, true
				}
			}
			fi, _ := f.Stat()
			f.Close()
			for p := uint64(2); int64(p)*4096 < fi.Size(); p++ {
				if !keep[p] {
					overwrite(t, path, int(p)*4096, 4096)
				}
			}
		}},
		{"data pages garbled", func(t *testing.T, path string) {
			fi, _ := os.Stat(path)
			overwrite(t, path, 4096*2, int(fi.Size())-4096*2)
		}},
	}
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "m.db")
			c := Open(newBackend(30), Options{Path: path})
			c.ListTables(context.Background(), &dataformpb.ListTablesRequest{Database: "p", Schema: "ds"})
			c.Close()
			d.damage(t, path)

			var logged []string
			b := newBackend(30)
			c = openTest(t, b, Options{Path: path, Log: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
			w := c.Warnings()
			if len(w) != 1 || !strings.Contains(w[0], "moved it to") || len(logged) != 1 {
				t.Fatalf("warnings = %q, logged = %q", w, logged)
			}
			t.Logf("warning: %s", w[0])
			if c.Path() != path {
				t.Errorf("store not rebuilt: path = %q", c.Path())
			}
			aside, _ := filepath.Glob(path + ".corrupt-*")
			if len(aside) != 1 {
				t.Errorf("bad file not kept aside: %v", aside)
			}
			// Empty, working, and persistent again.
			if call, _, err := get(t, c, "t05"); err != nil || call.Cached {
				t.Errorf("get: %v cached=%v", err, call.Cached)
			}
			c.Close()
			c2 := openTest(t, nil, Options{Path: path})
			if call, _, err := get(t, c2, "t05"); err != nil || !call.Cached || len(c2.Warnings()) != 0 {
				t.Errorf("rebuilt store: %v %+v %q", err, call, c2.Warnings())
			}
		})
	}
}

func overwrite(t *testing.T, path string, off, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := make([]byte, n)
	for i := range junk {
		junk[i] = byte(i*7 + 13)
	}
	if _, err := f.WriteAt(junk, int64(off)); err != nil {
		t.Fatal(err)
	}
}

// A zero-length file (killed while bbolt created it) is simply a new store.
func TestEmptyStoreFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	os.WriteFile(path, nil, 0o600)
	c := openTest(t, newBackend(1), Options{Path: path})
	if c.Path() != path || len(c.Warnings()) != 0 {
		t.Errorf("path %q, warnings %q", c.Path(), c.Warnings())
	}
	if _, _, err := get(t, c, "t00"); err != nil {
		t.Error(err)
	}
}

// Two caches on one file (two processes, or one) share it: each sees what
// the other fetched, without asking its own backend.
func TestTwoCachesShareOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	b1, b2 := newBackend(4), newBackend(4)
	first := openTest(t, b1, Options{Path: path})
	second := openTest(t, b2, Options{Path: path})
	if second.Path() != path || len(first.Warnings())+len(second.Warnings()) != 0 {
		t.Fatalf("second path %q, warnings %q %q", second.Path(), first.Warnings(), second.Warnings())
	}
	if _, _, err := get(t, first, "t01"); err != nil {
		t.Fatal(err)
	}
	if call, _, err := get(t, second, "t01"); err != nil || !call.Cached || b2.gets.Load() != 0 {
		t.Errorf("second did not see first's entry: %v %+v, %d gets", err, call, b2.gets.Load())
	}
	ctx := context.Background()
	if _, err := second.ListTables(ctx, &dataformpb.ListTablesRequest{Database: "p", Schema: "ds"}); err != nil {
		t.Fatal(err)
	}
	rec := adapters.NewRecorder(first)
	if resp, err := rec.ListTables(ctx, &dataformpb.ListTablesRequest{Database: "p", Schema: "ds"}); err != nil || len(resp.GetTables()) != 4 || !rec.Calls()[0].Cached || b1.lists.Load() != 0 {
		t.Errorf("first did not see second's listing: %v %d tables, %d lists", err, len(resp.GetTables()), b1.lists.Load())
	}
}

// A file held open by something else (a dfd older than this one kept it
// locked while it ran) is waited for, up to LockWait, then left alone: the
// cache works in memory and says why.
func TestStoreLockedByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	openTest(t, newBackend(1), Options{Path: path}) // create it
	held, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	second := openTest(t, newBackend(1), Options{Path: path, LockWait: 300 * time.Millisecond})
	waited := time.Since(start)
	held.Close()
	if second.Path() != "" || len(second.Warnings()) != 1 || !strings.Contains(second.Warnings()[0], "stayed locked by another process for 300ms") {
		t.Errorf("path %q, warnings %q", second.Path(), second.Warnings())
	}
	if waited < 300*time.Millisecond || waited > 10*time.Second {
		t.Errorf("waited %v for the lock, want its LockWait of 300ms", waited)
	}
	if _, _, err := get(t, second, "t00"); err != nil {
		t.Errorf("memory-only cache: %v", err)
	}
	if aside, _ := filepath.Glob(path + ".corrupt-*"); len(aside) != 0 {
		t.Errorf("a locked file was moved aside: %v", aside)
	}
}

func TestUnwritableDirectory(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o600)
	c := openTest(t, newBackend(1), Options{Path: filepath.Join(blocker, "m.db")})
	if c.Path() != "" || len(c.Warnings()) != 1 {
		t.Errorf("path %q warnings %q", c.Path(), c.Warnings())
	}
	if _, _, err := get(t, c, "t00"); err != nil {
		t.Error(err)
	}
}

// A cache whose entry is too old to serve looks at the store before it
// fetches: another process may have refreshed it meanwhile. An explicit
// Refresh fetches all the same.
func TestFetchLooksAtTheStoreFirst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	clk := newClock()
	opts := Options{Path: path, TTL: time.Minute, MaxStale: time.Minute, Now: clk.Now}
	b1, b2 := newBackend(3), newBackend(3)
	first, second := openTest(t, b1, opts), openTest(t, b2, opts)
	ctx := context.Background()
	list := &dataformpb.ListTablesRequest{Database: "p", Schema: "ds"}
	if _, _, err := get(t, second, "t01"); err != nil {
		t.Fatal(err)
	}
	if _, err := second.ListTables(ctx, list); err != nil {
		t.Fatal(err)
	}
	gets, lists := b2.gets.Load(), b2.lists.Load()

	// Both entries are now too old for either process; the first refreshes
	// them from a BigQuery that changed.
	clk.Add(2 * time.Minute)
	b1.add("p", "ds", "t01", "v2")
	b1.add("p", "ds", "t09", "v2")
	if _, m, err := get(t, first, "t01"); err != nil || m.GetDescription() != "v2" {
		t.Fatalf("first: %v %v", m, err)
	}
	if resp, err := first.ListTables(ctx, list); err != nil || len(resp.GetTables()) != 4 {
		t.Fatalf("first's listing: %d tables, %v", len(resp.GetTables()), err)
	}

	// The second takes them from the store instead of its BigQuery.
	if _, m, err := get(t, second, "t01"); err != nil || m.GetDescription() != "v2" {
		t.Errorf("second: %v %v", m, err)
	}
	if resp, err := second.ListTables(ctx, list); err != nil || len(resp.GetTables()) != 4 {
		t.Errorf("second's listing: %d tables, %v", len(resp.GetTables()), err)
	}
	if b2.gets.Load() != gets || b2.lists.Load() != lists {
		t.Errorf("second asked its BigQuery again: %d gets, %d lists (had %d, %d)", b2.gets.Load(), b2.lists.Load(), gets, lists)
	}
	if _, err := second.Refresh(ctx, Scope{Database: "p", Schema: "ds", Name: "t01"}); err != nil {
		t.Fatal(err)
	}
	if b2.gets.Load() != gets+1 {
		t.Errorf("Refresh did not fetch: %d gets, want %d", b2.gets.Load(), gets+1)
	}
}

// A file that disappears under an open cache (`dfd metadata clear` of an
// older dfd, or another process moved a damaged file aside) holds nothing;
// the next write creates it again, complete, for every process.
func TestStoreFileRemovedUnderACache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	b := newBackend(3)
	c := openTest(t, b, Options{Path: path})
	if _, _, err := get(t, c, "t00"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	other := openTest(t, nil, Options{Path: path})
	if _, _, err := get(t, other, "t00"); adapters.CodeOf(err) != adapters.Unavailable {
		t.Errorf("an entry survived the file's removal: %v", err)
	}
	if _, _, err := get(t, c, "t01"); err != nil {
		t.Fatal(err)
	}
	if call, _, err := get(t, other, "t01"); err != nil || !call.Cached {
		t.Errorf("the recreated file: %v %+v", err, call)
	}
	if w := append(c.Warnings(), other.Warnings()...); len(w) != 0 {
		t.Errorf("warnings: %q", w)
	}
	fresh := openTest(t, nil, Options{Path: path})
	if len(fresh.Warnings()) != 0 || fresh.Path() != path {
		t.Errorf("reopening the recreated file: %q", fresh.Warnings())
	}
}

// CachedTable, on the editor's request path, does not wait while another
// process writes the store: it answers "not known" at once and leaves the
// store on; once the write is over it finds the table.
func TestCachedTableDoesNotWaitForAWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	writer := openTest(t, newBackend(2), Options{Path: path})
	if _, _, err := get(t, writer, "t01"); err != nil {
		t.Fatal(err)
	}
	c := openTest(t, nil, Options{Path: path, LockWait: time.Minute})
	held, err := bolt.Open(path, 0o600, nil) // a write in progress
	if err != nil {
		t.Fatal(err)
	}
	req := &dataformpb.GetTableRequest{Target: target("t01")}
	start := time.Now()
	_, ok, err := c.CachedTable(context.Background(), req)
	if waited := time.Since(start); ok || err != nil || waited > 30*time.Second {
		t.Errorf("during a write: ok=%v err=%v after %v", ok, err, waited)
	}
	held.Close()
	if m, ok, err := c.CachedTable(context.Background(), req); !ok || err != nil || m.GetTarget().GetName() != "t01" {
		t.Errorf("after the write: %v ok=%v err=%v", m, ok, err)
	}
	if w := c.Warnings(); len(w) != 0 || c.Path() != path {
		t.Errorf("warnings %q, path %q", w, c.Path())
	}
}

// A cache file of another format (a dfd older or newer than this one)
// opens: with records this dfd can read it is emptied in place, with
// records it cannot it is moved aside; either way with a warning, and the
// cache works.
func TestStoreOfAnotherFormat(t *testing.T) {
	for _, tc := range []struct {
		name, format string
		record       []byte
		want         string
	}{
		{"readable records", "dfd-metadata-cache/2", nil, `has format "dfd-metadata-cache/2", not "dfd-metadata-cache/1"; starting empty`},
		{"unreadable records", "dfd-metadata-cache/0", []byte("an old record"), "moved it to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.db")
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			rec := tc.record
			if rec == nil {
				if rec, err = encodeRecord(time.Now(), false, &dataformpb.TableMetadata{Target: target("t00"), Description: "old"}); err != nil {
					t.Fatal(err)
				}
			}
			err = db.Update(func(tx *bolt.Tx) error {
				meta, _ := tx.CreateBucket(bucketMeta)
				tables, _ := tx.CreateBucket(bucketTables)
				if _, err := tx.CreateBucket(bucketLists); err != nil {
					return err
				}
				if err := meta.Put(keyFormat, []byte(tc.format)); err != nil {
					return err
				}
				return tables.Put(tableKey("p", "ds", "t00"), rec)
			})
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			c := openTest(t, newBackend(1), Options{Path: path})
			if w := c.Warnings(); len(w) != 1 || !strings.Contains(w[0], tc.want) || c.Path() != path {
				t.Fatalf("warnings %q, path %q", w, c.Path())
			}
			if call, m, err := get(t, c, "t00"); err != nil || call.Cached || m.GetDescription() == "old" {
				t.Errorf("the old entry was served: %v %+v %v", m, call, err)
			}
			again := openTest(t, nil, Options{Path: path})
			if call, _, err := get(t, again, "t00"); err != nil || !call.Cached || len(again.Warnings()) != 0 {
				t.Errorf("reopened: %v %+v %q", err, call, again.Warnings())
			}
		})
	}
}
