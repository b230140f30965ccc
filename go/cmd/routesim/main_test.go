package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim-evolve/routesim/cmd/internal/routesimcmd"
	"github.com/routesim-evolve/routesim/sim"
)

// run is the command as this binary runs it, with the seed router.
func run(args []string, stdout, stderr io.Writer) int {
	return routesimcmd.Run(args, stdout, stderr, newCandidateRouter)
}

const examples = "../../../docs/examples/"

var exampleScenarios = []string{
	"base-example.json", "drift-example.json", "atomic-example.json", "attribution-example.json",
}

// TestResultExampleIsTheSimulatorsOutput checks that the result example the
// docs show and the Python tests read (docs/examples/result-example.json)
// is what the simulator writes today: the seed router on the attribution
// example with timing off. ROUTESIM_UPDATE_EXAMPLE=1 writes it anew.
func TestResultExampleIsTheSimulatorsOutput(t *testing.T) {
	var out, stderr bytes.Buffer
	if code := run([]string{"--no-timing", examples + "attribution-example.json"}, &out, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	path := examples + "result-example.json"
	if os.Getenv("ROUTESIM_UPDATE_EXAMPLE") == "1" {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("%s is not the simulator's output: run "+
			"ROUTESIM_UPDATE_EXAMPLE=1 go test ./cmd/routesim -run ResultExample", path)
	}
}

// TestDeterministicResults runs the seed router twice on every example with
// timing off and wants byte-identical output.
func TestDeterministicResults(t *testing.T) {
	for _, name := range exampleScenarios {
		var outs [2]bytes.Buffer
		for i := range outs {
			var stderr bytes.Buffer
			if code := run([]string{"--no-timing", "--check", examples + name}, &outs[i], &stderr); code != 0 {
				t.Fatalf("%s: exit %d: %s", name, code, stderr.String())
			}
		}
		if !bytes.Equal(outs[0].Bytes(), outs[1].Bytes()) {
			t.Fatalf("%s: two runs differ", name)
		}
		var res struct {
			Router string
			Totals struct{ Payments, Succeeded int }
		}
		if err := json.Unmarshal(outs[0].Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if res.Router != "candidate" || res.Totals.Payments == 0 || res.Totals.Succeeded == 0 {
			t.Fatalf("%s: implausible result %+v", name, res)
		}
	}
}

// TestExitCodes checks usage and scenario errors exit 2 with a message that
// names the file and field.
func TestExitCodes(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	data, _ := os.ReadFile(examples + "base-example.json")
	data = bytes.Replace(data, []byte(`"arena": "base"`), []byte(`"arena": "space"`), 1)
	graph, _ := os.ReadFile(examples + "graph-small.json")
	_ = os.WriteFile(bad, data, 0o644)
	_ = os.WriteFile(filepath.Join(filepath.Dir(bad), "graph-small.json"), graph, 0o644)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{}, 2, "usage"},
		{[]string{"--router", "nope", examples + "base-example.json"}, 2, "unknown router"},
		{[]string{bad}, 2, bad + ": arena"},
		{[]string{"--out", filepath.Join(t.TempDir(), "r.json"), examples + "base-example.json"}, 0, ""},
		{[]string{"--cpuprofile", filepath.Join(t.TempDir(), "no", "such", "dir"), examples + "base-example.json"}, 2, "--cpuprofile"},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Fatalf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}

// TestCPUProfileIsWritten wants --cpuprofile to leave a profile (gzipped,
// as pprof writes it) beside an unchanged result.
func TestCPUProfileIsWritten(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	var plain, profiled, stderr bytes.Buffer
	scenario := examples + "base-example.json"
	if code := run([]string{"--no-timing", scenario}, &plain, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if code := run([]string{"--no-timing", "--cpuprofile", prof, scenario}, &profiled, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		t.Errorf("%s is not a gzipped pprof profile: % x", prof, data[:min(len(data), 8)])
	}
	if !bytes.Equal(plain.Bytes(), profiled.Bytes()) {
		t.Error("--cpuprofile changed the result")
	}
}

// TestWhereARouterDeliversMoreThanTheOracle pins the bundled scenarios
// where some router delivers more payments than the oracle
// (docs/oracle.md, "Where a router delivers more") for the first cause
// there: the oracle delivers every payment the feasible bound allows in
// its own world, but an early
// payment it delivers, and the other router does not, spends liquidity that
// later payments needed, so fewer of them are feasible there.
func TestWhereARouterDeliversMoreThanTheOracle(t *testing.T) {
	tests := []struct{ scenario, router string }{
		{"test/base-004.json", "lnd-apriori"},
	}
	for _, tt := range tests {
		t.Run(tt.scenario+" "+tt.router, func(t *testing.T) {
			ora, other := playRouter(t, tt.scenario, "oracle"), playRouter(t, tt.scenario, tt.router)
			if ora.Totals.Succeeded != ora.Totals.Feasible {
				t.Fatalf("the oracle delivers %d of its %d feasible payments",
					ora.Totals.Succeeded, ora.Totals.Feasible)
			}
			if other.Totals.Succeeded <= ora.Totals.Succeeded {
				t.Fatalf("%s delivers %d, the oracle %d: the scenario no longer shows the case",
					tt.router, other.Totals.Succeeded, ora.Totals.Succeeded)
			}
			first := -1 // the first payment the oracle delivers and the other does not
			for i, p := range ora.Payments {
				if p.Success && !other.Payments[i].Success && first < 0 {
					first = i
				}
				if first >= 0 && i > first && !p.Feasible && other.Payments[i].Success {
					return // a later payment the oracle's world rules out and the other delivers
				}
			}
			t.Fatalf("no payment after the oracle's first lone delivery (%d) is ruled out in its "+
				"world and delivered by %s", first, tt.router)
		})
	}
}

// TestNoRouterPaysBelowTheCheapestPlan plays every router of this binary
// on two scenarios of each arena of the bundled test split: no delivered payment pays less than its
// cheapest plan, less the rounding allowance (docs/scoring.md).
func TestNoRouterPaysBelowTheCheapestPlan(t *testing.T) {
	names, err := filepath.Glob("../../../corpus/test/*-00[12].json")
	if err != nil || len(names) == 0 {
		t.Fatalf("no bundled test scenarios: %v", err)
	}
	for _, router := range []string{"oracle", "lnd-apriori", "lnd-bimodal", "candidate"} {
		for _, path := range names {
			name := "test/" + filepath.Base(path)
			res := playRouter(t, name, router)
			for _, p := range res.Payments {
				if p.Success && p.FeeMsat+p.RoundingAllowance() < p.CheapestFeeMsat {
					t.Errorf("%s on %s: payment %d paid %d msat, below the cheapest plan's %d",
						router, name, p.Index, p.FeeMsat, p.CheapestFeeMsat)
				}
			}
		}
	}
}

// playRouter runs one router of this binary on a scenario of the bundled
// corpus.
func playRouter(t *testing.T, name, router string) *sim.Result {
	t.Helper()
	var out, stderr bytes.Buffer
	if code := run([]string{"--no-timing", "--router", router, "../../../corpus/" + name}, &out, &stderr); code != 0 {
		t.Fatalf("%s on %s: exit %d: %s", router, name, code, stderr.String())
	}
	var res sim.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	return &res
}
