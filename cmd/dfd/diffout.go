package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/dfdtools/dfd/adapters/drycost"
	"github.com/dfdtools/dfd/changes"
)

// writeDiff prints rep and, with --cost, cost in format; prefix is the
// project's directory in the repository, which GitHub's annotations name
// files from.
func writeDiff(w io.Writer, rep *changes.Report, cost *drycost.Comparison, format, prefix string) error {
	switch format {
	case "json":
		b, err := json.MarshalIndent(struct {
			*changes.Report
			Cost *drycost.Comparison `json:"cost,omitempty"`
		}{rep, cost}, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	case "markdown":
		writeDiffMarkdown(w, rep)
		writeCostMarkdown(w, cost)
		return nil
	case "github":
		writeDiffGitHub(w, rep, prefix)
		writeCostGitHub(w, cost)
		return nil
	}
	writeDiffText(w, rep)
	writeCostText(w, cost)
	return nil
}

// summary is "2 breaking, 1 non-breaking, 0 metadata-only".
func summary(rep *changes.Report) string {
	counts := rep.Counts()
	var parts []string
	for _, c := range changes.Categories {
		parts = append(parts, fmt.Sprintf("%d %s", counts[c], c))
	}
	return strings.Join(parts, ", ")
}

// headline is one line for a change: "modified: read downstream by …".
func headline(c changes.Change) string {
	s := c.Status
	if c.Status == changes.Renamed {
		s = "renamed from " + c.RenamedFrom
	}
	if len(c.Reasons) > 0 {
		s += ": " + strings.Join(c.Reasons, "; ")
	}
	return s
}

// details are the lines under a change: statements, columns, config,
// impact.
func details(c changes.Change) []string {
	var out []string
	for _, st := range c.Statements {
		line := "SQL " + st.Statement + ": " + st.Change
		if st.Change == changes.SQLLayout {
			line += " only (same parse tree)"
		}
		if st.Why != "" {
			line += " (" + st.Why + ")"
		}
		out = append(out, line)
	}
	for _, col := range c.Columns {
		out = append(out, "column "+describeColumn(col))
	}
	for _, cf := range c.Config {
		line := fmt.Sprintf("config %s: %s → %s", cf.Field, orNone(oneLine(cf.From)), orNone(oneLine(cf.To)))
		if cf.FullRefresh {
			line += " (needs a full refresh)"
		}
		out = append(out, line)
	}
	for _, im := range c.Impact {
		who := im.Action
		if im.Column != "" {
			who += "." + im.Column
		}
		line := fmt.Sprintf("impact: %s reads %s", who, im.Reads)
		if im.Depth > 1 {
			line += fmt.Sprintf(" (%d hops downstream)", im.Depth)
		}
		line += "; at HEAD: " + im.AtHead
		if im.Error != "" {
			line += ": " + im.Error
		}
		out = append(out, line)
	}
	return out
}

func describeColumn(col changes.ColumnChange) string {
	switch col.Change {
	case changes.ColumnAdded:
		return col.Column + " added (" + col.To + ")"
	case changes.ColumnRemoved:
		return col.Column + " removed (was " + col.From + ")"
	case changes.ColumnRenamed:
		return col.From + " renamed to " + col.To
	case changes.ColumnDescription:
		return fmt.Sprintf("%s description: %q → %q", col.Column, col.From, col.To)
	}
	return fmt.Sprintf("%s %s: %s → %s", col.Column, col.Change, col.From, col.To)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// oneLine keeps a multi-line value (assertions) on one line.
func oneLine(s string) string {
	return strings.Join(strings.Split(s, "\n"), "; ")
}

func writeDiffText(w io.Writer, rep *changes.Report) {
	fmt.Fprintf(w, "dfd diff: %s → %s: %s\n", rep.Base, rep.Head, summary(rep))
	if len(rep.Changes) == 0 {
		fmt.Fprintln(w, "no change")
		return
	}
	for _, cat := range changes.Categories {
		first := true
		for _, c := range rep.Changes {
			if c.Category != cat {
				continue
			}
			if first {
				fmt.Fprintf(w, "\n%s:\n", cat)
				first = false
			}
			fmt.Fprintf(w, "  %s (%s, %s:%d) %s\n", c.Action, c.Kind, c.File, c.Line, headline(c))
			for _, d := range details(c) {
				fmt.Fprintf(w, "      %s\n", d)
			}
		}
	}
}

// mdCell escapes a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

func writeDiffMarkdown(w io.Writer, rep *changes.Report) {
	fmt.Fprintf(w, "## dfd diff: %s → %s\n\n", mdCell(rep.Base), mdCell(rep.Head))
	fmt.Fprintf(w, "%s\n", summary(rep))
	if len(rep.Changes) == 0 {
		fmt.Fprintln(w, "\nNo change.")
	}
	titles := map[changes.Category]string{changes.Breaking: "Breaking", changes.NonBreaking: "Non-breaking", changes.MetadataOnly: "Metadata-only"}
	for _, cat := range changes.Categories {
		var list []changes.Change
		for _, c := range rep.Changes {
			if c.Category == cat {
				list = append(list, c)
			}
		}
		if len(list) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n### %s (%d)\n\n", titles[cat], len(list))
		fmt.Fprintln(w, "| Action | Kind | Change | Why | File |")
		fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
		for _, c := range list {
			status := c.Status
			if c.Status == changes.Renamed {
				status = "renamed from `" + c.RenamedFrom + "`"
			}
			fmt.Fprintf(w, "| `%s` | %s | %s | %s | `%s` |\n", mdCell(c.Action), c.Kind, mdCell(status), mdCell(strings.Join(c.Reasons, "; ")), mdCell(c.File))
		}
		for _, c := range list {
			d := details(c)
			if len(d) == 0 {
				continue
			}
			fmt.Fprintf(w, "\n<details><summary><code>%s</code></summary>\n\n", htmlEscape(c.Action))
			for _, line := range d {
				fmt.Fprintf(w, "- %s\n", mdCell(line))
			}
			fmt.Fprintln(w, "\n</details>")
		}
	}
	if len(rep.Notes) > 0 {
		fmt.Fprintln(w, "\n<details><summary>Notes</summary>")
		fmt.Fprintln(w)
		for _, n := range rep.Notes {
			fmt.Fprintf(w, "- %s\n", mdCell(n))
		}
		fmt.Fprintln(w, "\n</details>")
	}
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// writeDiffGitHub prints GitHub Actions workflow commands: one
// annotation per changed column and config field on its line at HEAD,
// else one per change on the action's line. A removed action has no line
// at HEAD: its annotation names the file as it was.
func writeDiffGitHub(w io.Writer, rep *changes.Report, prefix string) {
	for _, c := range rep.Changes {
		file := prefix + c.File
		title := "dfd diff: " + string(c.Category) + ": " + c.Action
		errorSaid := false
		emit := func(breaking bool, line int, msg string) {
			level := "notice"
			if breaking {
				level, errorSaid = "error", true
			}
			fmt.Fprintf(w, "::%s file=%s,line=%d,title=%s::%s\n", level, ghProp(file), max(line, 1), ghProp(title), ghData(msg))
		}
		impact := impactLine(c)
		emitted := false
		for _, col := range c.Columns {
			if col.Line > 0 {
				b := c.Breaks(col)
				emit(b, col.Line, "column "+describeColumn(col)+map[bool]string{true: impact}[b])
				emitted = true
			}
		}
		for _, cf := range c.Config {
			if cf.Line > 0 {
				b := c.BreaksConfig(cf)
				emit(b, cf.Line, fmt.Sprintf("config %s: %s → %s", cf.Field, orNone(oneLine(cf.From)), orNone(oneLine(cf.To)))+map[bool]string{true: impact}[b])
				emitted = true
			}
		}
		// The change itself, on its first changed line: when no column
		// or config line said it, or when it is breaking and none of
		// those said why.
		if !emitted || c.Category == changes.Breaking && !errorSaid {
			emit(c.Category == changes.Breaking, c.Line, headline(c)+"\n"+strings.Join(details(c), "\n"))
		}
	}
}

// impactLine names the readers, for an annotation.
func impactLine(c changes.Change) string {
	if len(c.Impact) == 0 {
		return ""
	}
	var who []string
	for _, im := range c.Impact {
		s := im.Action
		if im.Column != "" {
			s += "." + im.Column
		}
		who = append(who, s+" ("+im.AtHead+" at HEAD)")
	}
	return "\nread downstream by " + strings.Join(who, ", ")
}

// ghData escapes a workflow command's message; ghProp a property value.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
