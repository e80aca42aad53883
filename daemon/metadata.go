package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/offline"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/workspace"
)

// metadata caches offline snapshot adapters by file and default project,
// reloading a file when it changes on disk.
type metadata struct {
	mu    sync.Mutex // guards cache
	cache map[metaKey]*metaEntry
}

type metaKey struct{ path, defaultDB string }

type metaEntry struct {
	modTime time.Time
	size    int64
	a       *offline.Adapter
	err     error
	tables  int // tables in the snapshot
}

// resolveSnapshotPath makes a configured snapshot path absolute: relative
// paths are relative to the project root (settings are often shared in
// the repository).
func resolveSnapshotPath(setting, root string) string {
	if setting == "" || filepath.IsAbs(setting) {
		return setting
	}
	return filepath.Join(root, setting)
}

func (m *metadata) adapter(path, defaultDB string) (*offline.Adapter, error) {
	e, err := m.entry(path, defaultDB)
	if err != nil {
		return nil, err
	}
	return e.a, e.err
}

// entry is the cached load of a snapshot file, loaded again when the
// file's modification time or size changed. err is about the file's
// stat; the entry's err about its contents.
func (m *metadata) entry(path, defaultDB string) (*metaEntry, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("metadata snapshot %s: %w", path, err)
	}
	k := metaKey{path, defaultDB}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cache == nil {
		m.cache = map[metaKey]*metaEntry{}
	}
	if e, ok := m.cache[k]; ok && e.modTime.Equal(fi.ModTime()) && e.size == fi.Size() {
		return e, nil
	}
	e := &metaEntry{modTime: fi.ModTime(), size: fi.Size()}
	data, err := os.ReadFile(path)
	if err != nil {
		e.err = fmt.Errorf("metadata snapshot %s: %w", path, err)
	} else {
		e.a, e.err = offline.Parse(path, data, offline.Options{DefaultDatabase: defaultDB})
		var count struct {
			Tables []json.RawMessage `json:"tables"`
		}
		if e.err == nil && json.Unmarshal(data, &count) == nil {
			e.tables = len(count.Tables)
		}
	}
	m.cache[k] = e
	return e, nil
}

// peek is the loaded snapshot of path, if it was loaded, and whether it is
// current (the file's time and size are those loaded). It never reads the
// file: the request path uses it, and loads again (entry) in the
// background. A file that is gone has no snapshot.
func (m *metadata) peek(path, defaultDB string) (*metaEntry, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, true
	}
	m.mu.Lock()
	e := m.cache[metaKey{path, defaultDB}]
	m.mu.Unlock()
	if e == nil {
		return nil, false
	}
	return e, e.modTime.Equal(fi.ModTime()) && e.size == fi.Size()
}

// forget drops the cached loads of a snapshot file, so that the next use
// reads it again (dfd/refreshMetadata).
func (m *metadata) forget(path string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.cache {
		if k.path == path {
			delete(m.cache, k)
		}
	}
}

// noSnapshot answers every JiT database call when there is no usable
// metadata source: msg says why (the configured source's error), or, when
// none is configured, how to configure one — never that to a user who
// configured a source that failed.
type noSnapshot struct {
	adapters.UnimplementedAdapter
	msg string
}

const noSnapshotMsg = "no metadata snapshot is configured for previews; set dfd.metadata.snapshot to a snapshot file (see go doc ./adapters/offline)"

func (n noSnapshot) err() error {
	if n.msg != "" {
		return adapters.Errorf(adapters.FailedPrecondition, "%s", n.msg)
	}
	return adapters.Errorf(adapters.FailedPrecondition, noSnapshotMsg)
}

func (n noSnapshot) Execute(context.Context, *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
	return nil, n.err()
}

func (n noSnapshot) ListTables(context.Context, *dataformpb.ListTablesRequest) (*dataformpb.ListTablesResponse, error) {
	return nil, n.err()
}

func (n noSnapshot) GetTable(context.Context, *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
	return nil, n.err()
}

// tableInfo converts table metadata for a hover.
func tableInfo(t *dataformpb.TableMetadata, source string) *workspace.TableInfo {
	info := &workspace.TableInfo{
		Target:      target(t.GetTarget()),
		Description: t.GetDescription(),
		Labels:      t.GetLabels(),
		Source:      source,
	}
	if t.GetType() != dataformpb.TableMetadata_UNKNOWN {
		info.Type = t.GetType().String()
	}
	var walk func(prefix string, fs []*dataformpb.Field)
	walk = func(prefix string, fs []*dataformpb.Field) {
		for _, f := range fs {
			c := workspace.Column{Name: prefix + f.GetName(), Description: f.GetDescription()}
			if f.GetStruct() != nil {
				c.Type = "STRUCT"
			} else {
				c.Type = f.GetPrimitive().String()
			}
			for _, fl := range f.GetFlags() {
				if fl == dataformpb.Field_REPEATED {
					c.Mode = "REPEATED"
				}
			}
			info.Columns = append(info.Columns, c)
			if st := f.GetStruct(); st != nil {
				walk(c.Name+".", st.GetFields())
			}
		}
	}
	walk("", t.GetFields())
	return info
}
