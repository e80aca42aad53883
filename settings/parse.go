package settings

import (
	"encoding/json"
	"sort"
	"strings"
	"time"
)

type kind int

const (
	kindString kind = iota
	kindEnum
	kindBool
	kindMs
	kindInt
	kindNumber
)

// field is one server setting (settings_gen.go lists them).
type field struct {
	kind     kind
	enum     []string
	lenient  bool // an enum that keeps unknown values, for the backend to report
	min, max float64
	hasMin   bool
	hasMax   bool
	get      func(*Settings) any // a pointer to the field
	reset    func(*Settings)
}

// Known reports whether key (without "dfd.") is a server setting.
func Known(key string) bool {
	_, ok := fields[key]
	return ok
}

// Parse reads dfd's settings from initializationOptions or a
// didChangeConfiguration payload on top of cur. It accepts {"dfd": {...}},
// the inner object itself, the flat VS Code form {"dfd.metadata.snapshot":
// …} and mixtures ({"metadata": {…}, "bigquery.endpoint": …}); a flat key
// wins over the same key in an object. Keys that are absent keep their
// current value; null resets a setting to its default; values of the
// wrong type or out of range are ignored. ok is false when raw is not a
// JSON object.
func Parse(raw []byte, cur Settings) (s Settings, ok bool) {
	vals, ok := values(raw)
	if !ok {
		return cur, false
	}
	for key, v := range vals {
		f := fields[key]
		if string(v) == "null" {
			f.reset(&cur)
			continue
		}
		f.set(&cur, v)
	}
	return cur, true
}

func (f field) set(s *Settings, raw json.RawMessage) {
	switch p := f.get(s).(type) {
	case *string:
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return
		}
		if f.kind == kindEnum {
			norm := strings.ToLower(strings.TrimSpace(v))
			known := false
			for _, e := range f.enum {
				known = known || e == norm
			}
			switch {
			case known, norm == "":
				v = norm
			case !f.lenient:
				return
			}
		}
		*p = v
	case *bool:
		var v bool
		if json.Unmarshal(raw, &v) == nil {
			*p = v
		}
	case *time.Duration:
		if v, ok := f.number(raw); ok {
			*p = time.Duration(v * float64(time.Millisecond))
		}
	case *int64:
		if v, ok := f.number(raw); ok && v == float64(int64(v)) {
			*p = int64(v)
		}
	case *float64:
		if v, ok := f.number(raw); ok {
			*p = v
		}
	}
}

func (f field) number(raw json.RawMessage) (float64, bool) {
	var v float64
	if json.Unmarshal(raw, &v) != nil {
		return 0, false
	}
	if (f.hasMin && v < f.min) || (f.hasMax && v > f.max) {
		return 0, false
	}
	return v, true
}

// values flattens a settings payload into its dotted keys without "dfd."
// ("metadata.snapshot" → raw value). Nested objects are read first, then
// flat keys, which win.
func values(raw []byte) (map[string]json.RawMessage, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil || top == nil {
		return nil, false
	}
	if inner, ok := top["dfd"]; ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(inner, &m) == nil && m != nil {
			top = m
		}
	}
	out := map[string]json.RawMessage{}
	var walk func(prefix string, m map[string]json.RawMessage, depth int)
	walk = func(prefix string, m map[string]json.RawMessage, depth int) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		// Objects and plain keys before dotted ones, so that flat keys win.
		sort.Slice(keys, func(i, j int) bool {
			di, dj := strings.Contains(keys[i], "."), strings.Contains(keys[j], ".")
			if di != dj {
				return !di
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys {
			name := prefix + strings.TrimPrefix(k, "dfd.")
			if Known(name) {
				out[name] = m[k]
				continue
			}
			var sub map[string]json.RawMessage
			if depth < 3 && json.Unmarshal(m[k], &sub) == nil && sub != nil {
				walk(name+".", sub, depth+1)
			}
		}
	}
	walk("", top, 0)
	return out, true
}

// Has reports whether raw holds at least one dfd setting (VS Code sends a
// change without them and expects the server to pull the section).
func Has(raw []byte) bool {
	if len(raw) == 0 || string(raw) == "null" {
		return false
	}
	vals, ok := values(raw)
	return ok && len(vals) > 0
}
