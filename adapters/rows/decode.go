package rows

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/dfdtools/dfd/adapters"
)

// decodeRows decodes BigQuery's raw rows with their schema.
func decodeRows(raw []*structpb.Struct, cols []*adapters.Column) ([]Record, error) {
	out := make([]Record, 0, len(raw))
	for i, r := range raw {
		rec, err := decodeRecord(r.AsMap(), cols)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		out = append(out, rec)
	}
	return out, nil
}

// decodeRecord decodes {"f":[{"v":…}, …]} with cols.
func decodeRecord(v any, cols []*adapters.Column) (Record, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a record is %T, not {\"f\": […]}", v)
	}
	cells, _ := m["f"].([]any)
	if len(cells) != len(cols) {
		return nil, fmt.Errorf("%d values for %d columns", len(cells), len(cols))
	}
	out := make(Record, len(cols))
	for i, c := range cols {
		cell, _ := cells[i].(map[string]any)
		val, err := decodeCell(cell["v"], c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		out[i] = Field{Name: c.Name, Value: val}
	}
	return out, nil
}

// decodeCell decodes one value of column c, an ARRAY when c is REPEATED.
func decodeCell(v any, c *adapters.Column) (any, error) {
	if c.Mode != "REPEATED" {
		return decodeValue(v, c)
	}
	if v == nil {
		return []any{}, nil // BigQuery has no NULL arrays
	}
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("an array is %T, not [{\"v\": …}]", v)
	}
	out := make([]any, 0, len(items))
	for i, it := range items {
		m, _ := it.(map[string]any)
		val, err := decodeValue(m["v"], c)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out = append(out, val)
	}
	return out, nil
}

const maxExactInt = 1 << 53

func decodeValue(v any, c *adapters.Column) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch strings.ToUpper(c.Type) {
	case "RECORD", "STRUCT":
		return decodeRecord(v, c.Fields)
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("a %s value is %T, not text", c.Type, v)
	}
	switch strings.ToUpper(c.Type) {
	case "INTEGER", "INT64":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("INT64 %q: %w", s, err)
		}
		if n >= -maxExactInt && n <= maxExactInt {
			return n, nil
		}
		return s, nil // a double would change it
	case "FLOAT", "FLOAT64":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("FLOAT64 %q: %w", s, err)
		}
		switch {
		case math.IsNaN(f):
			return "NaN", nil
		case math.IsInf(f, 1):
			return "Infinity", nil
		case math.IsInf(f, -1):
			return "-Infinity", nil
		}
		return f, nil
	case "BOOLEAN", "BOOL":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("BOOL %q: %w", s, err)
		}
		return b, nil
	case "TIMESTAMP":
		return timestampText(s), nil
	}
	return s, nil
}

// timestampText is BigQuery's canonical text of a TIMESTAMP sent as
// seconds since the epoch ("1.7040672001E9"): "2024-01-01 00:00:00.1
// UTC", to the microsecond. A value in any other form is kept as it is.
func timestampText(s string) string {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return s
	}
	micros := new(big.Rat).Mul(r, big.NewRat(1_000_000, 1))
	q := new(big.Int).Quo(micros.Num(), micros.Denom()) // BigQuery sends whole microseconds
	if !q.IsInt64() {
		return s
	}
	return time.UnixMicro(q.Int64()).UTC().Format("2006-01-02 15:04:05.999999") + " UTC"
}

// MarshalJSON encodes r as an object with its keys in r's order.
func (r Record) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range r {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.Name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ConsoleBase is BigQuery's console.
const ConsoleBase = "https://console.cloud.google.com/bigquery"

// ConsoleTableURL opens a table in BigQuery's console (its schema,
// details and preview tabs), billing project project.
func ConsoleTableURL(project, database, schema, name string) string {
	q := url.Values{}
	if project != "" {
		q.Set("project", project)
	}
	q.Set("p", database)
	q.Set("d", schema)
	q.Set("t", name)
	q.Set("page", "table")
	return ConsoleBase + "?" + q.Encode()
}

// ConsoleJobURL opens a query job's results in BigQuery's console. Without
// its location, the project's job history.
func ConsoleJobURL(project, location, jobID string) string {
	q := url.Values{}
	q.Set("project", project)
	if location == "" || jobID == "" {
		q.Set("page", "jobs")
		return ConsoleBase + "?" + q.Encode()
	}
	q.Set("j", "bq:"+location+":"+jobID)
	q.Set("page", "queryresults")
	return ConsoleBase + "?" + q.Encode()
}
