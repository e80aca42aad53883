package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/bigquery"
	"github.com/dfdtools/dfd/adapters/cache"
	"github.com/dfdtools/dfd/adapters/connect"
	"github.com/dfdtools/dfd/adapters/credentials"
	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/project"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

const metadataUsage = `Usage: dfd metadata <snapshot|refresh|status|clear> [DIR] [flags]

  snapshot   print the metadata of the datasets the project uses, as an
             offline snapshot (JSON, the format of dfd jit --metadata):
             dfd metadata snapshot [DIR] > snapshot.json
  refresh    fetch the metadata of the project's datasets (or, with no
             project, of everything cached) into the cache now
  status     where the cache file is, how many entries it holds, how old
  clear      empty the cache

The datasets are those the compiled project references (targets,
dependencies, declarations); --datasets names them instead (no compilation).
BigQuery is reached as set by --endpoint (or $DFD_BIGQUERY_ENDPOINT, an
emulator), --credentials (a .df-credentials.json or key file; default the
project's .df-credentials.json, else application default credentials),
--project and --location (default: workflow_settings.yaml).

Each BigQuery call gets --bigquery-timeout (default $DFD_BIGQUERY_TIMEOUT,
else 20s), retries included; once one finds BigQuery unresponsive, the
others fail at once, so an unresponsive BigQuery is reported after about
that long. refresh shows its progress on stderr when stderr is a terminal;
interrupted (Ctrl-C, --timeout), it says which datasets it saved.
`

// metadataFlags are the flags every metadata subcommand takes.
type metadataFlags struct {
	endpoint, credentials, project, location, cachePath, datasets string
	timeout, bqTimeout                                            time.Duration
	asJSON, refresh                                               bool
}

func runMetadata(ctx context.Context, env *cmdEnv, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(env.stderr, metadataUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	sub := args[0]
	switch sub {
	case "snapshot", "refresh", "status", "clear":
	default:
		fmt.Fprintf(env.stderr, "dfd metadata: unknown subcommand %q\n\n%s", sub, metadataUsage)
		return 2
	}
	fs := newFlagSet("metadata "+sub, env.stderr)
	var f metadataFlags
	fs.StringVar(&f.endpoint, "endpoint", "", "BigQuery endpoint, e.g. an emulator's http://127.0.0.1:9050 (no authentication)")
	fs.StringVar(&f.credentials, "credentials", "", "credentials file: .df-credentials.json or a service-account key")
	fs.StringVar(&f.project, "project", "", "billing project (default: the credentials', else defaultProject)")
	fs.StringVar(&f.location, "location", "", "BigQuery location (default: the credentials', else defaultLocation)")
	fs.StringVar(&f.cachePath, "cache", "", "metadata cache file (default: one per endpoint and project in the user cache directory; \"off\": none)")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "time allowed for the whole command")
	if sub == "snapshot" || sub == "refresh" {
		fs.DurationVar(&f.bqTimeout, "bigquery-timeout", 0, "time limit of each BigQuery call, retries included (default $DFD_BIGQUERY_TIMEOUT, else 20s)")
	}
	if sub == "snapshot" || sub == "refresh" {
		fs.StringVar(&f.datasets, "datasets", "", "datasets to use instead of the project's, as `dataset,project.dataset,…`")
	}
	if sub == "snapshot" {
		fs.BoolVar(&f.refresh, "refresh", false, "fetch from BigQuery even what the cache has fresh")
	}
	if sub == "status" {
		fs.BoolVar(&f.asJSON, "json", false, "print the status as JSON")
	}
	fs.Usage = func() {
		fmt.Fprint(env.stderr, metadataUsage)
		fmt.Fprintln(env.stderr)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(pos) > 1 {
		fmt.Fprintf(env.stderr, "dfd metadata %s: one project directory expected, got %d\n", sub, len(pos))
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	m := &metadataCmd{env: env, flags: f, sub: sub}
	if err := m.run(ctx, pos); err != nil {
		fmt.Fprintf(env.stderr, "dfd metadata %s: %v\n", sub, err)
		return 1
	}
	return 0
}

type metadataCmd struct {
	env   *cmdEnv
	flags metadataFlags
	sub   string
	proj  *project.Project // nil when run outside a project with --datasets
}

func (m *metadataCmd) run(ctx context.Context, pos []string) error {
	dir, explicit := ".", len(pos) == 1
	if explicit {
		dir = pos[0]
	}
	// A project is needed for its datasets and settings, unless --datasets
	// says what to fetch (or the subcommand only looks at the cache).
	needProject := m.flags.datasets == "" && (m.sub == "snapshot")
	if p, err := project.Open(dir); err == nil {
		m.proj = p
	} else if explicit || needProject {
		return err
	}

	cfg := connect.Config{
		Config: credentials.Config{
			Endpoint:        m.flags.endpoint,
			CredentialsFile: m.flags.credentials,
			Project:         m.flags.project,
			Location:        m.flags.location,
			Getenv:          m.env.getenv,
		},
		CachePath: m.flags.cachePath,
		Cache:     cache.Options{TTL: connect.CLITTL, MaxStale: connect.CLITTL},
		BigQuery:  bigquery.Options{CallTimeout: m.flags.bqTimeout},
		Log:       func(format string, args ...any) { fmt.Fprintf(m.env.stderr, "warning: "+format+"\n", args...) },
	}
	if m.proj != nil {
		cfg.ProjectDir = m.proj.Root
		cfg.DefaultProject = m.proj.Settings.DefaultProject
		cfg.DefaultLocation = m.proj.Settings.DefaultLocation
	}

	switch m.sub {
	case "status", "clear":
		c, creds, err := connect.OpenCacheOnly(ctx, cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		if m.sub == "clear" {
			before := c.Stats()
			if err := c.Clear(); err != nil {
				return err
			}
			fmt.Fprintf(m.env.stdout, "Cleared %s (%d tables, %d dataset listings).\n", before.Path, before.Tables, before.Lists)
			return nil
		}
		return m.status(c, creds)
	}

	b, err := connect.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer b.Close()
	datasets, err := m.datasets(ctx, b.Credentials.DefaultDatabase)
	if err != nil {
		return err
	}
	if m.sub == "refresh" {
		return m.refresh(ctx, b.Cache, datasets)
	}
	return m.snapshot(ctx, b.Cache, datasets)
}

// datasets are --datasets, else those the compiled project references.
func (m *metadataCmd) datasets(ctx context.Context, defaultDB string) ([]cache.Dataset, error) {
	if m.flags.datasets != "" {
		var out []cache.Dataset
		for _, s := range strings.Split(m.flags.datasets, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			db, ds, ok := strings.Cut(s, ".")
			if !ok {
				db, ds = defaultDB, s
			}
			if db == "" || ds == "" || strings.Contains(ds, ".") {
				return nil, fmt.Errorf("--datasets: %q is not dataset or project.dataset", s)
			}
			out = append(out, cache.Dataset{Database: db, Schema: ds})
		}
		return dedupe(out), nil
	}
	if m.proj == nil {
		return nil, nil // refresh everything cached
	}
	resolver := &project.CoreResolver{Log: func(format string, args ...any) { fmt.Fprintf(m.env.stderr, format+"\n", args...) }}
	core, err := resolver.Resolve(ctx, m.proj)
	if err != nil {
		return nil, err
	}
	res, err := compile.Run(ctx, m.proj, core, compile.Options{Log: logTo(m.env.stderr)})
	if err != nil {
		return nil, err
	}
	if errs := res.Errors(); len(errs) > 0 {
		// The datasets of what did compile are still worth fetching.
		fmt.Fprintf(m.env.stderr, "warning: the project has %d compilation error(s); using the datasets of what compiled\n", len(errs))
	}
	if db := res.Graph.GetProjectConfig().GetDefaultDatabase(); db != "" {
		defaultDB = db
	}
	return connect.GraphDatasets(res.Graph, defaultDB), nil
}

func dedupe(ds []cache.Dataset) []cache.Dataset {
	slices.SortFunc(ds, func(a, b cache.Dataset) int {
		return strings.Compare(a.Database+"."+a.Schema, b.Database+"."+b.Schema)
	})
	return slices.Compact(ds)
}

// snapshot prints the datasets' tables in the offline snapshot format.
// A dataset that does not exist (yet) is skipped with a warning: a project
// often references datasets its first run creates.
func (m *metadataCmd) snapshot(ctx context.Context, c *cache.Cache, datasets []cache.Dataset) error {
	if m.flags.refresh {
		for _, d := range datasets {
			// A missing dataset is reported by ListTables below.
			if _, err := c.Refresh(ctx, cache.Scope{Database: d.Database, Schema: d.Schema}); err != nil && adapters.CodeOf(err) != adapters.NotFound {
				return err
			}
		}
	}
	var tables []*dataformpb.TableMetadata
	var listed []cache.Dataset
	for _, d := range datasets {
		rec := adapters.NewRecorder(c)
		resp, err := rec.ListTables(ctx, &dataformpb.ListTablesRequest{Database: d.Database, Schema: d.Schema})
		switch {
		case adapters.CodeOf(err) == adapters.NotFound:
			// Listed too: BigQuery says none of its tables exists.
			fmt.Fprintf(m.env.stderr, "warning: dataset %s.%s not found; skipped\n", d.Database, d.Schema)
			listed = append(listed, d)
			continue
		case err != nil:
			return err
		}
		for _, n := range rec.Calls()[0].Notes {
			fmt.Fprintf(m.env.stderr, "warning: %s\n", n)
		}
		tables = append(tables, resp.GetTables()...)
		listed = append(listed, d)
	}
	slices.SortFunc(tables, func(a, b *dataformpb.TableMetadata) int {
		return strings.Compare(adapters.TargetString(a.GetTarget()), adapters.TargetString(b.GetTarget()))
	})
	out, err := marshalSnapshot(tables, listed)
	if err != nil {
		return err
	}
	if _, err := m.env.stdout.Write(out); err != nil {
		return err
	}
	fmt.Fprintf(m.env.stderr, "%d tables from %d datasets.\n", len(tables), len(datasets))
	return nil
}

// marshalSnapshot writes tables as an offline snapshot: {"tables": […]},
// protojson (lowerCamelCase, enums by name), indented, and the datasets
// listed in full ("datasets": a table the snapshot lacks there does not
// exist).
func marshalSnapshot(tables []*dataformpb.TableMetadata, listed []cache.Dataset) ([]byte, error) {
	var raw bytes.Buffer
	raw.WriteString(`{"tables":[`)
	for i, t := range tables {
		if i > 0 {
			raw.WriteByte(',')
		}
		b, err := protojson.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", adapters.TargetString(t.GetTarget()), err)
		}
		raw.Write(b)
	}
	raw.WriteString(`]`)
	if len(listed) > 0 {
		raw.WriteString(`,"datasets":`)
		type dataset struct {
			Database string `json:"database"`
			Schema   string `json:"schema"`
		}
		ds := make([]dataset, len(listed))
		for i, d := range listed {
			ds[i] = dataset{d.Database, d.Schema}
		}
		b, err := json.Marshal(ds)
		if err != nil {
			return nil, err
		}
		raw.Write(b)
	}
	raw.WriteString(`}`)
	var out bytes.Buffer
	// protojson's spacing is deliberately unstable; Indent normalises it.
	if err := json.Indent(&out, raw.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func (m *metadataCmd) refresh(ctx context.Context, c *cache.Cache, datasets []cache.Dataset) error {
	show := newRefreshProgress(m.env, len(datasets))
	ctx = adapters.WithListProgress(ctx, show.update)
	var (
		n, tables, saved int
		errs             []error
	)
	if len(datasets) == 0 {
		k, err := c.Refresh(ctx, cache.Scope{})
		n, errs = k, append(errs, err)
		tables = show.tables()
	}
	for i, d := range datasets {
		if ctx.Err() != nil {
			break
		}
		show.start(i, d)
		k, err := c.Refresh(ctx, cache.Scope{Database: d.Database, Schema: d.Schema})
		n += k
		if err != nil {
			errs = append(errs, err)
			continue
		}
		saved++
		tables += show.tables()
	}
	show.clear()
	if ctx.Err() != nil {
		// Each dataset's listing is saved whole when it is complete: those
		// done are in the cache, the others keep what it had.
		what := "interrupted"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			what = fmt.Sprintf("stopped after --timeout %s", m.flags.timeout)
		}
		if len(datasets) == 0 {
			fmt.Fprintf(m.env.stderr, "dfd metadata refresh: %s: %d entries refreshed and saved in %s; the others keep what the cache had.\n", what, n, displayPath(c.Path()))
		} else {
			fmt.Fprintf(m.env.stderr, "dfd metadata refresh: %s: %d of %d datasets (%d tables) refreshed and saved in %s; the other %d keep what the cache had.\n",
				what, saved, len(datasets), tables, displayPath(c.Path()), len(datasets)-saved)
		}
		return ctx.Err()
	}
	fmt.Fprintf(m.env.stdout, "Refreshed %d entries (%d tables) in %s.\n", n, tables, displayPath(c.Path()))
	return errors.Join(errs...)
}

// refreshProgress shows how far a refresh has got on one line of stderr,
// redrawn in place, when stderr is a terminal; otherwise nothing (the
// final line says it all).
type refreshProgress struct {
	// mu guards the rest: the cache's fetches report from goroutines of
	// their own, which may outlive an interrupted Refresh.
	mu       sync.Mutex
	done     bool
	w        io.Writer // nil: not a terminal
	total    int       // datasets; 0: everything cached
	i        int
	dataset  string
	fetched  int // of the current dataset
	lastDraw time.Time
}

func newRefreshProgress(env *cmdEnv, total int) *refreshProgress {
	p := &refreshProgress{total: total}
	if f, ok := env.stderr.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 && env.getenv("TERM") != "dumb" {
			p.w = f
		}
	}
	return p
}

func (p *refreshProgress) start(i int, d cache.Dataset) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.i, p.dataset, p.fetched = i, d.Database+"."+d.Schema, 0
	p.draw(fmt.Sprintf("listing %s", p.dataset), true)
}

// update receives the adapter's reports (one goroutine at a time).
func (p *refreshProgress) update(lp adapters.ListProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.fetched = lp.Fetched
	if p.dataset == "" {
		p.dataset = lp.Database + "." + lp.Schema
	}
	p.draw(fmt.Sprintf("%s: %d tables listed, %d fetched", lp.Database+"."+lp.Schema, lp.Listed, lp.Fetched), lp.Listed == lp.Fetched)
}

// draw redraws the line, at most ten times a second unless force: a
// terminal need not show every one of thousands of tables.
func (p *refreshProgress) draw(msg string, force bool) {
	if p.w == nil {
		return
	}
	if now := time.Now(); force || now.Sub(p.lastDraw) >= 100*time.Millisecond {
		p.lastDraw = now
		prefix := "refresh: "
		if p.total > 0 {
			prefix = fmt.Sprintf("refresh: dataset %d/%d, ", p.i+1, p.total)
		}
		fmt.Fprintf(p.w, "\r\x1b[K%s%s", prefix, msg)
	}
}

// tables is how many tables the current dataset's listing fetched.
func (p *refreshProgress) tables() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fetched
}

// clear erases the line before the final messages; nothing is drawn after.
func (p *refreshProgress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	if p.w != nil && !p.lastDraw.IsZero() {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

func (m *metadataCmd) status(c *cache.Cache, creds *credentials.Resolved) error {
	s := c.Stats()
	if m.flags.asJSON {
		b, err := json.MarshalIndent(struct {
			Backend string `json:"backend"`
			cache.Stats
		}{creds.String(), s}, "", "  ")
		if err != nil {
			return err
		}
		_, err = m.env.stdout.Write(append(b, '\n'))
		return err
	}
	w := m.env.stdout
	fmt.Fprintf(w, "Cache:    %s (%s)\n", displayPath(s.Path), humanBytes(s.FileBytes))
	fmt.Fprintf(w, "Backend:  %s\n", creds)
	fmt.Fprintf(w, "Entries:  %d tables (%d known missing), %d dataset listings\n", s.Tables, s.Missing, s.Lists)
	if !s.Oldest.IsZero() {
		now := time.Now()
		fmt.Fprintf(w, "Oldest:   %s (%s ago)\n", s.Oldest.Local().Format(time.DateTime), now.Sub(s.Oldest).Round(time.Second))
		fmt.Fprintf(w, "Newest:   %s (%s ago)\n", s.Newest.Local().Format(time.DateTime), now.Sub(s.Newest).Round(time.Second))
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "Warning:  %s\n", warn)
	}
	return nil
}

func displayPath(p string) string {
	if p == "" {
		return "(memory only)"
	}
	return p
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
