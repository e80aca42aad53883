package sqlcheck

import (
	"path"
	"strings"

	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/source"
)

// A column rename's edits of the action's config block: the strings that
// name the column — uniqueKey, assertions' uniqueKey, uniqueKeys and
// nonNull, the columns' documentation keys, bigquery's clusterBy, and the
// column in bigquery's partitionBy expression. Those are exact literal
// edits; a value that is not a plain string literal (a variable, a
// template with ${…}) could be the column and is refused, and SQL the
// config holds as text (rowConditions, updatePartitionFilter) is refused
// when it names the column: dfd does not analyse it.

func (r *renameRun) configEdits() {
	a := r.target
	rel := path.Clean(a.file)
	src := r.c.file(a.file)
	if src == nil {
		r.places = append(r.places, RenamePlace{File: rel, Why: "dfd could not read the file"})
		return
	}
	cfg, ok := source.SQLXConfig(src.text)
	if !ok {
		return
	}
	col, to := r.plan.req.Column, r.plan.req.NewName
	block := func(sp source.Span, why string) {
		r.places = append(r.places, RenamePlace{File: rel, Offset: sp.Start, Why: why})
	}
	edit := func(sp source.Span, text string) {
		r.plan.Edits = append(r.plan.Edits, RenameEdit{File: rel, Start: sp.Start, End: sp.End, Old: string(src.text[sp.Start:sp.End]), New: text})
		r.plan.Files[rel] = src.text
	}
	notPlain := func(v source.ConfigValue, what string) {
		block(v.Span, what+" is not a plain string literal, so dfd cannot tell whether it names "+col)
	}
	name := func(v source.ConfigValue, what string) {
		switch {
		case v.Kind != source.ConfigString || !v.Plain:
			notPlain(v, what)
		case strings.EqualFold(v.Str.Value, col):
			edit(v.Str.Span, to)
		}
	}
	names := func(v source.ConfigValue, what string) {
		if v.Kind != source.ConfigArray {
			name(v, what)
			return
		}
		for _, e := range v.Elems {
			name(e, what)
		}
	}
	sqlText := func(v source.ConfigValue, what string) {
		switch {
		case v.Kind != source.ConfigString || !v.Plain:
			notPlain(v, what)
		case mentionsWord(v.Str.Value, col):
			block(v.Span, what+" is SQL that names "+col+", which dfd does not rename: change it, then rename again")
		}
	}
	object := func(v source.ConfigValue, what string) bool {
		if v.Kind != source.ConfigObject {
			notPlain(v, what)
			return false
		}
		for _, f := range v.Fields {
			if f.Computed {
				block(f.Value.Span, what+" has a computed key or a spread, which may name "+col)
				return false
			}
		}
		return true
	}
	if !object(cfg, "the config") {
		return
	}
	if f, ok := cfg.Field("uniqueKey"); ok {
		names(f.Value, "uniqueKey")
	}
	if f, ok := cfg.Field("assertions"); ok && object(f.Value, "assertions") {
		as := f.Value
		for _, k := range []string{"uniqueKey", "nonNull"} {
			if f, ok := as.Field(k); ok {
				names(f.Value, "assertions."+k)
			}
		}
		if f, ok := as.Field("uniqueKeys"); ok {
			if f.Value.Kind != source.ConfigArray {
				notPlain(f.Value, "assertions.uniqueKeys")
			}
			for _, e := range f.Value.Elems {
				names(e, "assertions.uniqueKeys")
			}
		}
		if f, ok := as.Field("rowConditions"); ok {
			if f.Value.Kind != source.ConfigArray {
				notPlain(f.Value, "assertions.rowConditions")
			}
			for _, e := range f.Value.Elems {
				sqlText(e, "assertions.rowConditions")
			}
		}
	}
	if f, ok := cfg.Field("columns"); ok && object(f.Value, "columns") {
		for _, c := range f.Value.Fields {
			if strings.EqualFold(c.Key, col) {
				edit(c.KeyName, to)
			}
		}
	}
	if f, ok := cfg.Field("bigquery"); ok && object(f.Value, "bigquery") {
		bq := f.Value
		if f, ok := bq.Field("clusterBy"); ok {
			names(f.Value, "bigquery.clusterBy")
		}
		if f, ok := bq.Field("updatePartitionFilter"); ok {
			sqlText(f.Value, "bigquery.updatePartitionFilter")
		}
		if f, ok := bq.Field("partitionBy"); ok {
			v := f.Value
			if v.Kind != source.ConfigString || !v.Plain {
				notPlain(v, "bigquery.partitionBy")
			} else {
				sure, unsure := columnWords(v.Str.Value, col)
				for _, sp := range sure {
					edit(source.Span{Start: v.Str.Span.Start + sp.Start, End: v.Str.Span.Start + sp.End}, to)
				}
				if len(unsure) > 0 {
					block(v.Span, "bigquery.partitionBy names "+col+" where dfd cannot tell it is the column: change it, then rename again")
				}
			}
		}
	}
}

// columnWords are where expression sql names column: the whole
// expression, or a function's first argument (DATE(ordered_at),
// TIMESTAMP_TRUNC(ordered_at, DAY)). unsure are other words equal to it,
// which may be the column or not (a date part DAY): not guessed at.
func columnWords(sql, column string) (out, unsure []source.Span) {
	toks, err := gsql.Tokens(sql)
	if err != nil {
		return nil, []source.Span{{Start: 0, End: len(sql)}}
	}
	for _, t := range toks {
		if t.Kind != gsql.Word || !strings.EqualFold(sql[t.Start:t.End], column) {
			continue
		}
		sp := source.Span{Start: t.Start, End: t.End}
		if rest := strings.TrimLeft(sql[t.End:], " \t\r\n"); strings.HasPrefix(rest, "(") {
			continue // a function of that name
		}
		before := strings.TrimRight(sql[:t.Start], " \t\r\n")
		if before == "" && strings.TrimSpace(sql[t.End:]) == "" || strings.HasSuffix(before, "(") {
			out = append(out, sp)
		} else {
			unsure = append(unsure, sp)
		}
	}
	return out, unsure
}
