// Package connect assembles the BigQuery side of dfd in one call:
// credentials (package credentials) → the BigQuery adapter (package
// bigquery) → the metadata cache (package cache), with the cache file kept
// per backend under the user's cache directory, and GoogleSQL (package
// gsql) deciding which query results the cache may keep.
//
// The daemon, `dfd jit` and `dfd metadata` all open BigQuery this way, so
// they share one cache file per backend and agree on where it is.
package connect

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/bigquery"
	"github.com/dfdtools/dfd/adapters/cache"
	"github.com/dfdtools/dfd/adapters/credentials"
	"github.com/dfdtools/dfd/gsql"
)

// NoCache as Config.CachePath keeps metadata in memory only.
const NoCache = "off"

// Config says how to reach BigQuery and where to cache its metadata.
type Config struct {
	credentials.Config

	// CachePath is the metadata cache file: empty for the default (see
	// CachePathFor), NoCache for memory only.
	CachePath string
	// Cache tunes the cache (TTL, MaxStale, …); Path, DefaultDatabase and
	// Log are filled in, and ReadOnly when unset (gsql.IsReadOnlyQuery).
	Cache cache.Options
	// BigQuery tunes the adapter (job prefix, retries, …); Project,
	// DefaultDatabase, Location and ClientOptions are filled in, and
	// CallTimeout from $DFD_BIGQUERY_TIMEOUT (a duration, e.g. "20s") when
	// unset.
	BigQuery bigquery.Options
	// Log receives the cache's warnings.
	Log func(format string, args ...any)
}

// Backend is an open BigQuery backend.
type Backend struct {
	// Cache is the DbAdapter to use: BigQuery behind the metadata cache.
	Cache *cache.Cache
	// BigQuery is the adapter without the cache.
	BigQuery *bigquery.Adapter
	// Credentials say which project and identity are used (no secrets).
	Credentials *credentials.Resolved
}

// Close stops the cache's background work and closes its file.
func (b *Backend) Close() error { return b.Cache.Close() }

// Open resolves credentials and opens the adapter and its cache. It does not
// contact BigQuery; a cache file that cannot be used is reported in
// Cache.Warnings, not as an error.
func Open(ctx context.Context, cfg Config) (*Backend, error) {
	creds, err := credentials.Resolve(ctx, cfg.Config)
	if err != nil {
		return nil, err
	}
	bo := cfg.BigQuery
	bo.Project, bo.DefaultDatabase, bo.Location = creds.Project, creds.DefaultDatabase, creds.Location
	if bo.CallTimeout <= 0 && cfg.Getenv != nil {
		if bo.CallTimeout, err = ParseTimeout(cfg.Getenv(TimeoutEnv)); err != nil {
			return nil, fmt.Errorf("$%s: %w", TimeoutEnv, err)
		}
	}
	bo.ClientOptions = append(append(bo.ClientOptions[:0:0], creds.ClientOptions...), bo.ClientOptions...)
	bq, err := bigquery.New(ctx, bo)
	if err != nil {
		return nil, err
	}
	co := cfg.Cache
	co.DefaultDatabase = creds.DefaultDatabase
	co.Log = cfg.Log
	if co.ReadOnly == nil {
		co.ReadOnly = gsql.IsReadOnlyQuery
	}
	switch cfg.CachePath {
	case NoCache:
		co.Path = ""
	case "":
		if co.Path, err = CachePathFor(creds); err != nil {
			return nil, err
		}
	default:
		co.Path = cfg.CachePath
	}
	return &Backend{Cache: cache.Open(bq, co), BigQuery: bq, Credentials: creds}, nil
}

// CachePathFor is the default cache file of a backend: one per endpoint and
// billing project, so an emulator's metadata never mixes with production's.
func CachePathFor(creds *credentials.Resolved) (string, error) {
	endpoint := creds.Endpoint
	if endpoint == "" {
		endpoint = "bigquery"
	}
	return cache.DefaultPath(endpoint, creds.Project)
}

// OpenCacheOnly opens the cache file of the backend cfg names without a
// BigQuery connection (for `dfd metadata status` and `clear`, and for
// working offline): cached metadata is served, stale entries with a note,
// and anything else is UNAVAILABLE.
func OpenCacheOnly(ctx context.Context, cfg Config) (*cache.Cache, *credentials.Resolved, error) {
	creds, err := credentials.Resolve(ctx, cfg.Config)
	if err != nil {
		return nil, nil, err
	}
	co := cfg.Cache
	co.DefaultDatabase = creds.DefaultDatabase
	co.Log = cfg.Log
	switch cfg.CachePath {
	case NoCache:
		return nil, nil, fmt.Errorf("no cache file: the cache is off")
	case "":
		if co.Path, err = CachePathFor(creds); err != nil {
			return nil, nil, err
		}
	default:
		co.Path = cfg.CachePath
	}
	return cache.Open(nil, co), creds, nil
}

// CLITTL is the freshness the command line asks for: a one-shot command
// refreshes metadata older than this before using it (the daemon, which
// runs for hours, serves older metadata at once and refreshes it behind).
const CLITTL = 10 * time.Minute

// TimeoutEnv names the environment variable that sets the time limit of
// each BigQuery call (bigquery.Options.CallTimeout) when nothing else does.
const TimeoutEnv = "DFD_BIGQUERY_TIMEOUT"

// ParseTimeout reads a BigQuery call time limit: a duration such as "20s"
// or "1m30s"; empty is 0 (the adapter's default).
func ParseTimeout(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a time limit such as 20s or 1m", s)
	}
	return d, nil
}

// Age says how old metadata is, as dfd check and the editor's status say
// it: seconds under a minute, minutes under an hour, else hours ("3h").
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return d.Round(time.Minute).String()
	default:
		return strings.TrimSuffix(d.Round(time.Hour).String(), "0m0s")
	}
}

// Describe says, in one line, who could not get an answer from BigQuery
// and what BigQuery said: "BigQuery (project p via application default
// credentials) refused the credentials: UNAUTHENTICATED: …". dfd check
// and the editor's status say the same, each followed by its own fix
// (a flag, a setting). creds may be nil (unknown).
func Describe(err error, creds *credentials.Resolved) string {
	who := "BigQuery"
	if creds != nil {
		if creds.Endpoint != "" {
			who += " (project " + creds.Project + " at " + creds.Endpoint + ")"
		} else {
			who += " (" + creds.String() + ")"
		}
	}
	ae := adapters.AsError(err)
	said := ae.Error()
	if i := strings.IndexByte(said, '\n'); i >= 0 {
		said = said[:i]
	}
	switch ae.Code {
	case adapters.Unauthenticated:
		return who + " refused the credentials: " + said
	case adapters.PermissionDenied:
		return who + " denied access: " + said
	case adapters.DeadlineExceeded:
		return who + " did not answer in time: " + said
	case adapters.Unavailable, adapters.ResourceExhausted:
		return who + " could not answer: " + said
	}
	return who + " failed: " + said
}
