// Package incrtest drives differential tests of incremental compiles: it
// loads a Dataform project into memory and makes random single-file edits
// of the kinds users make (an SQL body, a config key, a ref added or
// removed, an action renamed, a syntax error added then fixed, a JavaScript
// loop's bound, JiT code, an includes constant, settings, a file added,
// deleted or renamed). A test compiles after every edit both incrementally
// and in full and compares the encoded graphs byte for byte.
package incrtest

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Project is a project's files in memory, written to Dir after each edit.
type Project struct {
	Dir   string
	Files map[string]string // root-relative slash path → content
	rng   *rand.Rand
	n     int
	// broken holds files given a syntax error, with their content before.
	broken map[string]string
	// renamedFrom is the old name of a file renamed by the last edit.
	renamedFrom string
}

// Load reads the project at dir (node_modules and hidden files skipped).
func Load(dir string, seed uint64) (*Project, error) {
	p := &Project{Dir: dir, Files: map[string]string{}, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), broken: map[string]string{}}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		p.Files[rel] = string(b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", dir, err)
	}
	return p, nil
}

// Paths are the project's files, sorted: the compile request's file list.
func (p *Project) Paths() []string {
	out := make([]string, 0, len(p.Files))
	for k := range p.Files {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Edit is one edit made: its kind and file.
type Edit struct {
	Kind, File string
}

func (e Edit) String() string { return e.Kind + " " + e.File }

// Kinds of edits, as Edit.Kind.
const (
	SQLBody      = "sql-body"
	ConfigKey    = "config-key"
	AddRef       = "add-ref"
	RemoveRef    = "remove-ref"
	Rename       = "rename-action"
	SyntaxError  = "syntax-error"
	FixSyntax    = "fix-syntax"
	LoopBound    = "loop-bound"
	JiTCode      = "jit-code"
	IncludeConst = "includes-constant"
	Settings     = "settings"
	AddFile      = "add-file"
	DeleteFile   = "delete-file"
	RenameFile   = "rename-file"
	JSBody       = "js-body"
)

// Weights of the kinds: most edits users make are of one definitions file.
var weights = []struct {
	kind string
	w    int
}{
	{SQLBody, 20}, {ConfigKey, 10}, {AddRef, 8}, {RemoveRef, 6}, {Rename, 5}, {SyntaxError, 5},
	{FixSyntax, 8}, {LoopBound, 6}, {JiTCode, 4}, {JSBody, 8}, {IncludeConst, 2}, {Settings, 1},
	{AddFile, 1}, {DeleteFile, 1}, {RenameFile, 1},
}

// Step makes one random edit, writes it to Dir and returns it. Kinds that
// have no candidate file in the project are drawn again.
func (p *Project) Step() (Edit, error) {
	total := 0
	for _, w := range weights {
		total += w.w
	}
	for range 100 {
		x := p.rng.IntN(total)
		for _, w := range weights {
			if x < w.w {
				if e, ok := p.try(w.kind); ok {
					return e, p.write(e)
				}
				break
			}
			x -= w.w
		}
	}
	return Edit{}, fmt.Errorf("no edit applies to %s", p.Dir)
}

// StepKind makes one edit of kind, when one applies.
func (p *Project) StepKind(kind string) (Edit, bool, error) {
	e, ok := p.try(kind)
	if !ok {
		return e, false, nil
	}
	return e, true, p.write(e)
}

func (p *Project) write(e Edit) error {
	for _, f := range []string{e.File, p.renamedFrom} {
		if f == "" {
			continue
		}
		path := filepath.Join(p.Dir, filepath.FromSlash(f))
		c, ok := p.Files[f]
		if !ok {
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(c), 0o644); err != nil {
			return err
		}
	}
	p.renamedFrom = ""
	return nil
}

func (p *Project) pick(match func(name, content string) bool) (string, bool) {
	var c []string
	for name, content := range p.Files {
		if _, broken := p.broken[name]; broken {
			continue
		}
		if match(name, content) {
			c = append(c, name)
		}
	}
	if len(c) == 0 {
		return "", false
	}
	sort.Strings(c)
	return c[p.rng.IntN(len(c))], true
}

func isDef(name, ext string) bool {
	return strings.HasPrefix(name, "definitions/") && strings.HasSuffix(name, ext)
}

var (
	configRE   = regexp.MustCompile(`config\s*\{`)
	loopRE     = regexp.MustCompile(`(<=?\s*)(\d+)`)
	refRE      = regexp.MustCompile(`\n-- dfd-ref [^\n]*\$\{ref\("[^"]*"\)\}`)
	nameRE     = regexp.MustCompile(`(publish|operate|assert|declare)\(\s*"([^"]+)"`)
	jitRE      = regexp.MustCompile(`jitCode\(`)
	constRE    = regexp.MustCompile(`(?m)^(\s*(?:const|let|var)\s+\w+\s*=\s*)("[^"\n]*"|\d+)`)
	settingsRE = regexp.MustCompile(`(?m)^(defaultDataset|defaultSchema):\s*\S+`)
)

// actionNames are names an added ref may point at: file base names (most
// SQLX actions are named after their file), and sometimes a missing one.
func (p *Project) actionName() string {
	var names []string
	for name := range p.Files {
		if isDef(name, ".sqlx") {
			names = append(names, strings.TrimSuffix(name[strings.LastIndex(name, "/")+1:], ".sqlx"))
		}
	}
	sort.Strings(names)
	if len(names) == 0 || p.rng.IntN(8) == 0 {
		return fmt.Sprintf("missing_%d", p.n)
	}
	return names[p.rng.IntN(len(names))]
}

func (p *Project) try(kind string) (Edit, bool) {
	p.n++
	n := p.n
	switch kind {
	case SQLBody:
		f, ok := p.pick(func(name, _ string) bool { return isDef(name, ".sqlx") })
		if !ok {
			return Edit{}, false
		}
		p.Files[f] += fmt.Sprintf("\n-- edit %d", n)
		if p.rng.IntN(3) == 0 {
			p.Files[f] = strings.Replace(p.Files[f], "SELECT", fmt.Sprintf("SELECT /* %d */", n), 1)
		}
		return Edit{kind, f}, true
	case ConfigKey:
		f, ok := p.pick(func(name, c string) bool { return isDef(name, ".sqlx") && configRE.MatchString(c) })
		if !ok {
			return Edit{}, false
		}
		keys := []string{`description: "edit %d",`, `tags: ["t%d"],`, `disabled: %d %% 2 == 0,`}
		key := fmt.Sprintf(keys[p.rng.IntN(len(keys))], n)
		loc := configRE.FindStringIndex(p.Files[f])
		p.Files[f] = p.Files[f][:loc[1]] + "\n  " + key + p.Files[f][loc[1]:]
		return Edit{kind, f}, true
	case AddRef:
		f, ok := p.pick(func(name, _ string) bool { return isDef(name, ".sqlx") })
		if !ok {
			return Edit{}, false
		}
		p.Files[f] += fmt.Sprintf("\n-- dfd-ref %d ${ref(%q)}", n, p.actionName())
		return Edit{kind, f}, true
	case RemoveRef:
		f, ok := p.pick(func(name, c string) bool { return isDef(name, ".sqlx") && refRE.MatchString(c) })
		if !ok {
			return Edit{}, false
		}
		locs := refRE.FindAllStringIndex(p.Files[f], -1)
		l := locs[p.rng.IntN(len(locs))]
		p.Files[f] = p.Files[f][:l[0]] + p.Files[f][l[1]:]
		return Edit{kind, f}, true
	case Rename:
		f, ok := p.pick(func(name, c string) bool {
			return (isDef(name, ".sqlx") && configRE.MatchString(c)) || (isDef(name, ".js") && nameRE.MatchString(c))
		})
		if !ok {
			return Edit{}, false
		}
		if strings.HasSuffix(f, ".sqlx") {
			loc := configRE.FindStringIndex(p.Files[f])
			p.Files[f] = p.Files[f][:loc[1]] + fmt.Sprintf("\n  name: \"renamed_%d\",", n) + p.Files[f][loc[1]:]
		} else {
			locs := nameRE.FindAllStringSubmatchIndex(p.Files[f], -1)
			l := locs[p.rng.IntN(len(locs))]
			p.Files[f] = p.Files[f][:l[5]] + fmt.Sprintf("_r%d", n) + p.Files[f][l[5]:]
		}
		return Edit{kind, f}, true
	case SyntaxError:
		f, ok := p.pick(func(name, _ string) bool { return isDef(name, ".sqlx") || isDef(name, ".js") })
		if !ok {
			return Edit{}, false
		}
		p.broken[f] = p.Files[f]
		if strings.HasSuffix(f, ".js") {
			p.Files[f] += fmt.Sprintf("\nconst broken%d = (;\n", n)
		} else if p.rng.IntN(2) == 0 {
			p.Files[f] += fmt.Sprintf("\njs { const broken%d = ( }\n", n)
		} else {
			p.Files[f] = "config { type: \"table\",\n" + p.Files[f]
		}
		return Edit{kind, f}, true
	case FixSyntax:
		if len(p.broken) == 0 {
			return Edit{}, false
		}
		var names []string
		for k := range p.broken {
			names = append(names, k)
		}
		sort.Strings(names)
		f := names[p.rng.IntN(len(names))]
		p.Files[f] = p.broken[f]
		delete(p.broken, f)
		return Edit{kind, f}, true
	case LoopBound:
		f, ok := p.pick(func(name, c string) bool {
			return isDef(name, ".js") && strings.Contains(c, "for (") && loopRE.MatchString(c)
		})
		if !ok {
			return Edit{}, false
		}
		c := p.Files[f]
		i := strings.Index(c, "for (")
		loc := loopRE.FindStringSubmatchIndex(c[i:])
		if loc == nil {
			return Edit{}, false
		}
		var v int
		fmt.Sscan(c[i+loc[4]:i+loc[5]], &v)
		v += p.rng.IntN(3) - 1
		v = max(v, 0)
		p.Files[f] = c[:i+loc[4]] + fmt.Sprint(v) + c[i+loc[5]:]
		return Edit{kind, f}, true
	case JiTCode:
		f, ok := p.pick(func(name, c string) bool { return (isDef(name, ".js") || isDef(name, ".sqlx")) && jitRE.MatchString(c) })
		if !ok {
			return Edit{}, false
		}
		loc := jitRE.FindStringIndex(p.Files[f])
		// A comment in the function's first line changes its source text.
		c := p.Files[f]
		j := strings.Index(c[loc[1]:], "{")
		if j < 0 {
			return Edit{}, false
		}
		at := loc[1] + j + 1
		p.Files[f] = c[:at] + fmt.Sprintf(" /* jit %d */", n) + c[at:]
		return Edit{kind, f}, true
	case JSBody:
		f, ok := p.pick(func(name, _ string) bool { return isDef(name, ".js") })
		if !ok {
			return Edit{}, false
		}
		if p.rng.IntN(2) == 0 {
			p.Files[f] += fmt.Sprintf("\n// edit %d\n", n)
		} else {
			p.Files[f] += fmt.Sprintf("\npublish(\"added_%d\", { type: \"view\" }).query(ctx => \"SELECT %d AS n\");\n", n, n)
		}
		return Edit{kind, f}, true
	case IncludeConst:
		f, ok := p.pick(func(name, c string) bool {
			return strings.HasPrefix(name, "includes/") && strings.HasSuffix(name, ".js") && constRE.MatchString(c)
		})
		if !ok {
			return Edit{}, false
		}
		c := p.Files[f]
		loc := constRE.FindStringSubmatchIndex(c)
		old := c[loc[4]:loc[5]]
		repl := fmt.Sprintf("%q", fmt.Sprintf("v%d", n))
		if !strings.HasPrefix(old, `"`) {
			repl = fmt.Sprint(n % 50)
		}
		p.Files[f] = c[:loc[4]] + repl + c[loc[5]:]
		return Edit{kind, f}, true
	case Settings:
		f := "workflow_settings.yaml"
		c, ok := p.Files[f]
		if !ok || !settingsRE.MatchString(c) {
			return Edit{}, false
		}
		loc := settingsRE.FindStringSubmatchIndex(c)
		p.Files[f] = c[:loc[1]] + fmt.Sprintf("_%d", n%3) + c[loc[1]:]
		return Edit{kind, f}, true
	case AddFile:
		f := fmt.Sprintf("definitions/added/added_file_%d.sqlx", n)
		p.Files[f] = fmt.Sprintf("config { type: \"view\" }\nSELECT %d AS n\n", n)
		return Edit{kind, f}, true
	case DeleteFile:
		f, ok := p.pick(func(name, _ string) bool { return isDef(name, ".sqlx") || isDef(name, ".js") })
		if !ok {
			return Edit{}, false
		}
		delete(p.Files, f)
		return Edit{kind, f}, true
	case RenameFile:
		f, ok := p.pick(func(name, _ string) bool { return isDef(name, ".sqlx") })
		if !ok {
			return Edit{}, false
		}
		to := strings.TrimSuffix(f, ".sqlx") + fmt.Sprintf("_moved%d.sqlx", n)
		p.Files[to] = p.Files[f]
		delete(p.Files, f)
		p.renamedFrom = f
		return Edit{kind, to}, true
	}
	return Edit{}, false
}

// Kinds are every kind of edit, in a fixed order (fuzz inputs index it).
func Kinds() []string {
	out := make([]string, len(weights))
	for i, w := range weights {
		out[i] = w.kind
	}
	return out
}
