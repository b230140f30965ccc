package lndref

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/routesim-evolve/routesim/scenario"
	"github.com/routesim-evolve/routesim/sim"
	"github.com/routesim-evolve/routesim/sim/simtest"
)

// runRef plays sc through a fresh reference of the given kind.
func runRef(t *testing.T, sc *scenario.Scenario, kind EstimatorKind) *sim.Result {
	t.Helper()
	self, err := scenario.ParseNodeID(sc.Source)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := New(Config{Estimator: kind, Self: self})
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(sc, ref.NewRouter, sim.Options{
		RouterName: "lnd-" + string(kind), CheckConservation: true,
	})
	if cerr := ref.Close(); cerr != nil {
		t.Error(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkSane checks a result's bookkeeping against its scenario.
func checkSane(t *testing.T, sc *scenario.Scenario, res *sim.Result) {
	t.Helper()
	if len(res.Payments) != len(sc.Payments) || res.Totals.Payments != len(sc.Payments) {
		t.Fatalf("%d payment results for %d payments", len(res.Payments), len(sc.Payments))
	}
	succeeded := 0
	for i, p := range res.Payments {
		pay := sc.Payments[i]
		switch p.FailureReason {
		case sim.ReasonNone, sim.ReasonRouterGaveUp, sim.ReasonAttemptsExhausted:
		default:
			t.Errorf("payment %d: failure reason %q (%s)", i, p.FailureReason, p.Error)
		}
		// lnd may find no route at all (e.g. bimodal, after unreadable
		// failures blamed the sender's own channels): then it gives up
		// before the first attempt.
		if p.Attempts > pay.Attempts(sc.Defaults) ||
			(p.Attempts == 0 && p.FailureReason != sim.ReasonRouterGaveUp) {
			t.Errorf("payment %d: %d attempts (limit %d), %q",
				i, p.Attempts, pay.Attempts(sc.Defaults), p.FailureReason)
		}
		if len(p.AttemptLog) != p.Attempts {
			t.Errorf("payment %d: %d attempts, %d logged", i, p.Attempts, len(p.AttemptLog))
		}
		if p.FeeMsat > p.FeeLimitMsat {
			t.Errorf("payment %d: fee %d over the limit %d", i, p.FeeMsat, p.FeeLimitMsat)
		}
		if p.DeliveredMsat > p.AmountMsat {
			t.Errorf("payment %d: delivered %d of %d", i, p.DeliveredMsat, p.AmountMsat)
		}
		if p.Success && !p.Feasible {
			t.Errorf("payment %d: succeeded outside the feasible bound (%d of %d msat)",
				i, p.BoundMsat, p.AmountMsat)
		}
		if p.Success && p.FeeMsat+p.RoundingAllowance() < p.CheapestFeeMsat {
			t.Errorf("payment %d: paid %d msat, below the cheapest plan's %d",
				i, p.FeeMsat, p.CheapestFeeMsat)
		}
		if p.Success {
			succeeded++
			if p.DeliveredMsat != p.AmountMsat || p.Parts < 1 || p.FailureReason != "" {
				t.Errorf("payment %d: success with %+v", i, p)
			}
		}
		var parts int
		for _, a := range p.AttemptLog {
			if a.Outcome == "settled" || a.Outcome == "held" {
				parts++
			}
		}
		if p.Success && parts != p.Parts {
			t.Errorf("payment %d: %d parts, %d settled or held attempts", i, p.Parts, parts)
		}
	}
	if succeeded != res.Totals.Succeeded || succeeded == 0 {
		t.Errorf("%d payments succeeded (totals say %d)", succeeded, res.Totals.Succeeded)
	}
}

// TestExamples plays the bundled example scenarios through both reference
// routers: they complete with sane totals, and a second run gives the same
// result byte for byte.
func TestExamples(t *testing.T) {
	for _, arena := range []string{"base", "drift", "atomic", "attribution"} {
		path := filepath.Join("..", "..", "docs", "examples", arena+"-example.json")
		sc, err := scenario.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range []EstimatorKind{Apriori, Bimodal} {
			t.Run(arena+"/"+string(kind), func(t *testing.T) {
				t.Parallel()
				first := runRef(t, sc, kind)
				checkSane(t, sc, first)
				tot := first.Totals
				t.Logf("%d/%d succeeded, %d attempts, fee %.1f ppm",
					tot.Succeeded, tot.Payments, tot.Attempts, tot.FeePPM)
				second := runRef(t, sc, kind)
				if a, b := simtest.ResultJSON(t, first), simtest.ResultJSON(t, second); !bytes.Equal(a, b) {
					t.Errorf("two runs differ:\n%s\n%s", a, b)
				}
			})
		}
	}
}

func nodeID(i int) string { return fmt.Sprintf("02%064x", i+1) }

// writeScenario writes a graph and a scenario making payments payments of
// amountSat from the first node to the last, and loads it.
func writeScenario(t *testing.T, channels []map[string]any, local map[string]uint64,
	nodes int, amountSat uint64, payments int, atomic bool) *scenario.Scenario {

	t.Helper()
	dir := t.TempDir()
	var ns []map[string]any
	for i := 0; i < nodes; i++ {
		ns = append(ns, map[string]any{"id": nodeID(i), "alias": fmt.Sprintf("n%d", i)})
	}
	graph := map[string]any{"format": scenario.FormatGraph, "nodes": ns, "channels": channels}
	var pays []map[string]any
	for range payments {
		pays = append(pays, map[string]any{"target": nodeID(nodes - 1), "amount_msat": amountSat * 1000})
	}
	arena := scenario.ArenaBase
	if atomic {
		arena = scenario.ArenaAtomicMPP
	}
	sc := map[string]any{
		"format": scenario.FormatScenario, "name": "mpp-split", "arena": arena,
		"seed": 5, "graph": "graph.json", "source": nodeID(0),
		"block_height": 800000, "start_time": "2026-01-01T00:00:00Z",
		"liquidity":           map[string]any{"bimodal_scale_sat": 300000, "uniform_share": 1},
		"local_balances_msat": local,
		"gossip": map[string]any{"stale_share": 0, "stale_fee_rate_factor": 1,
			"stale_base_fee_add_msat": 0, "stale_cltv_add": 0},
		"clock":       map[string]any{"payment_interval_s": 600, "attempt_latency_s": 2},
		"traffic":     map[string]any{"events_per_hour": 0, "median_shift_sat": 0},
		"atomic_mpp":  atomic,
		"attribution": map[string]any{"stripped_rate": 0, "shift_before_rate": 0, "shift_after_rate": 0},
		"defaults": map[string]any{"max_parts": 16, "max_attempts": 40, "fee_limit_ppm": 10000,
			"fee_limit_base_msat": 10000, "final_cltv_delta": 40, "cltv_limit_delta": 2016},
		"payments": pays,
	}
	for name, v := range map[string]any{"graph.json": graph, "scenario.json": sc} {
		b, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	loaded, err := scenario.Load(filepath.Join(dir, "scenario.json"))
	if err != nil {
		t.Fatal(err)
	}
	return loaded
}

func channel(scid string, a, b int, capSat int64) map[string]any {
	pol := map[string]any{"fee_base_msat": 1000, "fee_rate_ppm": 100, "cltv_delta": 40,
		"htlc_min_msat": 1000}
	return map[string]any{"scid": scid, "node1": nodeID(a), "node2": nodeID(b),
		"capacity_sat": capSat, "policy1": pol, "policy2": pol}
}

// TestSplit: when no single path carries the payment, lnd's payment
// session halves it and delivers it in several parts.
func TestSplit(t *testing.T) {
	const amountSat = 1_000_000
	for _, tc := range []struct {
		name     string
		nodes    int
		channels []map[string]any
		local    map[string]uint64
		atomic   bool
	}{
		{
			// Node 0 pays node 3 over 0-1-3 and 0-2-3; each of its
			// own channels holds 600k sat, the remote ones are large.
			name: "two paths", nodes: 4,
			channels: []map[string]any{
				channel("700000x1x0", 0, 1, 1_000_000), channel("700000x2x0", 0, 2, 1_000_000),
				channel("700000x3x0", 1, 3, 100_000_000), channel("700000x4x0", 2, 3, 100_000_000),
			},
			local: map[string]uint64{"700000x1x0": 600_000_000, "700000x2x0": 600_000_000},
		},
		{
			name: "two paths atomic", nodes: 4, atomic: true,
			channels: []map[string]any{
				channel("700000x1x0", 0, 1, 1_000_000), channel("700000x2x0", 0, 2, 1_000_000),
				channel("700000x3x0", 1, 3, 100_000_000), channel("700000x4x0", 2, 3, 100_000_000),
			},
			local: map[string]uint64{"700000x1x0": 600_000_000, "700000x2x0": 600_000_000},
		},
		{
			// Two parallel channels straight to the receiver.
			name: "parallel channels", nodes: 2,
			channels: []map[string]any{
				channel("700000x1x0", 0, 1, 1_000_000), channel("700000x2x0", 0, 1, 1_000_000),
			},
			local: map[string]uint64{"700000x1x0": 600_000_000, "700000x2x0": 600_000_000},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := writeScenario(t, tc.channels, tc.local, tc.nodes, amountSat, 1, tc.atomic)
			for _, kind := range []EstimatorKind{Apriori, Bimodal} {
				res := runRef(t, sc, kind)
				checkSane(t, sc, res)
				p := res.Payments[0]
				t.Logf("%s: success %v, %d parts, %d attempts, log %+v",
					kind, p.Success, p.Parts, p.Attempts, p.AttemptLog)
				if !p.Success || p.Parts < 2 {
					t.Errorf("%s: success %v with %d parts, want a split delivery",
						kind, p.Success, p.Parts)
				}
				for _, a := range p.AttemptLog {
					if a.AmountMsat >= amountSat*1000 {
						t.Errorf("%s: an attempt carries the whole %d msat", kind, a.AmountMsat)
					}
				}
			}
		})
	}
}

// TestTiesAreReproducible: on a graph of four identical paths, lnd's
// pathfinding alone would pick among equal paths by Go's map order, and
// two runs would differ; with TieBreak every run is the same.
func TestTiesAreReproducible(t *testing.T) {
	var channels []map[string]any
	local := map[string]uint64{}
	for k := 1; k <= 4; k++ {
		out := fmt.Sprintf("7000%02dx1x0", k)
		channels = append(channels, channel(out, 0, k, 2_000_000),
			channel(fmt.Sprintf("7000%02dx2x0", k), k, 5, 2_000_000))
		local[out] = 1_500_000_000
	}
	sc := writeScenario(t, channels, local, 6, 300_000, 6, false)
	sc.Liquidity.UniformShare = 0
	for _, kind := range []EstimatorKind{Apriori, Bimodal} {
		first := simtest.ResultJSON(t, runRef(t, sc, kind))
		for run := 1; run < 8; run++ {
			if again := simtest.ResultJSON(t, runRef(t, sc, kind)); !bytes.Equal(first, again) {
				t.Fatalf("%s: run %d differs from run 0:\n%s\n%s", kind, run, first, again)
			}
		}
	}
}
