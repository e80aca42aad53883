package cache

import "time"

// Stats describe the cache, for `dfd metadata status` and logs.
type Stats struct {
	// Path is the store file; empty when the cache is in memory only.
	Path string `json:"path,omitempty"`
	// FileBytes is the store file's size.
	FileBytes int64 `json:"fileBytes"`
	// Tables counts table entries, Missing those that record a table that
	// does not exist; Lists counts dataset listings.
	Tables  int `json:"tables"`
	Missing int `json:"missing"`
	Lists   int `json:"lists"`
	// Oldest and Newest are the fetch times of the oldest and newest entry
	// (zero when there is none).
	Oldest time.Time `json:"oldest,omitzero"`
	Newest time.Time `json:"newest,omitzero"`
	// Queries and QueryBytes describe the in-memory query results.
	Queries    int   `json:"queries"`
	QueryBytes int64 `json:"queryBytes"`
	// Counters since Open: answers from the cache, answers that needed the
	// backend, stale answers served because it failed, calls made to it,
	// and entries refreshed (in the background or by Refresh).
	Hits      uint64 `json:"hits"`
	Misses    uint64 `json:"misses"`
	Stale     uint64 `json:"stale"`
	Fetches   uint64 `json:"fetches"`
	Refreshes uint64 `json:"refreshes"`
	// Warnings are those of Warnings().
	Warnings []string `json:"warnings,omitempty"`
}

// Stats counts the entries (on disk and in memory) and reports the
// counters.
func (c *Cache) Stats() Stats {
	s := Stats{
		Path:      c.Path(),
		FileBytes: c.store.size(),
		Hits:      c.hits.Load(),
		Misses:    c.misses.Load(),
		Stale:     c.stale.Load(),
		Fetches:   c.fetches.Load(),
		Refreshes: c.refreshes.Load(),
		Warnings:  c.Warnings(),
	}
	s.Queries, s.QueryBytes = c.queries.stats()
	seen := func(t time.Time) {
		if s.Oldest.IsZero() || t.Before(s.Oldest) {
			s.Oldest = t
		}
		if t.After(s.Newest) {
			s.Newest = t
		}
	}
	type info struct {
		fetched time.Time
		missing bool
	}
	tables := map[tkey]info{}
	lists := map[lkey]time.Time{}
	c.mu.Lock()
	for k, e := range c.tables {
		tables[k] = info{e.fetched, e.meta == nil}
	}
	for k, e := range c.lists {
		lists[k] = e.fetched
	}
	c.mu.Unlock()
	if c.store != nil {
		// Memory holds the newer value of a key that is in both.
		c.store.scan(func(sk storedKey) {
			switch {
			case sk.table != nil:
				if _, ok := tables[*sk.table]; !ok {
					tables[*sk.table] = info{sk.fetched, sk.missing}
				}
			case sk.list != nil:
				if _, ok := lists[*sk.list]; !ok {
					lists[*sk.list] = sk.fetched
				}
			}
		})
	}
	for _, e := range tables {
		s.Tables++
		if e.missing {
			s.Missing++
		}
		seen(e.fetched)
	}
	for _, t := range lists {
		s.Lists++
		seen(t)
	}
	return s
}
