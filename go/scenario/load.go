package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// FieldError is a problem with one field of one file.
type FieldError struct {
	File  string
	Field string
	Msg   string
}

// Error formats the problem as "file: field: message".
func (e *FieldError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Field, e.Msg)
}

// Load reads, decodes and validates a scenario file and the graph it names.
func Load(path string) (*Scenario, error) {
	var sc Scenario
	if err := decodeStrict(path, &sc); err != nil {
		return nil, err
	}
	sc.Path = path
	if sc.Format != FormatScenario {
		return nil, &FieldError{path, "format",
			fmt.Sprintf("want %q, got %q", FormatScenario, sc.Format)}
	}
	if sc.GraphFile == "" {
		return nil, &FieldError{path, "graph", "missing graph file path"}
	}
	graphPath := sc.GraphFile
	if !filepath.IsAbs(graphPath) {
		graphPath = filepath.Join(filepath.Dir(path), graphPath)
	}
	if _, err := os.Stat(graphPath); err != nil {
		return nil, &FieldError{path, "graph", fmt.Sprintf("cannot read graph file: %v", err)}
	}
	g, err := LoadGraph(graphPath)
	if err != nil {
		return nil, err
	}
	sc.Graph = g
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	return &sc, nil
}

// LoadGraph reads, decodes and validates a graph file.
func LoadGraph(path string) (*Graph, error) {
	var g Graph
	if err := decodeStrict(path, &g); err != nil {
		return nil, err
	}
	g.Path = path
	if g.Format != FormatGraph {
		return nil, &FieldError{path, "format",
			fmt.Sprintf("want %q, got %q", FormatGraph, g.Format)}
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return &g, nil
}

// decodeStrict decodes a JSON file, refusing unknown fields, and turns the
// decoder's errors into FieldErrors.
func decodeStrict(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return &FieldError{path, "", err.Error()}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		var syntaxErr *json.SyntaxError
		switch {
		case errors.As(err, &typeErr):
			return &FieldError{path, typeErr.Field,
				fmt.Sprintf("want %s, got JSON %s", typeErr.Type, typeErr.Value)}
		case errors.As(err, &syntaxErr):
			return &FieldError{path, "",
				fmt.Sprintf("invalid JSON at byte %d: %v", syntaxErr.Offset, err)}
		default:
			return &FieldError{path, "", err.Error()}
		}
	}
	return nil
}
