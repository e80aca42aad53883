package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
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

// store is the bbolt file. Once an operation fails (an I/O error, or a
// corrupted page detected mid-way) the store turns itself off: the cache
// then carries on in memory, since metadata can always be fetched again.
type store struct {
	db     *bolt.DB
	path   string
	broken atomic.Bool
	warn   func(string)
}

// openStore opens or creates the file at path. It never fails the caller:
// a file that cannot be used is moved aside (corrupt) or left alone (locked
// by another process, unwritable directory), and the warnings say what
// happened; a nil store means "memory only".
func openStore(path string, warn func(string)) *store {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		warn(fmt.Sprintf("metadata cache %s: %v; keeping metadata in memory only", path, err))
		return nil
	}
	s, err := tryOpen(path, warn)
	if err == nil {
		return s
	}
	if errors.Is(err, bolt.ErrTimeout) {
		warn(fmt.Sprintf("metadata cache %s is in use by another dfd process; keeping metadata in memory only", path))
		return nil
	}
	aside := fmt.Sprintf("%s.corrupt-%s", path, time.Now().UTC().Format("20060102T150405.000000000"))
	if rerr := os.Rename(path, aside); rerr != nil {
		warn(fmt.Sprintf("metadata cache %s is unreadable (%v) and cannot be moved aside (%v); keeping metadata in memory only", path, err, rerr))
		return nil
	}
	warn(fmt.Sprintf("metadata cache %s was unreadable (%v); moved it to %s and started an empty cache", path, err, aside))
	s, err = tryOpen(path, warn)
	if err != nil {
		warn(fmt.Sprintf("metadata cache %s: %v; keeping metadata in memory only", path, err))
		return nil
	}
	return s
}

// tryOpen opens path and checks every page of it. Corruption can surface as
// an error, a panic inside bbolt, or a fault reading the memory-mapped file;
// all three become an error here.
func tryOpen(path string, warn func(string)) (s *store, err error) {
	if err := precheck(path); err != nil {
		return nil, err
	}
	var db *bolt.DB
	err = (&store{}).guard(func() error {
		// A fault inside Open (corruption precheck did not catch) leaks
		// the mapping and descriptor of the bad file; that is the price
		// of not crashing.
		var err error
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
		return err
	})
	if err != nil {
		return nil, err
	}
	s = &store{db: db, path: path, warn: warn}
	err = s.guard(func() error {
		if err := db.View(walk); err != nil {
			return fmt.Errorf("integrity check: %w", err)
		}
		ready := false
		db.View(func(tx *bolt.Tx) error {
			m := tx.Bucket(bucketMeta)
			ready = m != nil && string(m.Get(keyFormat)) == storeFormat &&
				tx.Bucket(bucketTables) != nil && tx.Bucket(bucketLists) != nil
			return nil
		})
		if ready {
			return nil // nothing to write: opening stays read-only (no fsync)
		}
		return db.Update(func(tx *bolt.Tx) error {
			meta, err := tx.CreateBucketIfNotExists(bucketMeta)
			if err != nil {
				return err
			}
			if f := meta.Get(keyFormat); f != nil && string(f) != storeFormat {
				// Written by another dfd version: start afresh in place.
				warn(fmt.Sprintf("metadata cache %s has format %q, not %q; starting empty", path, f, storeFormat))
				for _, b := range [][]byte{bucketTables, bucketLists} {
					if err := tx.DeleteBucket(b); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
						return err
					}
				}
			}
			if err := meta.Put(keyFormat, []byte(storeFormat)); err != nil {
				return err
			}
			for _, b := range [][]byte{bucketTables, bucketLists} {
				if _, err := tx.CreateBucketIfNotExists(b); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
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

// run runs f unless the store is broken; a failure breaks it.
func (s *store) run(what string, f func() error) error {
	if s == nil || s.broken.Load() {
		return errStoreOff
	}
	err := s.guard(f)
	if errors.Is(err, bolt.ErrDatabaseNotOpen) {
		return errStoreOff // closed under a late caller: not a fault
	}
	if err != nil && s.broken.CompareAndSwap(false, true) {
		s.warn(fmt.Sprintf("metadata cache %s: %s failed (%v); keeping metadata in memory only from now on", s.path, what, err))
	}
	return err
}

var errStoreOff = errors.New("store off")

func (s *store) close() error {
	if s == nil {
		return nil
	}
	return s.db.Close()
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
	var e *tableEntry
	err := s.run("read", func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			v := tx.Bucket(bucketTables).Get(tableKey(k.db, k.schema, k.name))
			if v == nil {
				return nil
			}
			fetched, missing, payload, err := decodeHeader(v)
			if err != nil {
				return err
			}
			e = &tableEntry{fetched: fetched}
			if !missing {
				e.meta = new(dataformpb.TableMetadata)
				if err := proto.Unmarshal(payload, e.meta); err != nil {
					return err
				}
			}
			return nil
		})
	})
	return e, err
}

func (s *store) getList(k lkey) (*listEntry, error) {
	var e *listEntry
	err := s.run("read", func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			v := tx.Bucket(bucketLists).Get(listKey(k.db, k.schema))
			if v == nil {
				return nil
			}
			fetched, _, payload, err := decodeHeader(v)
			if err != nil {
				return err
			}
			var resp dataformpb.ListTablesResponse
			if err := proto.Unmarshal(payload, &resp); err != nil {
				return err
			}
			e = &listEntry{fetched: fetched}
			for _, t := range resp.GetTables() {
				e.tables = append(e.tables, tkeyOf(t.GetTarget()))
			}
			return nil
		})
	})
	return e, err
}

// put writes table entries and, when l is not nil, a list entry, in one
// transaction.
func (s *store) put(tables map[tkey]*tableEntry, lk lkey, l *listEntry) error {
	return s.run("write", func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
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
	})
}

// remove deletes table entries and list entries.
func (s *store) remove(tables []tkey, lists []lkey) error {
	return s.run("write", func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
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
	})
}

func (s *store) clear() error {
	return s.run("clear", func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
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
	return s.run("read", func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			err := tx.Bucket(bucketTables).ForEach(func(k, v []byte) error {
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
			return tx.Bucket(bucketLists).ForEach(func(k, v []byte) error {
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
