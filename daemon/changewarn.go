package daemon

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dfdtools/dfd/changes"
	"github.com/dfdtools/dfd/sqlcheck"
	"github.com/dfdtools/dfd/workspace"
)

// Change warnings: while a file is edited, a warning on the column or
// config that the buffer removes, renames or retypes when actions
// downstream read it, naming them — the editor's side of `dfd diff`.
// The file is compared with itself as committed in git's HEAD: the base
// is the project as the editor has it (every other buffer included) with
// that one file as in HEAD, compiled and analysed with lineage, and the
// comparison is package changes'. The base of a file is compiled once
// and kept while only that file changes: typing in it costs the
// comparison, not a compile.

// maxChangeWarnFiles bounds how many edited files get a base of their
// own: each costs a compile when another buffer changes.
const maxChangeWarnFiles = 4

// changeWarnState is a project's bases, by edited file.
type changeWarnState struct {
	mu sync.Mutex
	// git is the repository holding the project, once found; gitKnown
	// says git answered (a project outside any repository is asked
	// once; an answer cut short by a cancelled check is asked again).
	gitMu    sync.Mutex
	gitKnown bool
	git      *gitPlace
	bases    map[string]*changeBase
	checker  *sqlcheck.Checker
	// blobs are files as committed in blobsAt (nil: not in that commit),
	// so that a check asks git only for the HEAD commit.
	blobsMu sync.Mutex
	blobsAt string
	blobs   map[string][]byte
}

// committedFile is rel as in commit; ok is false when the commit has no
// such file.
func (op *openProject) committedFile(ctx context.Context, g *gitPlace, commit, rel string) ([]byte, bool) {
	st := &op.changeWarn
	st.blobsMu.Lock()
	defer st.blobsMu.Unlock()
	if st.blobsAt != commit {
		st.blobsAt, st.blobs = commit, map[string][]byte{}
	}
	if b, ok := st.blobs[rel]; ok {
		return b, b != nil
	}
	text, err := gitCmd(ctx, g.top, "cat-file", "blob", commit+":"+g.prefix+rel)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false // not known: ask again next time
		}
		text = nil
	} else if text == nil {
		text = []byte{}
	}
	st.blobs[rel] = text
	return text, text != nil
}

// gitPlace is where the project is in its repository.
type gitPlace struct {
	top, prefix string
}

// changeBase is one edited file's base: the project with that file as in
// HEAD, under key (the HEAD commit and every other buffer).
type changeBase struct {
	key string
	rev changes.Revision
}

func gitCmd(ctx context.Context, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// gitPlace finds the project's repository; nil when it has none (or git
// is not installed).
func (op *openProject) gitPlace(ctx context.Context) *gitPlace {
	st := &op.changeWarn
	st.gitMu.Lock()
	defer st.gitMu.Unlock()
	if st.gitKnown {
		return st.git
	}
	out, err := gitCmd(ctx, op.p.Root, "rev-parse", "--show-toplevel", "--show-prefix")
	if ctx.Err() != nil {
		return nil
	}
	st.gitKnown = true
	if err != nil {
		op.b.log.Debug("change warnings off: the project is not in a git repository", "project", op.p.Root, "err", err)
		return nil
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	g := &gitPlace{top: lines[0]}
	if len(lines) > 1 {
		g.prefix = lines[1]
	}
	st.git = g
	return g
}

// editedFiles are the buffers that differ from their file in git's HEAD
// (at most maxChangeWarnFiles), with the committed texts; none when the
// project is not in a repository or nothing is edited.
type editedFiles struct {
	commit    string
	names     []string
	committed map[string][]byte
}

func (op *openProject) editedFiles(ctx context.Context, overlays map[string][]byte) *editedFiles {
	if len(overlays) == 0 {
		return nil
	}
	g := op.gitPlace(ctx)
	if g == nil {
		return nil
	}
	out, err := gitCmd(ctx, g.top, "rev-parse", "--verify", "--quiet", "HEAD")
	if err != nil {
		return nil // no commit yet
	}
	ed := &editedFiles{commit: strings.TrimSpace(string(out)), committed: map[string][]byte{}}
	names := make([]string, 0, len(overlays))
	for rel := range overlays {
		names = append(names, rel)
	}
	sort.Strings(names)
	for _, rel := range names {
		if len(ed.names) == maxChangeWarnFiles {
			break
		}
		text, ok := op.committedFile(ctx, g, ed.commit, rel)
		if !ok || bytes.Equal(text, overlays[rel]) {
			continue // new since HEAD, or not edited
		}
		ed.names = append(ed.names, rel)
		ed.committed[rel] = text
	}
	if len(ed.names) == 0 {
		return nil
	}
	return ed
}

// changeWarnings compares each edited buffer with its file at git HEAD and
// warns where the edit breaks a reader. head is the check of the buffers
// as they are (with lineage, so that a renamed column is one).
func (op *openProject) changeWarnings(ctx context.Context, ms metaSource, h *graphHandle, overlays map[string][]byte, ed *editedFiles, head *sqlcheck.Result) []workspace.Diagnostic {
	if ed == nil || head == nil {
		return nil
	}
	headRev := changes.Revision{Label: "the editor's buffers", Graph: h.graph, Check: head, Read: reader(op.p.Root, overlays)}
	var diags []workspace.Diagnostic
	for _, rel := range ed.names {
		base, err := op.changeBase(ctx, ms, ed.commit, rel, ed.committed[rel], overlays)
		if err != nil {
			if ctx.Err() == nil {
				op.b.log.Debug("change warnings: no base", "file", rel, "err", err)
			}
			continue
		}
		rep, err := changes.Compare(ctx, base, headRev)
		if err != nil {
			continue
		}
		diags = append(diags, breakingDiagnostics(op.p.Root, rel, overlays[rel], rep)...)
	}
	return diags
}

// changeBase is the project with rel as committed, the other buffers as
// they are: compiled and analysed once per such state.
func (op *openProject) changeBase(ctx context.Context, ms metaSource, commit, rel string, committed []byte, overlays map[string][]byte) (changes.Revision, error) {
	baseOverlays := make(map[string][]byte, len(overlays))
	for k, v := range overlays {
		baseOverlays[k] = v
	}
	baseOverlays[rel] = committed
	sum := sha256.New()
	fmt.Fprintf(sum, "%s\x00%s\x00%p\x00", commit, ms.desc, ms.adapter)
	keys := make([]string, 0, len(baseOverlays))
	for k := range baseOverlays {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(sum, "%s\x00%d\x00", k, len(baseOverlays[k]))
		sum.Write(baseOverlays[k])
	}
	key := fmt.Sprintf("%x", sum.Sum(nil))
	st := &op.changeWarn
	st.mu.Lock()
	defer st.mu.Unlock()
	if b := st.bases[rel]; b != nil && b.key == key {
		return b.rev, nil
	}
	paths, _, err := op.p.ListFiles()
	if err != nil {
		return changes.Revision{}, err
	}
	res, err := op.runner.Compile(ctx, CompileJob{
		Overlays:  baseOverlays,
		FilePaths: withOverlayPaths(paths, baseOverlays),
		Timeout:   op.b.opts.CompileTimeout,
	})
	if err != nil {
		return changes.Revision{}, err
	}
	rev := changes.Revision{Label: "git HEAD", Graph: res.Graph, Read: reader(op.p.Root, baseOverlays)}
	if len(res.Errors()) == 0 {
		if st.checker == nil {
			st.checker = sqlcheck.NewChecker()
		}
		chk, err := st.checker.Check(ctx, res.Graph, op.sqlOptions(ms, baseOverlays, nil, true))
		if err != nil {
			return changes.Revision{}, err
		}
		rev.Check = chk
	}
	if st.bases == nil {
		st.bases = map[string]*changeBase{}
	}
	st.bases[rel] = &changeBase{key: key, rev: rev}
	return rev, nil
}

// breakingDiagnostics are the warnings of rep's changes in file rel
// (text, the buffer) that break a reader: on the column's line (its name
// there), on the config field's, else on the first changed line.
func breakingDiagnostics(root, rel string, text []byte, rep *changes.Report) []workspace.Diagnostic {
	var out []workspace.Diagnostic
	lines := strings.Split(string(text), "\n")
	place := func(line int, word string) (int, int, int) {
		l := max(line-1, 0)
		if l >= len(lines) {
			l = len(lines) - 1
		}
		s := lines[l]
		if word != "" {
			if i := indexWord(s, word); i >= 0 {
				return l, i, i + len(word)
			}
		}
		start := len(s) - len(strings.TrimLeft(s, " \t"))
		return l, start, len(strings.TrimRight(s, " \t\r"))
	}
	for _, c := range rep.Changes {
		if c.File != rel || len(c.Impact) == 0 {
			continue
		}
		add := func(line int, word, what string, reads func(changes.Impact) bool) {
			var who []string
			seen := map[string]bool{}
			for _, im := range c.Impact {
				if !reads(im) {
					continue
				}
				s := im.Action
				if im.Column != "" {
					s += "." + im.Column
				}
				if !seen[s] {
					seen[s] = true
					who = append(who, s)
				}
			}
			if len(who) == 0 {
				return
			}
			l, sc, ec := place(line, word)
			out = append(out, workspace.Diagnostic{
				Path: filepath.Join(root, filepath.FromSlash(rel)), Line: l, Col: sc, EndLine: l, EndCol: ec,
				Severity: workspace.SeverityWarning, Source: "dfd", Code: "breaks-readers",
				Message: what + " (compared with git HEAD): read downstream by " + strings.Join(who, ", "),
			})
		}
		said := false
		for _, col := range c.Columns {
			if !c.Breaks(col) {
				continue
			}
			name := col.Column
			if col.Change == changes.ColumnRenamed {
				name = col.From
			}
			line, word := col.Line, col.Column
			if line == 0 {
				line, word = c.Line, ""
			}
			add(line, word, "column "+describeColumnChange(col), func(im changes.Impact) bool { return readsName(im, name) })
			said = true
		}
		for _, cf := range c.Config {
			if c.BreaksConfig(cf) && cf.Field == "disabled" {
				line := cf.Line
				if line == 0 {
					line = c.Line
				}
				add(line, "disabled", "disabled", func(changes.Impact) bool { return true })
				said = true
			}
		}
		if !said {
			what := c.Status
			if c.Status == changes.Renamed {
				what = "renamed from " + c.RenamedFrom
			}
			add(c.Line, "", "action "+what, func(changes.Impact) bool { return true })
		}
	}
	return out
}

// readsName says whether the impact is a direct reader of column name (or
// of a field of it), or of the whole action.
func readsName(im changes.Impact, name string) bool {
	r := im.Reads
	return im.Depth == 1 && (r == "*" || strings.EqualFold(r, name) || len(r) > len(name) && strings.EqualFold(r[:len(name)], name) && r[len(name)] == '.')
}

func describeColumnChange(col changes.ColumnChange) string {
	switch col.Change {
	case changes.ColumnRemoved:
		return col.Column + " removed"
	case changes.ColumnRenamed:
		return col.From + " renamed to " + col.To
	case changes.ColumnType:
		return col.Column + " changes type " + col.From + " → " + col.To
	case changes.ColumnMode:
		return col.Column + " changes mode " + col.From + " → " + col.To
	}
	return col.Column + " " + col.Change
}

// indexWord is the byte offset of word in s as a whole word
// (case-insensitive), or -1.
func indexWord(s, word string) int {
	ls, lw := strings.ToLower(s), strings.ToLower(word)
	for from := 0; ; {
		i := strings.Index(ls[from:], lw)
		if i < 0 {
			return -1
		}
		at := from + i
		end := at + len(lw)
		if (at == 0 || !isIdentByte(ls[at-1])) && (end >= len(ls) || !isIdentByte(ls[end])) {
			return at
		}
		from = at + 1
	}
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
