package scenario

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const examples = "../../docs/examples/"

func TestLoadExamples(t *testing.T) {
	for _, name := range []string{"base-example.json", "drift-example.json",
		"atomic-example.json", "attribution-example.json"} {
		sc, err := Load(examples + name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(sc.Payments) == 0 || len(sc.Graph.Channels) == 0 {
			t.Fatalf("%s: loaded empty", name)
		}
	}
}

func TestSCIDRoundTrip(t *testing.T) {
	for _, s := range []string{"0x0x0", "700000x1234x1", "16777215x16777215x65535"} {
		id, err := ParseSCID(s)
		if err != nil || FormatSCID(id) != s {
			t.Fatalf("%s -> %d -> %s (%v)", s, id, FormatSCID(id), err)
		}
	}
	for _, s := range []string{"", "1x2", "1x2x3x4", "axbxc", "16777216x0x0", "1x1x65536"} {
		if _, err := ParseSCID(s); err == nil {
			t.Fatalf("%q accepted", s)
		}
	}
}

// invalidCase is one case of testdata/invalid.json, shared with the Python
// tests: edits to the example scenario and graph, and the problem wanted.
type invalidCase struct {
	Name         string `json:"name"`
	Scenario     []edit `json:"scenario"`
	Graph        []edit `json:"graph"`
	ScenarioText string `json:"scenario_text"`
	GraphText    string `json:"graph_text"`
	Want         struct {
		File  string `json:"file"` // "scenario" or "graph"
		Field string `json:"field"`
		Rule  string `json:"rule"`
	} `json:"want"`
}

// edit sets, deletes or copies one value of a decoded JSON document.
type edit struct {
	Set    []any `json:"set"`
	Value  any   `json:"value"`
	Delete []any `json:"delete"`
	Copy   []any `json:"copy"`
	To     []any `json:"to"`
}

// TestInvalidFiles breaks one rule at a time and wants the first problem
// found to name the file, the field and the rule the case names.
func TestInvalidFiles(t *testing.T) {
	data, err := os.ReadFile("testdata/invalid.json")
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Cases []invalidCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &table); err != nil {
		t.Fatal(err)
	}
	for _, tc := range table.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{
				"scenario": writeEdited(t, dir, "base-example.json", tc.ScenarioText, tc.Scenario),
				"graph":    writeEdited(t, dir, "graph-small.json", tc.GraphText, tc.Graph),
			}
			_, err := Load(files["scenario"])
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("want a FieldError, got %v", err)
			}
			if fe.File != files[tc.Want.File] || fe.Field != tc.Want.Field || fe.Rule != tc.Want.Rule {
				t.Fatalf("got %s %q %s (%v), want %s %q %s", fe.File, fe.Field, fe.Rule, err,
					files[tc.Want.File], tc.Want.Field, tc.Want.Rule)
			}
			if !strings.HasPrefix(err.Error(), fe.File+": ") || fe.Msg == "" {
				t.Fatalf("message %q does not name the file or says nothing", err)
			}
		})
	}
}

// TestBundledCorpusLoads loads every scenario of the bundled corpus with
// one Loader, as scenariocheck does.
func TestBundledCorpusLoads(t *testing.T) {
	paths, err := filepath.Glob("../../corpus/*/*.json")
	if err != nil {
		t.Fatal(err)
	}
	loader, n := NewLoader(), 0
	for _, path := range paths {
		if dir := filepath.Base(filepath.Dir(path)); dir == "graphs" {
			continue
		}
		if _, err := loader.Load(path); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no scenario in ../../corpus")
	}
}

// writeEdited writes an example file into dir, its text replaced or its
// JSON edited, and returns the path written.
func writeEdited(t *testing.T, dir, name, text string, edits []edit) string {
	t.Helper()
	out := []byte(text)
	if text == "" {
		var doc any
		data, err := os.ReadFile(examples + name)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		for _, e := range edits {
			doc = e.apply(t, doc)
		}
		if out, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func (e edit) apply(t *testing.T, doc any) any {
	switch {
	case e.Set != nil:
		return put(t, doc, e.Set, e.Value)
	case e.Delete != nil:
		parent := at(t, doc, e.Delete[:len(e.Delete)-1]).(map[string]any)
		delete(parent, e.Delete[len(e.Delete)-1].(string))
		return doc
	case e.Copy != nil:
		return put(t, doc, e.To, at(t, doc, e.Copy))
	}
	t.Fatalf("empty edit %+v", e)
	return nil
}

// at is the value at path (object keys and array indices).
func at(t *testing.T, doc any, path []any) any {
	for _, key := range path {
		switch v := doc.(type) {
		case map[string]any:
			doc = v[key.(string)]
		case []any:
			doc = v[int(key.(float64))]
		default:
			t.Fatalf("no %v in %v", key, path)
		}
	}
	return doc
}

// put sets the value at path, appending when the index is an array's length.
func put(t *testing.T, doc any, path []any, value any) any {
	if len(path) == 0 {
		return value
	}
	parent, key := at(t, doc, path[:len(path)-1]), path[len(path)-1]
	switch p := parent.(type) {
	case map[string]any:
		p[key.(string)] = value
	case []any:
		i := int(key.(float64))
		if i == len(p) {
			return put(t, doc, path[:len(path)-1], append(p, value))
		}
		p[i] = value
	default:
		t.Fatalf("cannot set %v", path)
	}
	return doc
}

// TestRangeMessages pins the messages of the range checks, which tell the
// author of a file the range a number must lie in.
func TestRangeMessages(t *testing.T) {
	tests := []struct {
		name string
		edit edit
		want string
	}{
		{"share", edit{Set: []any{"gossip", "stale_share"}, Value: 1.5}, "gossip.stale_share: must lie in [0, 1], got 1.5"},
		{"rate", edit{Set: []any{"attribution", "stripped_rate"}, Value: -0.25}, "attribution.stripped_rate: must lie in [0, 1], got -0.25"},
		{"duration", edit{Set: []any{"clock", "payment_interval_s"}, Value: -2}, "clock.payment_interval_s: must not be negative, got -2"},
		{"fee limit", edit{Set: []any{"defaults", "fee_limit_ppm"}, Value: -1}, "defaults.fee_limit_ppm: must not be negative, got -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeEdited(t, dir, "graph-small.json", "", nil)
			path := writeEdited(t, dir, "base-example.json", "", []edit{tc.edit})
			_, err := Load(path)
			if want := path + ": " + tc.want; err == nil || err.Error() != want {
				t.Fatalf("got %v, want %s", err, want)
			}
		})
	}
}
