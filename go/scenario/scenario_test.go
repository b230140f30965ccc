package scenario

import (
	"encoding/json"
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

// TestScenarioErrorsNameField breaks one rule at a time and wants an error
// that names the file and the field.
func TestScenarioErrorsNameField(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(sc map[string]any)
		field  string
	}{
		{"wrong format", func(sc map[string]any) { sc["format"] = "x/2" }, "format"},
		{"unknown field", func(sc map[string]any) { sc["colour"] = "red" }, `unknown field "colour"`},
		{"wrong type", func(sc map[string]any) { sc["seed"] = "eleven" }, "seed"},
		{"unknown arena", func(sc map[string]any) { sc["arena"] = "moon" }, "arena"},
		{"arena not switched on", func(sc map[string]any) { sc["arena"] = "drift" }, "arena"},
		{"rate above one", func(sc map[string]any) { sub(sc, "liquidity")["uniform_share"] = 1.5 }, "liquidity.uniform_share"},
		{"rates add above one", func(sc map[string]any) {
			sc["arena"] = "attribution"
			a := sub(sc, "attribution")
			a["stripped_rate"], a["shift_before_rate"], a["shift_after_rate"] = 0.5, 0.4, 0.3
		}, "attribution"},
		{"non-positive scale", func(sc map[string]any) { sub(sc, "liquidity")["bimodal_scale_sat"] = 0 }, "liquidity.bimodal_scale_sat"},
		{"negative interval", func(sc map[string]any) { sub(sc, "clock")["payment_interval_s"] = -1 }, "clock.payment_interval_s"},
		{"no parts", func(sc map[string]any) { sub(sc, "defaults")["max_parts"] = 0 }, "defaults.max_parts"},
		{"cltv limit", func(sc map[string]any) { sub(sc, "defaults")["cltv_limit_delta"] = 10 }, "defaults.cltv_limit_delta"},
		{"bad source", func(sc map[string]any) { sc["source"] = "zz" }, "source"},
		{"unknown target", func(sc map[string]any) { payment(sc)["target"] = "03" + strings.Repeat("ab", 32) }, "payments[0].target"},
		{"target is source", func(sc map[string]any) { payment(sc)["target"] = sc["source"] }, "payments[0].target"},
		{"zero amount", func(sc map[string]any) { payment(sc)["amount_msat"] = 0 }, "payments[0].amount_msat"},
		{"no payments", func(sc map[string]any) { sc["payments"] = []any{} }, "payments"},
		{"missing graph", func(sc map[string]any) { sc["graph"] = "nowhere.json" }, "nowhere.json"},
		{"local balance of a stranger channel", func(sc map[string]any) {
			sc["local_balances_msat"] = map[string]any{"1x1x1": 5}
		}, `local_balances_msat["1x1x1"]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeMutated(t, "base-example.json", tc.mutate, nil)
			_, err := Load(path)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("error %q does not name %s and %q", err, path, tc.field)
			}
		})
	}
}

// TestGraphErrorsNameField does the same for the graph file.
func TestGraphErrorsNameField(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(g map[string]any)
		field  string
	}{
		{"bad node id", func(g map[string]any) { node(g, 0)["id"] = "02zz" }, "nodes[0].id"},
		{"duplicate node", func(g map[string]any) { node(g, 1)["id"] = node(g, 0)["id"] }, "nodes[1].id"},
		{"bad scid", func(g map[string]any) { channel(g, 0)["scid"] = "7-1-0" }, "channels[0].scid"},
		{"duplicate scid", func(g map[string]any) { channel(g, 1)["scid"] = channel(g, 0)["scid"] }, "channels[1].scid"},
		{"unknown end", func(g map[string]any) { channel(g, 0)["node2"] = "03" + strings.Repeat("cd", 32) }, "channels[0].node2"},
		{"self channel", func(g map[string]any) { channel(g, 0)["node2"] = channel(g, 0)["node1"] }, "channels[0].node2"},
		{"negative capacity", func(g map[string]any) { channel(g, 0)["capacity_sat"] = -5 }, "channels[0].capacity_sat"},
		{"max above capacity", func(g map[string]any) {
			sub(channel(g, 0), "policy2")["htlc_max_msat"] = 1e15
		}, "channels[0].policy2.htlc_max_msat"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeMutated(t, "base-example.json", nil, tc.mutate)
			_, err := Load(path)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), "graph-small.json") || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("error %q does not name the graph file and %q", err, tc.field)
			}
		})
	}
}

// writeMutated copies an example scenario and its graph into a temp dir,
// changed by the mutators, and returns the scenario's path.
func writeMutated(t *testing.T, name string, scMut, graphMut func(map[string]any)) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []struct {
		name string
		mut  func(map[string]any)
	}{{name, scMut}, {"graph-small.json", graphMut}} {
		var doc map[string]any
		data, err := os.ReadFile(examples + f.name)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		if f.mut != nil {
			f.mut(doc)
		}
		out, _ := json.Marshal(doc)
		if err := os.WriteFile(filepath.Join(dir, f.name), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, name)
}

func sub(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }
func payment(sc map[string]any) map[string]any        { return sc["payments"].([]any)[0].(map[string]any) }
func node(g map[string]any, i int) map[string]any     { return g["nodes"].([]any)[i].(map[string]any) }
func channel(g map[string]any, i int) map[string]any {
	return g["channels"].([]any)[i].(map[string]any)
}
