package project

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/dfdtools/dfd/internal/regfile"
)

// SettingsError is a settings file that cannot be parsed. It carries a
// position so editors can put the diagnostic where the problem is.
type SettingsError struct {
	File      string // absolute path
	Line      int    // 1-based; 0 if unknown
	Column    int    // 1-based; 0 if unknown
	EndColumn int    // 1-based, just past the problem on Line; 0 if unknown
	Msg       string
}

func (e *SettingsError) Error() string {
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	default:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
}

// workflowSettingsYAML mirrors the fields of the WorkflowSettings proto that
// dfd reads. Unknown keys are ignored here; core validates them at compile
// time with better messages than we could give.
type workflowSettingsYAML struct {
	DataformCoreVersion     string `yaml:"dataformCoreVersion"`
	DefaultProject          string `yaml:"defaultProject"`
	DefaultDataset          string `yaml:"defaultDataset"`
	DefaultLocation         string `yaml:"defaultLocation"`
	DefaultAssertionDataset string `yaml:"defaultAssertionDataset"`
}

// dataformJSON mirrors the legacy ProjectConfig proto fields dfd reads.
type dataformJSON struct {
	DefaultDatabase string `json:"defaultDatabase"`
	DefaultSchema   string `json:"defaultSchema"`
	DefaultLocation string `json:"defaultLocation"`
	AssertionSchema string `json:"assertionSchema"`
}

// ParseSettings reads settings from data, the text of the settings file at
// path (workflow_settings.yaml or dataform.json, by its name), as Open
// reads that file: an editor's unsaved buffer of it is then refused as the
// saved file would be.
func ParseSettings(path string, data []byte) (Settings, error) {
	if filepath.Base(path) == DataformJSONFile {
		return parseDataformJSON(path, data)
	}
	return parseWorkflowSettings(path, data)
}

func readWorkflowSettings(path string) (Settings, error) {
	data, err := regfile.ReadFile(path)
	if err != nil {
		return Settings{}, fmt.Errorf("read settings: %w", err)
	}
	return parseWorkflowSettings(path, data)
}

func parseWorkflowSettings(path string, data []byte) (Settings, error) {
	var w workflowSettingsYAML
	if err := yaml.Unmarshal(data, &w); err != nil {
		return Settings{}, yamlError(path, err)
	}
	return Settings{
		DataformCoreVersion:     strings.TrimSpace(w.DataformCoreVersion),
		DefaultProject:          w.DefaultProject,
		DefaultDataset:          w.DefaultDataset,
		DefaultLocation:         w.DefaultLocation,
		DefaultAssertionDataset: w.DefaultAssertionDataset,
	}, nil
}

func readDataformJSON(path string) (Settings, error) {
	data, err := regfile.ReadFile(path)
	if err != nil {
		return Settings{}, fmt.Errorf("read settings: %w", err)
	}
	return parseDataformJSON(path, data)
}

func parseDataformJSON(path string, data []byte) (Settings, error) {
	var d dataformJSON
	if err := json.Unmarshal(data, &d); err != nil {
		return Settings{}, jsonError(path, data, err)
	}
	return Settings{
		DefaultProject:          d.DefaultDatabase,
		DefaultDataset:          d.DefaultSchema,
		DefaultLocation:         d.DefaultLocation,
		DefaultAssertionDataset: d.AssertionSchema,
	}, nil
}

// yaml.v3 only exposes positions inside its messages ("yaml: line 3: ..."
// for syntax errors, "line 3: ..." per entry of a *yaml.TypeError).
var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

func yamlError(path string, err error) error {
	msgs := []string{err.Error()}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msgs = te.Errors
	}
	se := &SettingsError{File: path, Msg: strings.TrimPrefix(msgs[0], "yaml: ")}
	if m := yamlLineRE.FindStringSubmatch(msgs[0]); m != nil {
		se.Line, _ = strconv.Atoi(m[1])
		se.Msg = m[2]
	}
	if len(msgs) > 1 {
		se.Msg += fmt.Sprintf(" (and %d more)", len(msgs)-1)
	}
	return se
}

func jsonError(path string, data []byte, err error) error {
	var offset int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		offset = syn.Offset
	case errors.As(err, &typ):
		offset = typ.Offset
	}
	se := &SettingsError{File: path, Msg: err.Error()}
	if offset >= 0 {
		// Offsets point just past the offending byte; step back onto it.
		if offset > 0 {
			offset--
		}
		offset = min(offset, int64(len(data)))
		before := data[:offset]
		se.Line = bytes.Count(before, []byte("\n")) + 1
		se.Column = int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	}
	return se
}

// coreYAMLErrorRE is @dataform/core's refusal of a YAML file its js-yaml
// cannot load: "<file> is not a valid YAML file: YAMLException: <reason>
// (LINE:COL)", then js-yaml's snippet of the lines around it.
var coreYAMLErrorRE = regexp.MustCompile(`(?m)(\S+) is not a valid YAML file: (?:YAMLException: )?(.*?) \((\d+):(\d+)\)$`)

// coreSettingsKeyRE is core's refusal of a key of the workflow settings
// (verifyObjectMatchesProto, wrapped by core as a "Workflow settings
// error"). The key may be at any depth of the file: core does not say.
var coreSettingsKeyRE = regexp.MustCompile(`(?m)(Workflow settings error: Unexpected property "(.*)", or property value type of "\w+" is incorrect\..*)$`)

// CoreSettingsError recognises, in the message of a compile that failed,
// core's refusal of the settings file of the project at root, whose text
// core read is text: YAML that dfd's parser accepts but core's js-yaml
// does not (an unknown tag such as `!custom`, …), at js-yaml's position;
// a key core does not know (or whose value has the wrong type), on that
// key when dfd can tell which one core means, else with no position.
func CoreSettingsError(root, msg string, text []byte) (*SettingsError, bool) {
	if m := coreSettingsKeyRE.FindStringSubmatch(msg); m != nil {
		se := &SettingsError{File: filepath.Join(root, WorkflowSettingsFile), Msg: m[1]}
		se.Line, se.Column, se.EndColumn = topLevelKey(text, m[2])
		return se, true
	}
	m := coreYAMLErrorRE.FindStringSubmatch(msg)
	if m == nil {
		return nil, false
	}
	file := filepath.FromSlash(m[1])
	if !filepath.IsAbs(file) {
		file = filepath.Join(root, file)
	}
	if filepath.Clean(file) != filepath.Join(root, WorkflowSettingsFile) {
		return nil, false
	}
	se := &SettingsError{File: file, Msg: m[2]}
	se.Line, _ = strconv.Atoi(m[3])
	se.Column, _ = strconv.Atoi(m[4])
	return se, true
}

// topLevelKey is where key is written in the YAML text (1-based line, byte
// columns of its start and just past its end) when it is a key of the
// top-level mapping and no mapping at any depth has another key of that
// name: core's message names a key without saying where, and a nested key
// of the same name could be the one it means. It is 0, 0, 0 otherwise.
func topLevelKey(text []byte, key string) (line, col, endCol int) {
	var doc yaml.Node
	if yaml.Unmarshal(text, &doc) != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return 0, 0, 0
	}
	top := doc.Content[0]
	var found *yaml.Node
	count := 0
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		// Aliases are not followed: what they repeat is written (and
		// counted) at its anchor.
		for i, c := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 0 && c.Kind == yaml.ScalarNode && c.Value == key {
				count++
				if n == top {
					found = c
				}
			}
			walk(c)
		}
	}
	walk(top)
	if count != 1 || found == nil {
		return 0, 0, 0
	}
	// yaml.v3's columns count characters; the key must be written there
	// as it reads, plain or quoted without escapes.
	lines := bytes.Split(text, []byte("\n"))
	if found.Line < 1 || found.Line > len(lines) {
		return 0, 0, 0
	}
	l := lines[found.Line-1]
	start := 0
	for range found.Column - 1 {
		_, size := utf8.DecodeRune(l[start:])
		if size == 0 {
			return 0, 0, 0
		}
		start += size
	}
	written := key
	switch found.Style {
	case 0:
	case yaml.DoubleQuotedStyle:
		written = `"` + key + `"`
	case yaml.SingleQuotedStyle:
		written = "'" + key + "'"
	default:
		return 0, 0, 0
	}
	if !bytes.HasPrefix(l[start:], []byte(written)) {
		return 0, 0, 0
	}
	return found.Line, start + 1, start + len(written) + 1
}
