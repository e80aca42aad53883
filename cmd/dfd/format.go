package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dfdtools/dfd/internal/regfile"
	"github.com/dfdtools/dfd/sqlxfmt"
)

// runFormat is `dfd format [--check] [PATHS…]`: the SQL of .sqlx files
// through GoogleSQL's formatter (package sqlxfmt). Exit status: 0 when
// every file is formatted (or, without --check, has been rewritten); 1
// with --check when a file would change; 2 on usage errors and files that
// cannot be read or written. Parts left as written (SQL GoogleSQL does
// not parse, a placeholder standing for a clause) are reported on stderr as
// file:line: lines and do not fail the run: the file is as good as dfd
// can safely make it.
func runFormat(ctx context.Context, env *cmdEnv, args []string) int {
	fset := newFlagSet("format", env.stderr)
	check := fset.Bool("check", false, "change nothing: list the files that formatting would change and exit 1 if there are any")
	quiet := fset.Bool("quiet", false, "do not report the parts left as written")
	report := addReportFlags(fset, false)
	fset.Usage = func() {
		fmt.Fprintln(env.stderr, "Usage: dfd format [--check] [--quiet] [--format text|json|github|sarif] [--fail-on error|warning] [PATHS…]")
		fmt.Fprintln(env.stderr, "Formats the SQL of .sqlx files (the query, pre_operations and post_operations) with")
		fmt.Fprintln(env.stderr, "GoogleSQL's formatter; ${…} placeholders, config and js blocks stay as written.")
		fmt.Fprintln(env.stderr, "PATHS are files or directories (default: the current directory; node_modules and")
		fmt.Fprintln(env.stderr, "hidden directories are skipped). SQL that cannot be formatted safely is left as")
		fmt.Fprintln(env.stderr, "written, with a message. --format other than text needs --check; --fail-on warning")
		fmt.Fprintln(env.stderr, "also fails (exit 1) on parts left as written.")
		fset.PrintDefaults()
	}
	paths, err := parseInterspersed(fset, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := report.resolve(); err != nil {
		fmt.Fprintf(env.stderr, "dfd format: %v\n", err)
		return 2
	}
	if report.format != reportText && !*check {
		fmt.Fprintf(env.stderr, "dfd format: --format %s reports findings and needs --check\n", report.format)
		return 2
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	text := report.format == reportText
	// findings are what --format json, github and sarif print: each file
	// that would change (an error) and each part left as written (a
	// warning), named as given or relative to the working directory.
	var findings []checkFinding
	leftAsWritten := 0
	files, skipped, err := sqlxFiles(paths)
	if err != nil {
		fmt.Fprintf(env.stderr, "dfd format: %v\n", err)
		return 2
	}
	for _, err := range skipped {
		fmt.Fprintf(env.stderr, "dfd format: warning: %v; skipped\n", err)
	}
	code, changed := 0, 0
	for _, f := range files {
		if ctx.Err() != nil {
			return 2
		}
		src, err := regfile.ReadFile(f) // a named pipe given by name would block os.ReadFile
		if err != nil {
			fmt.Fprintf(env.stderr, "dfd format: %v\n", err)
			code = 2
			continue
		}
		res, err := sqlxfmt.Format(src)
		if err != nil {
			fmt.Fprintf(env.stderr, "dfd format: %s: %v\n", f, err)
			return 2
		}
		leftAsWritten += len(res.Problems)
		for _, p := range res.Problems {
			if text {
				if !*quiet {
					fmt.Fprintf(env.stderr, "%s:%d: %s\n", f, p.Line, p.Message)
				}
				continue
			}
			findings = append(findings, checkFinding{File: reportName(f), Line: p.Line, Column: 1, EndLine: p.Line, Severity: "warning", Message: p.Message, Code: "format-left-as-written"})
		}
		if !res.Changed || bytes.Equal(res.Text, src) {
			continue
		}
		changed++
		if *check {
			if text {
				fmt.Fprintln(env.stdout, f)
			} else {
				line := firstChangedLine(src, res.Text)
				findings = append(findings, checkFinding{File: reportName(f), Line: line, Column: 1, EndLine: line, Severity: "error",
					Message: "not formatted: `dfd format " + f + "` would change it from this line on", Code: "unformatted"})
			}
			if code == 0 {
				code = 1
			}
			continue
		}
		if err := writeKeepingMode(f, res.Text); err != nil {
			fmt.Fprintf(env.stderr, "dfd format: %v\n", err)
			code = 2
			continue
		}
		fmt.Fprintln(env.stdout, f)
	}
	if *check && changed > 0 {
		fmt.Fprintf(env.stderr, "%d of %d file(s) would be reformatted\n", changed, len(files))
	}
	if code == 0 && report.fails(0, leftAsWritten) {
		fmt.Fprintf(env.stderr, "dfd format: %d part(s) left as written (--fail-on warning)\n", leftAsWritten)
		code = 1
	}
	switch report.format {
	case reportJSON:
		if findings == nil {
			findings = []checkFinding{}
		}
		sortFindings(findings)
		if err := writeJSON(env.stdout, findings); err != nil {
			fmt.Fprintf(env.stderr, "dfd format: %v\n", err)
			return 2
		}
	case reportGitHub:
		sortFindings(findings)
		printGitHub(env.stdout, findings, "", false)
	case reportSARIF:
		sortFindings(findings)
		if err := writeJSON(env.stdout, sarifReport(findings, "", false, nil, code)); err != nil {
			fmt.Fprintf(env.stderr, "dfd format: %v\n", err)
			return 2
		}
	}
	return code
}

// reportName is a file's name in dfd format's findings: relative to the
// working directory when it is under it (GitHub places annotations by
// repository path), else as given; slash-separated.
func reportName(path string) string {
	if filepath.IsAbs(path) {
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(rel, "..") {
				path = rel
			}
		}
	}
	return filepath.ToSlash(path)
}

// firstChangedLine is the 1-based line of the first byte where formatted
// differs from src: where an annotation should point.
func firstChangedLine(src, formatted []byte) int {
	n := 0
	for n < len(src) && n < len(formatted) && src[n] == formatted[n] {
		n++
	}
	return bytes.Count(src[:n], []byte("\n")) + 1
}

// sqlxFiles are the .sqlx files of paths: files as given (whatever their
// extension: the user named them), directories walked, sorted and
// without duplicates. Walked .sqlx names that are named pipes, sockets or
// devices (or symbolic links to one) are not formatted: skipped says
// which, to be reported (dfd reads only regular files). Symbolic links to
// regular files are not followed either, as before: formatting replaces a
// file, which would turn the link into a copy.
func sqlxFiles(paths []string) (files []string, skipped []error, err error) {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, root := range paths {
		info, err := os.Stat(root)
		if err != nil {
			return nil, nil, err
		}
		if !info.IsDir() {
			add(filepath.Clean(root))
			continue
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != root && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".sqlx") {
				return nil
			}
			if d.Type().IsRegular() {
				add(p)
				return nil
			}
			fi, err := os.Stat(p) // follows a link; the entry's type says the rest
			if err != nil {
				return nil // a broken link: nothing to format
			}
			if err := regfile.Check(p, fi); err != nil {
				skipped = append(skipped, err)
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", root, err)
		}
	}
	sort.Strings(out)
	return out, skipped, nil
}

// writeKeepingMode replaces a file's content through a temporary file in
// its directory, so that an interrupted run never leaves half a file.
func writeKeepingMode(path string, data []byte) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dfd-format-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(info.Mode().Perm()); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
