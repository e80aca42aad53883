package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

// The on-disk store is one bbolt file. bbolt writes each transaction
// copy-on-write and switches to it by rewriting one of two checksummed meta
// pages, so a process killed mid-write leaves the previous transaction in
// place: the file is never half-written.
//
// Layout (format 1):
//
//	bucket "meta":   "format" → storeFormat
//	bucket "tables": key(db, schema, name) → record(TableMetadata)
//	bucket "lists":  key(db, schema)       → record(ListTablesResponse of targets only)
//
// A record is [version 1][flags][fetched: int64 unix nanoseconds, big
// endian][protobuf payload]. Flag missing marks a table BigQuery said does
// not exist (the payload is empty). Keys join their parts with NUL bytes,
// which BigQuery names cannot contain.
//
// Query results are deliberately not stored: they are rows of the user's
// data, and their TTL is short enough that a restarted daemon would find
// them expired anyway.
const storeFormat = "dfd-metadata-cache/1"

var (
	bucketMeta   = []byte("meta")
	bucketTables = []byte("tables")
	bucketLists  = []byte("lists")
	keyFormat    = []byte("format")
)

const (
	recordVersion = 1
	flagMissing   = 1 << 0
	headerLen     = 10
)

// store is the bbolt file, shared by every dfd process that uses the same
// cache (editors' daemons, a second editor, commands in a shell).
//
// bbolt locks its file (flock: shared for a read-only open, exclusive for
// a writable one) for as long as it is open, so a store kept open by one
// process locks every other out. The store therefore opens the file for
// each operation and closes it at once: a read holds the shared lock for
// one lookup (tens of µs), a write the exclusive lock for one transaction
// (a few ms, mostly fsync). An operation that finds the lock taken retries
// for up to lockWait; since no dfd process holds it longer than one
// transaction, a lock held that long means something else holds it (a dfd
// older than this one, which kept the file open for its whole life) and
// the store turns itself off with a warning.
//
// Once an operation fails (an I/O error, or a corrupted page detected
// mid-way) the store turns itself off too: the cache then carries on in
// memory, since metadata can always be fetched again.
type store struct {
	path     string
	lockWait time.Duration
	warn     func(string)
	broken   atomic.Bool
	closed   atomic.Bool
}

// defaultLockWait bounds how long an operation waits for the lock. dfd's
// longest hold is the integrity check a process runs once when it opens the
// cache (0.3 s for 5,000 tables of 30 columns on a loaded 2-core machine)
// or the write of a large listing.
const defaultLockWait = 10 * time.Second

var (
	errStoreOff = errors.New("store off")
	errBusy     = errors.New("locked by another process")
	errBusyNow  = errors.New("being written")
)

// openStore opens or creates the file at path and checks it once. It never
// fails the caller: a file that cannot be used is moved aside (corrupt) or
// left alone (locked for longer than lockWait, unwritable directory), and
// the warnings say what happened; a nil store means "memory only".
func openStore(path string, lockWait time.Duration, warn func(string)) *store {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		warn(fmt.Sprintf("metadata cache %s: %v; keeping metadata in memory only", path, err))
		return nil
	}
	s := &store{path: path, lockWait: lockWait, warn: warn}
	fi, err := s.prepare()
	if err == nil {
		return s
	}
	if errors.Is(err, errBusy) {
		warn(s.busyMessage())
		return nil
	}
	// Another process may have replaced a damaged file meanwhile: only
	// the file found damaged is moved aside, never its replacement.
	if cur, serr := os.Stat(path); fi != nil && serr == nil && !os.SameFile(fi, cur) {
		if _, err := s.prepare(); err == nil {
			return s
		}
	}
	aside := fmt.Sprintf("%s.corrupt-%s", path, time.Now().UTC().Format("20060102T150405.000000000"))
	if rerr := os.Rename(path, aside); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		warn(fmt.Sprintf("metadata cache %s is unreadable (%v) and cannot be moved aside (%v); keeping metadata in memory only", path, err, rerr))
		return nil
	}
	warn(fmt.Sprintf("metadata cache %s was unreadable (%v); moved it to %s and started an empty cache", path, err, aside))
	if _, err = s.prepare(); err != nil {
		warn(fmt.Sprintf("metadata cache %s: %v; keeping metadata in memory only", path, err))
		return nil
	}
	return s
}

func (s *store) busyMessage() string {
	return fmt.Sprintf("metadata cache %s stayed locked by another process for %v "+
		"(dfd processes hold it for one transaction; a dfd older than this one keeps it locked while it runs); "+
		"keeping metadata in memory only", s.path, s.lockWait)
}

// prepare checks the file (every page of it, once per process) and writes
// the format and buckets when they are missing. It returns the identity of
// the file it checked (nil when there was none), for openStore's decision
// to move it aside.
func (s *store) prepare() (os.FileInfo, error) {
	fi, ready, err := s.check()
	if err != nil || ready {
		return fi, err
	}
	err = s.openDB(false, s.lockWait, func(db *bolt.DB) error {
		return db.Update(func(tx *bolt.Tx) error {
			meta, err := tx.CreateBucketIfNotExists(bucketMeta)
			if err != nil {
				return err
			}
			if f := meta.Get(keyFormat); f != nil && string(f) != storeFormat {
				// Written by another dfd version: start afresh in place.
				s.warn(fmt.Sprintf("metadata cache %s has format %q, not %q; starting empty", s.path, f, storeFormat))
				for _, b := range [][]byte{bucketTables, bucketLists} {
					if err := tx.DeleteBucket(b); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
						return err
					}
				}
			}
			return ensureBuckets(tx)
		})
	})
	return fi, err
}

// ensureBuckets writes the format and creates the buckets that are missing
// (a file another process created and was killed before filling, or one
// that replaced a file moved aside).
func ensureBuckets(tx *bolt.Tx) error {
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	if f := meta.Get(keyFormat); string(f) != storeFormat {
		if err := meta.Put(keyFormat, []byte(storeFormat)); err != nil {
			return err
		}
	}
	for _, b := range [][]byte{bucketTables, bucketLists} {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	return nil
}

// check reads the whole file under the shared lock. Corruption can surface
// as an error, a panic inside bbolt, or a fault reading the memory-mapped
// file; all three become an error here. ready is false when the file is
// missing, empty, of another format or without its buckets.
func (s *store) check() (fi os.FileInfo, ready bool, err error) {
	deadline := time.Now().Add(s.lockWait)
	for attempt := 0; ; attempt++ {
		f, err := os.Open(s.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		// Held while precheck reads the meta pages and bbolt maps the
		// file (bbolt's own shared lock coexists with it), so that no
		// writer changes the file under either.
		busy, err := tryLockShared(f)
		if err != nil || busy {
			f.Close()
			if err != nil {
				return nil, false, err
			}
			if time.Now().After(deadline) {
				return nil, false, errBusy
			}
			time.Sleep(backoff(attempt))
			continue
		}
		defer f.Close() // releases the lock
		if fi, err = f.Stat(); err != nil {
			return nil, false, err
		}
		if fi.Size() == 0 {
			return fi, false, nil // bbolt initialises an empty file
		}
		if err := precheck(s.path); err != nil {
			return fi, false, err
		}
		err = s.openDB(true, s.lockWait, func(db *bolt.DB) error {
			if err := db.View(walk); err != nil {
				return fmt.Errorf("integrity check: %w", err)
			}
			return db.View(func(tx *bolt.Tx) error {
				m := tx.Bucket(bucketMeta)
				ready = m != nil && string(m.Get(keyFormat)) == storeFormat &&
					tx.Bucket(bucketTables) != nil && tx.Bucket(bucketLists) != nil
				return nil
			})
		})
		return fi, ready, err
	}
}

// backoff is the pause before the next attempt at a busy lock: short at
// first (a read holds it for tens of µs), then 16 ms.
func backoff(attempt int) time.Duration {
	return time.Millisecond << min(attempt, 4)
}

// openDB opens the file (read-only: shared lock; else exclusive, creating
// the file), runs f and closes it. It waits for a busy lock up to wait,
// then fails with errBusy (errBusyNow when wait is 0: one try). Faults
// inside bbolt become errors; a fault inside Open (damage precheck did not
// catch) leaks the mapping and descriptor of the bad file, the price of
// not crashing.
func (s *store) openDB(readOnly bool, wait time.Duration, f func(*bolt.DB) error) error {
	deadline := time.Now().Add(wait)
	for attempt := 0; ; attempt++ {
		var db *bolt.DB
		err := s.guard(func() error {
			var err error
			// A timeout this short is one non-blocking try: bbolt's own
			// retry sleeps 50 ms between tries, far longer than a read
			// holds the lock.
			db, err = bolt.Open(s.path, 0o600, &bolt.Options{ReadOnly: readOnly, Timeout: time.Nanosecond})
			return err
		})
		if errors.Is(err, bolt.ErrTimeout) {
			if wait == 0 {
				return errBusyNow
			}
			if time.Now().After(deadline) {
				return errBusy
			}
			time.Sleep(backoff(attempt))
			continue
		}
		if err != nil {
			return err
		}
		err = s.guard(func() error { return f(db) })
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		return err
	}
}

// view runs f in a read transaction, waiting for the lock up to wait (0:
// not at all). A file that does not exist or is still empty (another
// process is creating it) holds nothing: f is not called.
func (s *store) view(wait time.Duration, f func(*bolt.Tx) error) error {
	return s.run("read", func() error {
		fi, err := os.Stat(s.path)
		if errors.Is(err, fs.ErrNotExist) || err == nil && fi.Size() == 0 {
			return nil
		}
		if err != nil {
			return err
		}
		return s.openDB(true, wait, func(db *bolt.DB) error { return db.View(f) })
	})
}

// update runs f in a write transaction, creating the file and its buckets
// when they are missing.
func (s *store) update(what string, f func(*bolt.Tx) error) error {
	return s.run(what, func() error {
		return s.openDB(false, s.lockWait, func(db *bolt.DB) error {
			return db.Update(func(tx *bolt.Tx) error {
				if err := ensureBuckets(tx); err != nil {
					return err
				}
				return f(tx)
			})
		})
	})
}

// walk reads every record of the file and decodes it, so a damaged page is
// found now (and the file moved aside) rather than in the middle of a
// preview. It runs in the caller's goroutine under guard, unlike bbolt's
// Tx.Check, whose own goroutine would crash the process on a memory fault.
func walk(tx *bolt.Tx) error {
	return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
		var m proto.Message
		switch string(name) {
		case string(bucketTables):
			m = new(dataformpb.TableMetadata)
		case string(bucketLists):
			m = new(dataformpb.ListTablesResponse)
		default:
			return b.ForEach(func(k, v []byte) error { return nil })
		}
		return b.ForEach(func(k, v []byte) error {
			_, _, payload, err := decodeHeader(v)
			if err == nil {
				err = proto.Unmarshal(payload, m)
			}
			if err != nil {
				return fmt.Errorf("bucket %s, key %q: %w", name, k, err)
			}
			return nil
		})
	})
}

// guard runs f, turning panics and memory faults into errors.
func (s *store) guard(f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("bbolt: %v", p)
		}
	}()
	return f()
}

// run runs f unless the store is off; a failure turns it off.
func (s *store) run(what string, f func() error) error {
	if s == nil || s.broken.Load() || s.closed.Load() {
		return errStoreOff
	}
	err := f()
	if errors.Is(err, errBusyNow) {
		return err // a read that chose not to wait: nothing is wrong
	}
	if err != nil && s.broken.CompareAndSwap(false, true) {
		if errors.Is(err, errBusy) {
			s.warn(s.busyMessage() + " from now on")
		} else {
			s.warn(fmt.Sprintf("metadata cache %s: %s failed (%v); keeping metadata in memory only from now on", s.path, what, err))
		}
	}
	return err
}

// close makes later operations fail with errStoreOff; the file is not
// held between operations, so there is nothing to release.
func (s *store) close() error {
	if s != nil {
		s.closed.Store(true)
	}
	return nil
}

func tableKey(db, schema, name string) []byte { return []byte(db + "\x00" + schema + "\x00" + name) }
func listKey(db, schema string) []byte        { return []byte(db + "\x00" + schema) }

func encodeRecord(fetched time.Time, missing bool, m proto.Message) ([]byte, error) {
	var payload []byte
	if m != nil {
		var err error
		if payload, err = proto.Marshal(m); err != nil {
			return nil, err
		}
	}
	out := make([]byte, headerLen, headerLen+len(payload))
	out[0] = recordVersion
	if missing {
		out[1] = flagMissing
	}
	binary.BigEndian.PutUint64(out[2:], uint64(fetched.UnixNano()))
	return append(out, payload...), nil
}

// decodeHeader reads a record's header; payload aliases b (copy it before
// the transaction ends).
func decodeHeader(b []byte) (fetched time.Time, missing bool, payload []byte, err error) {
	if len(b) < headerLen || b[0] != recordVersion {
		return time.Time{}, false, nil, fmt.Errorf("bad record header")
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(b[2:]))), b[1]&flagMissing != 0, b[headerLen:], nil
}

func (s *store) getTable(k tkey) (*tableEntry, error) {
	m, err := s.getTables([]tkey{k}, true)
	return m[k], err
}

// getTables reads the entries of keys that the store holds, in one
// transaction (one open of the file). Unless wait, it does not wait for
// a writer: it fails with errBusyNow instead.
func (s *store) getTables(keys []tkey, wait bool) (map[tkey]*tableEntry, error) {
	d := s.lockWait
	if !wait {
		d = 0
	}
	var out map[tkey]*tableEntry
	err := s.view(d, func(tx *bolt.Tx) error {
		var err error
		out, err = readTables(tx, keys)
		return err
	})
	return out, err
}

func (s *store) getList(k lkey) (*listEntry, error) {
	var e *listEntry
	err := s.view(s.lockWait, func(tx *bolt.Tx) error {
		var err error
		e, err = readList(tx, k)
		return err
	})
	return e, err
}

func readTables(tx *bolt.Tx, keys []tkey) (map[tkey]*tableEntry, error) {
	out := map[tkey]*tableEntry{}
	b := tx.Bucket(bucketTables)
	if b == nil {
		return out, nil
	}
	for _, k := range keys {
		v := b.Get(tableKey(k.db, k.schema, k.name))
		if v == nil {
			continue
		}
		fetched, missing, payload, err := decodeHeader(v)
		if err != nil {
			return nil, err
		}
		e := &tableEntry{fetched: fetched}
		if !missing {
			e.meta = new(dataformpb.TableMetadata)
			if err := proto.Unmarshal(payload, e.meta); err != nil {
				return nil, err
			}
		}
		out[k] = e
	}
	return out, nil
}

func readList(tx *bolt.Tx, k lkey) (*listEntry, error) {
	b := tx.Bucket(bucketLists)
	if b == nil {
		return nil, nil
	}
	v := b.Get(listKey(k.db, k.schema))
	if v == nil {
		return nil, nil
	}
	fetched, _, payload, err := decodeHeader(v)
	if err != nil {
		return nil, err
	}
	var resp dataformpb.ListTablesResponse
	if err := proto.Unmarshal(payload, &resp); err != nil {
		return nil, err
	}
	e := &listEntry{fetched: fetched}
	for _, t := range resp.GetTables() {
		e.tables = append(e.tables, tkeyOf(t.GetTarget()))
	}
	return e, nil
}

// getListTables reads listing k and the entries of the tables in it, in
// one transaction, so they are of one moment.
func (s *store) getListTables(k lkey) (*listEntry, map[tkey]*tableEntry, error) {
	var (
		l      *listEntry
		tables map[tkey]*tableEntry
	)
	err := s.view(s.lockWait, func(tx *bolt.Tx) error {
		var err error
		if l, err = readList(tx, k); err != nil || l == nil {
			return err
		}
		tables, err = readTables(tx, l.tables)
		return err
	})
	return l, tables, err
}

// put writes table entries and, when l is not nil, a list entry, in one
// transaction.
func (s *store) put(tables map[tkey]*tableEntry, lk lkey, l *listEntry) error {
	return s.update("write", func(tx *bolt.Tx) error {
		tb := tx.Bucket(bucketTables)
		for k, e := range tables {
			rec, err := encodeRecord(e.fetched, e.meta == nil, e.meta)
			if err != nil {
				return err
			}
			if err := tb.Put(tableKey(k.db, k.schema, k.name), rec); err != nil {
				return err
			}
		}
		if l == nil {
			return nil
		}
		resp := &dataformpb.ListTablesResponse{}
		for _, k := range l.tables {
			resp.Tables = append(resp.Tables, &dataformpb.TableMetadata{Target: k.target()})
		}
		rec, err := encodeRecord(l.fetched, false, resp)
		if err != nil {
			return err
		}
		return tx.Bucket(bucketLists).Put(listKey(lk.db, lk.schema), rec)
	})
}

// remove deletes table entries and list entries.
func (s *store) remove(tables []tkey, lists []lkey) error {
	return s.update("write", func(tx *bolt.Tx) error {
		tb, lb := tx.Bucket(bucketTables), tx.Bucket(bucketLists)
		for _, k := range tables {
			if err := tb.Delete(tableKey(k.db, k.schema, k.name)); err != nil {
				return err
			}
		}
		for _, k := range lists {
			if err := lb.Delete(listKey(k.db, k.schema)); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *store) clear() error {
	return s.update("clear", func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketTables, bucketLists} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// storedKey is one entry's key and age, as scan reports it.
type storedKey struct {
	table   *tkey // set for table entries
	list    *lkey // set for list entries
	fetched time.Time
	missing bool
}

// scan calls f for every entry (headers only).
func (s *store) scan(f func(storedKey)) error {
	return s.view(s.lockWait, func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketTables); b != nil {
			err := b.ForEach(func(k, v []byte) error {
				fetched, missing, _, err := decodeHeader(v)
				if err != nil {
					return err
				}
				parts := strings.SplitN(string(k), "\x00", 3)
				if len(parts) != 3 {
					return fmt.Errorf("bad table key %q", k)
				}
				f(storedKey{table: &tkey{parts[0], parts[1], parts[2]}, fetched: fetched, missing: missing})
				return nil
			})
			if err != nil {
				return err
			}
		}
		b := tx.Bucket(bucketLists)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			fetched, _, _, err := decodeHeader(v)
			if err != nil {
				return err
			}
			parts := strings.SplitN(string(k), "\x00", 2)
			if len(parts) != 2 {
				return fmt.Errorf("bad list key %q", k)
			}
			f(storedKey{list: &lkey{parts[0], parts[1]}, fetched: fetched})
			return nil
		})
	})
}

func (s *store) size() int64 {
	if s == nil {
		return 0
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
