package project

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// SettingsError is a settings file that cannot be parsed. It carries a
// position so editors can put the diagnostic where the problem is.
type SettingsError struct {
	File   string // absolute path
	Line   int    // 1-based; 0 if unknown
	Column int    // 1-based; 0 if unknown
	Msg    string
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

func readWorkflowSettings(path string) (Settings, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Settings{}, fmt.Errorf("read settings: %w", err)
	}
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
	data, err := os.ReadFile(path)
	if err != nil {
		return Settings{}, fmt.Errorf("read settings: %w", err)
	}
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

// CoreSettingsError recognises, in the message of a compile that failed,
// core's refusal of the settings file of the project at root: YAML that
// dfd's parser accepts but core's js-yaml does not (an unknown tag such as
// `!custom`, …). It carries js-yaml's position.
func CoreSettingsError(root, msg string) (*SettingsError, bool) {
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
