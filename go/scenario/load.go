package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
)

// Rules a FieldError can name. They are stable identifiers of the checks
// (tests and tools match on them); the messages are for people.
const (
	RuleRead         = "read"          // the file cannot be read
	RuleSyntax       = "syntax"        // not JSON
	RuleUnknownField = "unknown-field" // a field the format does not have
	RuleType         = "type"          // a value of the wrong JSON type or out of its type's range
	RuleFormat       = "format"        // the format tag
	RuleMissing      = "missing"       // a required value is absent or empty
	RuleGraphFile    = "graph-file"    // the scenario's graph file cannot be read
	RuleNodeID       = "node-id"       // not a 33-byte public key in hex
	RuleSCID         = "scid"          // not a short channel id
	RuleDuplicate    = "duplicate"     // a node or channel listed twice
	RuleUnknownNode  = "unknown-node"  // a node id not in the graph
	RuleSelfChannel  = "self-channel"  // a channel from a node to itself
	RuleRange        = "range"         // a number outside its allowed range
	RuleCapacity     = "capacity"      // an amount above the channel's capacity
	RuleHTLCRange    = "htlc-range"    // htlc_max_msat below htlc_min_msat
	RuleRateSum      = "rate-sum"      // attribution rates adding up to more than 1
	RuleArenaUnknown = "arena-unknown" // not an arena name
	RuleArenaOff     = "arena-off"     // the settings do not switch the arena's behaviour on
	RuleNoChannel    = "no-channel"    // the source has no channel
	RuleNotOwn       = "not-own"       // a per-channel setting of a channel not the source's
	RulePolicy       = "policy"        // a sender channel without an enabled own policy
	RuleSelfPayment  = "self-payment"  // a payment to the source itself
)

// FieldError is a problem with one field of one file: Rule names the check
// that failed, Msg says what is wrong and what the file should hold.
type FieldError struct {
	File  string `json:"file"`
	Field string `json:"field"`
	Rule  string `json:"rule"`
	Msg   string `json:"message"`
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
	return NewLoader().Load(path)
}

// LoadGraph reads, decodes and validates a graph file.
func LoadGraph(path string) (*Graph, error) {
	return NewLoader().LoadGraph(path)
}

// Loader loads scenarios, reading each graph file once: the scenarios of a
// corpus share a few graphs, and a graph is the expensive part to check.
// A Loader is not safe for concurrent use.
type Loader struct {
	graphs map[string]graphLoad
}

type graphLoad struct {
	graph *Graph
	err   error
}

// NewLoader returns a Loader with no graph read yet.
func NewLoader() *Loader {
	return &Loader{graphs: make(map[string]graphLoad)}
}

// Load reads, decodes and validates a scenario file and the graph it names.
func (l *Loader) Load(path string) (*Scenario, error) {
	var sc Scenario
	if err := decodeFile(path, &sc); err != nil {
		return nil, err
	}
	sc.Path = path
	if sc.GraphFile == "" {
		return nil, &FieldError{path, "graph", RuleMissing,
			"missing graph file path (relative to this file)"}
	}
	graphPath := sc.GraphPath()
	if _, err := os.Stat(graphPath); err != nil {
		return nil, &FieldError{path, "graph", RuleGraphFile, fmt.Sprintf(
			"cannot read graph file %s (%v): give a path relative to this file", graphPath, err)}
	}
	g, err := l.LoadGraph(graphPath)
	if err != nil {
		return nil, err
	}
	sc.Graph = g
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	return &sc, nil
}

// GraphPath is the graph file the scenario names: relative to the scenario
// file unless absolute.
func (sc *Scenario) GraphPath() string {
	if filepath.IsAbs(sc.GraphFile) {
		return filepath.Clean(sc.GraphFile)
	}
	return filepath.Join(filepath.Dir(sc.Path), sc.GraphFile)
}

// LoadGraph reads, decodes and validates a graph file, once per path.
func (l *Loader) LoadGraph(path string) (*Graph, error) {
	if done, ok := l.graphs[path]; ok {
		return done.graph, done.err
	}
	g, err := loadGraph(path)
	l.graphs[path] = graphLoad{g, err}
	return g, err
}

func loadGraph(path string) (*Graph, error) {
	var g Graph
	if err := decodeFile(path, &g); err != nil {
		return nil, err
	}
	g.Path = path
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return &g, nil
}

// taggedFile is a file format whose files carry a format tag: Scenario and
// Graph.
type taggedFile interface {
	// formatTag returns the tag the file carries and the tag of its format.
	formatTag() (got, want string)
}

func (sc *Scenario) formatTag() (got, want string) { return sc.Format, FormatScenario }

func (g *Graph) formatTag() (got, want string) { return g.Format, FormatGraph }

// decodeFile decodes a JSON file into f and checks its format tag. Every
// decoding problem names its field: json.Unmarshal decodes first (fast, and
// the judge of syntax), then checkShape walks the valid text to name what
// does not fit, which json's errors do not, and to hold the file to the
// stricter rules (exact-case names, null only where a value may be absent).
func decodeFile(path string, f taggedFile) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return &FieldError{path, "", RuleRead, err.Error()}
	}
	decodeErr := json.Unmarshal(data, f)
	var se *json.SyntaxError
	if errors.As(decodeErr, &se) {
		fe := syntaxError(data, se.Offset, se)
		fe.File = path
		return fe
	}
	if fe := checkShape(data, reflect.TypeOf(f).Elem()); fe != nil {
		fe.File = path
		return fe
	}
	if decodeErr != nil {
		// checkShape admits only what decodes; this is a bug of checkShape.
		return &FieldError{path, "", RuleType, fmt.Sprintf("cannot decode: %v", decodeErr)}
	}
	if got, want := f.formatTag(); got != want {
		return &FieldError{path, "format", RuleFormat, fmt.Sprintf("want %q, got %q", want, got)}
	}
	return nil
}
