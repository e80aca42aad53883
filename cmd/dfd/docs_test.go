package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/docs"
)

// commandsDoc is the command reference whose flag tables this file holds
// to the commands' --help.
const commandsDoc = "../../docs/commands.md"

// overrideFlagsAnchor is the heading of docs/commands.md whose table lists
// the flags of overrideFlags, which compile, check, jit and lineage share:
// it is in dfd compile's section, and the sections of check, jit and
// lineage link to it (the test requires the link, so that their readers
// find those flags).
const overrideFlagsAnchor = "override-flags"

// docFlagSections says where docs/commands.md lists each command's flags:
// the headings (GitHub anchors) whose flag tables together list them. A
// heading's tables are those up to the next heading of the same or a
// higher level, so a `##` heading includes its `###` subsections.
var docFlagSections = []struct {
	args    []string // the command (and subcommand) to run with --help
	anchors []string
}{
	{[]string{"compile"}, []string{"dfd-compile"}},
	{[]string{"check"}, []string{"dfd-check", overrideFlagsAnchor}},
	{[]string{"jit"}, []string{"dfd-jit", overrideFlagsAnchor}},
	{[]string{"lineage"}, []string{"dfd-lineage", overrideFlagsAnchor}},
	{[]string{"diff"}, []string{"dfd-diff", overrideFlagsAnchor}},
	{[]string{"format"}, []string{"dfd-format"}},
	{[]string{"metadata", "snapshot"}, []string{"dfd-metadata-snapshot", "flags-of-every-subcommand"}},
	{[]string{"metadata", "refresh"}, []string{"dfd-metadata-refresh", "flags-of-every-subcommand"}},
	{[]string{"metadata", "status"}, []string{"dfd-metadata-status", "flags-of-every-subcommand"}},
	{[]string{"metadata", "clear"}, []string{"dfd-metadata-clear", "flags-of-every-subcommand"}},
	{[]string{"rows"}, []string{"dfd-rows", overrideFlagsAnchor}},
	{[]string{"serve"}, []string{"dfd-serve"}},
	{[]string{"version"}, []string{"dfd-version"}},
	{[]string{"worker"}, []string{"dfd-worker"}},
}

// TestCommandsDocListsEveryFlag holds docs/commands.md to the code: for
// every command (and every `dfd metadata` subcommand), the flags its
// --help prints are exactly the flags of its section's tables. Adding a
// flag without documenting it, or documenting one the code does not have,
// fails here.
func TestCommandsDocListsEveryFlag(t *testing.T) {
	doc, err := os.ReadFile(commandsDoc)
	if err != nil {
		t.Fatal(err)
	}
	sections := docHeadings(string(doc))

	// Every command dfd has is in the list above, so a new command cannot
	// go undocumented.
	listed := map[string]bool{}
	for _, s := range docFlagSections {
		listed[s.args[0]] = true
	}
	for _, c := range commands() {
		if !listed[c.name] {
			t.Errorf("dfd %s: not in docFlagSections; give it a `## dfd %s` section in %s with a flag table, and list it here", c.name, c.name, commandsDoc)
		}
	}

	for _, s := range docFlagSections {
		name := "dfd " + strings.Join(s.args, " ")
		t.Run(strings.Join(s.args, "_"), func(t *testing.T) {
			code := helpFlags(t, s.args)
			docFlags := map[string]bool{}
			for _, a := range s.anchors {
				sec, ok := sections[a]
				if !ok {
					t.Fatalf("%s: %s has no heading with anchor #%s", name, commandsDoc, a)
				}
				flags, bad := tableFlags(sec)
				for _, row := range bad {
					t.Errorf("%s: a row of a flag table under #%s names no flag (want `--name` or `--name VALUE` first): %s", name, a, row)
				}
				for _, f := range flags {
					if docFlags[f] {
						t.Errorf("%s: --%s is listed twice in its flag tables (#%s)", name, f, strings.Join(s.anchors, ", #"))
					}
					docFlags[f] = true
				}
			}
			// A section that takes in the shared override flags says so
			// to its reader, with a link to their table.
			if slices.Contains(s.anchors, overrideFlagsAnchor) && !strings.Contains(sections[s.anchors[0]], "(#"+overrideFlagsAnchor+")") {
				t.Errorf("%s: its section (#%s) does not link to #%s, whose flags it takes", name, s.anchors[0], overrideFlagsAnchor)
			}
			var undocumented, unknown []string
			for f := range code {
				if !docFlags[f] {
					undocumented = append(undocumented, "--"+f)
				}
			}
			for f := range docFlags {
				if !code[f] {
					unknown = append(unknown, "--"+f)
				}
			}
			slices.Sort(undocumented)
			slices.Sort(unknown)
			if len(undocumented) > 0 {
				t.Errorf("%s: flags in `%s --help` but in no flag table of %s (#%s): %s",
					name, name, commandsDoc, strings.Join(s.anchors, ", #"), strings.Join(undocumented, " "))
			}
			if len(unknown) > 0 {
				t.Errorf("%s: flags documented in %s (#%s) that `%s --help` does not list: %s",
					name, commandsDoc, strings.Join(s.anchors, ", #"), name, strings.Join(unknown, " "))
			}
		})
	}
}

// helpFlagRE matches a flag as the flag package's PrintDefaults prints it:
// two spaces, a dash, the name (then its value's type and usage).
var helpFlagRE = regexp.MustCompile(`^  -([A-Za-z0-9][A-Za-z0-9_.-]*)`)

// helpFlags runs `dfd <args> --help` in process and returns the flag names
// it prints.
func helpFlags(t *testing.T, args []string) map[string]bool {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := &cmdEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: os.Getenv}
	if code := run(context.Background(), env, append(slices.Clone(args), "--help")); code != 0 {
		t.Fatalf("dfd %s --help: exit status %d, want 0\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}
	flags := map[string]bool{}
	for line := range strings.Lines(stdout.String() + stderr.String()) {
		if m := helpFlagRE.FindStringSubmatch(line); m != nil {
			flags[m[1]] = true
		}
	}
	if len(flags) == 0 && args[0] != "version" {
		t.Fatalf("dfd %s --help printed no flags:\n%s%s", strings.Join(args, " "), stdout.String(), stderr.String())
	}
	return flags
}

// docHeadings splits a Markdown document at its headings: the text under
// each heading (by GitHub anchor) up to the next heading of the same or a
// higher level. Fenced code blocks are not searched for headings.
func docHeadings(doc string) map[string]string {
	lines := strings.Split(doc, "\n")
	hs := docs.Headings(doc)
	out := map[string]string{}
	for i, h := range hs {
		end := len(lines)
		for _, next := range hs[i+1:] {
			if next.Level <= h.Level {
				end = next.Line
				break
			}
		}
		out[h.Slug] = strings.Join(lines[h.Line+1:end], "\n")
	}
	return out
}

// flagCellRE is the flag of a flag-table row: the first code span of its
// first cell, a flag name after one or two dashes.
var flagCellRE = regexp.MustCompile("^\\|\\s*`-{1,2}([A-Za-z0-9][A-Za-z0-9_.-]*)[ `=]")

// tableFlags returns the flags of the flag tables in text: the tables
// whose header row is `| flag | default | meaning |`, one flag per row.
// bad are the rows of such a table that name no flag.
func tableFlags(text string) (flags, bad []string) {
	inTable := false
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if !inTable {
			if len(cells) == 3 && strings.TrimSpace(cells[0]) == "flag" && strings.TrimSpace(cells[1]) == "default" && strings.TrimSpace(cells[2]) == "meaning" {
				inTable = true
			}
			continue
		}
		if strings.Trim(line, "|-: ") == "" {
			continue // the delimiter row
		}
		if m := flagCellRE.FindStringSubmatch(line); m != nil {
			flags = append(flags, m[1])
		} else {
			bad = append(bad, line)
		}
	}
	return flags, bad
}
