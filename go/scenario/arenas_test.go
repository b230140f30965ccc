package scenario

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// arenasExample is docs/examples/arenas.json: Go's arena table, for the
// Python side's parity test (tests/test_arena_registry.py): one list of
// arenas and their switches, checked from both languages.
type arenasExample struct {
	Comment string         `json:"comment"`
	Arenas  []arenaExample `json:"arenas"`
}

type arenaExample struct {
	Name   Arena    `json:"name"`
	Switch []string `json:"switch"`
}

// TestArenasExample checks that docs/examples/arenas.json is Go's table
// today; ROUTESIM_UPDATE_EXAMPLE=1 writes it anew.
func TestArenasExample(t *testing.T) {
	doc := arenasExample{Comment: "Written by go/scenario/arenas_test.go (ROUTESIM_UPDATE_EXAMPLE=1 " +
		"go test ./scenario -run ArenasExample); read by tests/test_arena_registry.py."}
	for _, a := range arenaTable {
		doc.Arenas = append(doc.Arenas, arenaExample{a.name, append([]string{}, a.switches...)})
	}
	checkDocExample(t, "arenas.json", "ArenasExample", doc)
}

// TestArenaSwitches checks each row's switches against its on: any one of
// them set switches the arena on, none leaves it off (the base example
// has every switch off), so the list Python compares is the one Go reads.
func TestArenaSwitches(t *testing.T) {
	for _, a := range arenaTable {
		name := edit{Set: []any{"arena"}, Value: string(a.name)}
		for _, field := range a.switches {
			t.Run(string(a.name)+"/"+field, func(t *testing.T) {
				path := jsonPath(field)
				var value any = 0.5
				if _, isBool := exampleValue(t, path).(bool); isBool {
					value = true
				}
				if _, err := loadEdited(t, name, edit{Set: path, Value: value}); err != nil {
					t.Fatalf("%s set, arena %s is not on: %v", field, a.name, err)
				}
			})
		}
		t.Run(string(a.name)+"/off", func(t *testing.T) {
			_, err := loadEdited(t, name)
			var fe *FieldError
			switch {
			case len(a.switches) == 0 && err != nil:
				t.Fatalf("arena %s is always on, got %v", a.name, err)
			case len(a.switches) > 0 && (!errors.As(err, &fe) || fe.Rule != RuleArenaOff):
				t.Fatalf("no switch set, want %s, got %v", RuleArenaOff, err)
			}
		})
	}
}

// loadEdited loads the base example, edited, beside its graph.
func loadEdited(t *testing.T, edits ...edit) (*Scenario, error) {
	dir := t.TempDir()
	writeEdited(t, dir, "graph-small.json", "", nil)
	return Load(writeEdited(t, dir, "base-example.json", "", edits))
}

func jsonPath(field string) []any {
	var path []any
	for _, key := range strings.Split(field, ".") {
		path = append(path, key)
	}
	return path
}

// exampleValue is the base example's value at path.
func exampleValue(t *testing.T, path []any) any {
	var doc any
	data, err := os.ReadFile(examples + "base-example.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return at(t, doc, path)
}
