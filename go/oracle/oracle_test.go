package oracle

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/routesim-evolve/routesim/scenario"
	"github.com/routesim-evolve/routesim/sim"
)

func node(i int) string { return fmt.Sprintf("02%064x", i+1) }

// diamond is a scenario where the sender (0) reaches the target (3) over
// 0-1-3 and 0-2-3; the sender holds all of its own channels, the hidden
// balances of 1-3 and 2-3 are drawn uniformly by the seed.
func diamond(capSat int64, payments ...uint64) *scenario.Scenario {
	pol := func() *scenario.Policy {
		return &scenario.Policy{FeeBaseMsat: 1000, FeeRatePPM: 100, CltvDelta: 40, HtlcMinMsat: 1000}
	}
	g := &scenario.Graph{Format: scenario.FormatGraph}
	for i := 0; i < 4; i++ {
		g.Nodes = append(g.Nodes, scenario.Node{ID: node(i)})
	}
	for i, e := range [][2]int{{0, 1}, {0, 2}, {1, 3}, {2, 3}} {
		g.Channels = append(g.Channels, scenario.Channel{
			SCID: fmt.Sprintf("%dx1x0", 700000+i), Node1: node(e[0]), Node2: node(e[1]),
			CapacitySat: capSat, Policy1: pol(), Policy2: pol(),
		})
	}
	full := uint64(capSat) * 1000
	sc := &scenario.Scenario{
		Format: scenario.FormatScenario, Name: "diamond", Arena: scenario.ArenaBase, Seed: 7,
		Source: node(0), BlockHeight: 800000, StartTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Liquidity: scenario.Liquidity{BimodalScaleSat: 300000, UniformShare: 1},
		Local:     map[string]uint64{"700000x1x0": full, "700001x1x0": full},
		Clock:     scenario.Clock{PaymentIntervalSec: 600, AttemptLatencySec: 2},
		Defaults: scenario.PaymentDefaults{MaxParts: 4, MaxAttempts: 20, FeeLimitPPM: 50000,
			FeeLimitBase: 100000, FinalCLTVDelta: 40, CltvLimitDelta: 2016},
		Graph: g,
	}
	for _, amt := range payments {
		sc.Payments = append(sc.Payments, scenario.Payment{Target: node(3), AmountMsat: amt})
	}
	return sc
}

// intoTarget is the true balance of 1→3 and of 2→3.
func intoTarget(t *testing.T, sc *scenario.Scenario) (lnwire.MilliSatoshi, lnwire.MilliSatoshi) {
	t.Helper()
	w, err := sim.NewWorld(sc)
	if err != nil {
		t.Fatal(err)
	}
	var via [2]lnwire.MilliSatoshi
	for _, e := range w.TrueEdges() {
		for k, from := range []string{node(1), node(2)} {
			if e.From.String() == from && e.To.String() == node(3) {
				via[k] = e.Balance
			}
		}
	}
	return via[0], via[1]
}

func play(t *testing.T, sc *scenario.Scenario) *sim.Result {
	t.Helper()
	w, err := sim.NewWorld(sc)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.Play(NewFactory(w), sim.Options{RouterName: "oracle", CheckConservation: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestOracle(t *testing.T) {
	b13, b23 := intoTarget(t, diamond(2_000_000))
	if b13 < 100_000_000 || b23 < 100_000_000 {
		t.Fatalf("seed 7 should leave both inbound channels above 100k sat, got %d and %d", b13, b23)
	}
	// More than either side holds, less than both: it must split.
	split := uint64(max(b13, b23) + min(b13, b23)/2)
	tests := []struct {
		name      string
		amount    uint64
		maxParts  uint32
		delivered bool
		minParts  int
	}{
		{"a small payment takes one route", 1_000_000, 4, true, 1},
		{"a payment over one side's balance is split", split, 4, true, 2},
		{"one part may not carry it", split, 1, false, 0},
		{"an amount no flow carries is refused at once", uint64(b13+b23) + 1, 4, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := diamond(2_000_000, tc.amount)
			sc.Defaults.MaxParts = tc.maxParts
			p := play(t, sc).Payments[0]
			if p.Success != tc.delivered {
				data, _ := json.MarshalIndent(p, "", " ")
				t.Fatalf("success %v, want %v:\n%s", p.Success, tc.delivered, data)
			}
			if tc.delivered && (p.Parts < tc.minParts || p.Attempts != p.Parts) {
				t.Fatalf("%d parts in %d attempts; want at least %d parts and no failed attempt",
					p.Parts, p.Attempts, tc.minParts)
			}
			if !tc.delivered && (p.Attempts != 0 || p.FailureReason != sim.ReasonRouterGaveUp) {
				t.Fatalf("an impossible payment made %d attempts and ended %q", p.Attempts, p.FailureReason)
			}
		})
	}
}

// TestOracleWeighsMinimumsAndBaseFees checks that a cheap corridor the
// payment cannot use (a hop's minimum HTLC over the amount) or that costs
// more than it looks (a high base fee on a small payment) is passed by for
// the other one.
func TestOracleWeighsMinimumsAndBaseFees(t *testing.T) {
	const amount = 1_000_000 // msat; via 2 it pays 1,000 + 100 msat
	tests := []struct {
		name   string
		change func(p *scenario.Policy) // of 1→3, made free of proportional fees
	}{
		{"a minimum HTLC over the amount", func(p *scenario.Policy) { p.HtlcMinMsat = 2_199_999_780 }},
		{"a minimum HTLC over one part's share", func(p *scenario.Policy) { p.HtlcMinMsat = amount + 1 }},
		{"a base fee larger than the other side's fee", func(p *scenario.Policy) { p.FeeBaseMsat = 50_000 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := diamond(2_000_000, amount)
			p13 := sc.Graph.Channels[2].Policy1
			p13.FeeRatePPM = 0
			tc.change(p13)
			p := play(t, sc).Payments[0]
			if !p.Success || p.Attempts != 1 || p.FeeMsat != 1_100 {
				t.Fatalf("success %v in %d attempts, fee %d msat; want one attempt via 2 for 1,100 msat",
					p.Success, p.Attempts, p.FeeMsat)
			}
		})
	}
}

// TestOracleLeavesRoomForFeesUnderAMaximumHTLC checks that a part sized to
// a hop's maximum HTLC leaves room for the fees the hops after it add: on
// the line 0-1-2-3 with a maximum of 600,000 sat on 1→2, a payment of
// 1,000,000 sat goes in parts whose HTLC over 1→2, fees included, fits.
func TestOracleLeavesRoomForFeesUnderAMaximumHTLC(t *testing.T) {
	const amount = 1_000_000_000 // msat
	sc := diamond(10_000_000, amount)
	g := sc.Graph
	g.Channels = g.Channels[:0]
	for i := 0; i < 3; i++ {
		pol := func() *scenario.Policy {
			return &scenario.Policy{FeeBaseMsat: 1000, FeeRatePPM: 100, CltvDelta: 40, HtlcMinMsat: 1000}
		}
		g.Channels = append(g.Channels, scenario.Channel{
			SCID: fmt.Sprintf("%dx1x0", 700000+i), Node1: node(i), Node2: node(i + 1),
			CapacitySat: 10_000_000, Policy1: pol(), Policy2: pol(),
		})
	}
	most := uint64(600_000_000)
	g.Channels[1].Policy1.HtlcMaxMsat = &most
	sc.Local = map[string]uint64{"700000x1x0": 10_000_000_000}
	w, err := sim.NewWorld(sc)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range w.TrueEdges() {
		if e.From.String() < e.To.String() && e.Balance < 2*amount {
			t.Fatalf("seed 7 should leave 2,000,000 sat on every forward direction, %d has %d msat",
				e.ChannelID, e.Balance)
		}
	}
	p := play(t, sc).Payments[0]
	if !p.Success || p.Attempts != p.Parts {
		t.Fatalf("success %v, %d parts in %d attempts (%s)", p.Success, p.Parts, p.Attempts, p.Error)
	}
}

// TestOracleOnTheExamples checks that the ceiling holds on every example
// arena: the oracle delivers at least what a plain router does.
func TestOracleOnTheExamples(t *testing.T) {
	for _, name := range []string{"base", "drift", "atomic", "attribution"} {
		sc, err := scenario.Load("../../docs/examples/" + name + "-example.json")
		if err != nil {
			t.Fatal(err)
		}
		res := play(t, sc)
		if res.Totals.Succeeded == 0 || res.Totals.Attempts > 2*res.Totals.Payments {
			t.Errorf("%s: %+v", name, res.Totals)
		}
	}
}
