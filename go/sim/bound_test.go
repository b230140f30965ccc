package sim

import (
	"testing"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/routesim-evolve/routesim/routing"
	"github.com/routesim-evolve/routesim/scenario"
)

// TestBoundOnALine checks the bound on a line of channels where it is
// exact: the smallest balance along the line, or nothing when some rule of
// the payment shuts a hop.
func TestBoundOnALine(t *testing.T) {
	const (
		balance = lnwire.MilliSatoshi(300_000_000)
		amount  = lnwire.MilliSatoshi(200_000_000)
	)
	middle := func(w *World) *routing.CachedEdgePolicy { return w.net.channels[1].actual[0] }
	tests := []struct {
		name   string
		hops   int
		amount lnwire.MilliSatoshi
		atomic bool
		change func(w *World)
		want   lnwire.MilliSatoshi // reached
	}{
		{name: "fits", hops: 3, amount: amount, want: amount},
		{name: "too large", hops: 3, amount: 2 * balance, want: balance},
		{name: "one thin channel", hops: 3, amount: amount,
			change: func(w *World) { w.net.channels[2].setBalance(50_000_000) }, want: 50_000_000},
		{name: "minimum HTLC over amount and fee limit", hops: 3, amount: amount,
			change: func(w *World) { middle(w).MinHTLC = 2 * amount }, want: 0},
		{name: "minimum HTLC within fee limit", hops: 3, amount: amount,
			change: func(w *World) { middle(w).MinHTLC = amount + 1 }, want: amount},
		{name: "maximum HTLC times the attempts", hops: 3, amount: amount,
			change: func(w *World) { middle(w).MaxHTLC = amount / 100 }, want: amount / 100 * 20},
		{name: "base fee over the fee limit", hops: 3, amount: amount,
			change: func(w *World) { middle(w).FeeBaseMSat = 100_000_000 }, want: 0},
		{name: "cltv delta over the limit", hops: 3, amount: amount,
			change: func(w *World) { middle(w).TimeLockDelta = 3000 }, want: 0},
		{name: "disabled", hops: 3, amount: amount,
			change: func(w *World) { middle(w).IsDisabled = true }, want: 0},
		{name: "no actual policy", hops: 3, amount: amount,
			change: func(w *World) { w.net.channels[1].actual[0] = nil }, want: 0},
		{name: "the sender's own policy binds nothing", hops: 3, amount: amount,
			change: func(w *World) { w.net.channels[0].actual[0].MinHTLC = 4 * amount }, want: amount},
		{name: "a reserve", hops: 3, amount: amount,
			change: func(w *World) { w.net.channels[1].keep[0] = 250_000_000 }, want: 50_000_000},
		{name: "a broke funder caps each HTLC of the other side, not their sum", hops: 3,
			amount: amount, change: func(w *World) {
				c := &w.net.channels[1]
				c.keep[1], c.feeRate[1], c.dust = c.local[1], 1000, 354_000
			},
			want: amount},
		{name: "no free HTLC slot", hops: 3, amount: amount,
			change: func(w *World) { w.net.channels[1].slotLimit[0], w.net.channels[1].slotsUsed[0] = 30, 30 },
			want:   0},
		{name: "free slots bind parts held together", hops: 3, amount: amount, atomic: true,
			change: func(w *World) {
				middle(w).MaxHTLC = amount / 100
				w.net.channels[1].slotLimit[0], w.net.channels[1].slotsUsed[0] = 30, 28
			},
			want: amount / 100 * 2},
		{name: "free slots free again between parts settled apart", hops: 3, amount: amount,
			change: func(w *World) {
				middle(w).MaxHTLC = amount / 100
				w.net.channels[1].slotLimit[0], w.net.channels[1].slotsUsed[0] = 30, 28
			},
			want: amount / 100 * 20},
		{name: "a node offline for the whole payment", hops: 3, amount: amount,
			change: func(w *World) { setOffline(w, 2) }, want: 0},
		{name: "a node offline now, back within the payment", hops: 3, amount: amount,
			change: func(w *World) {
				setOffline(w, 2)
				// 20 attempts of 2-s rounds: it can still send 40 s on.
				w.peers[2].flips[0] = w.now.Add(30 * time.Second)
			},
			want: amount},
		{name: "twenty hops", hops: MaxRouteHops, amount: amount, want: amount},
		{name: "twenty-one hops", hops: MaxRouteHops + 1, amount: amount, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := lineScenario(tt.hops+1, 1_000_000, testPolicy(1000, 100, 40), uint64(tt.amount))
			sc.Defaults.CltvLimitDelta = 2016 + 20*40 // the line's deltas alone never bind
			sc.AtomicMPP = tt.atomic
			w := mustWorld(t, sc)
			setAllBalances(w, balance)
			if tt.change != nil {
				tt.change(w)
			}
			b := w.newBound(w.newSpec(0, sc.Payments[0]))
			if b.reached != tt.want || b.feasible != (tt.want == tt.amount) {
				t.Fatalf("reached %d, feasible %v; want %d", b.reached, b.feasible, tt.want)
			}
		})
	}
}

// diamondScenario has the sender 0 reach node 3 over 0-1-3 and 0-2-3,
// with payments of the given amounts to node 3.
func diamondScenario(amounts ...uint64) *scenario.Scenario {
	g := &scenario.Graph{Format: scenario.FormatGraph}
	for i := 0; i < 4; i++ {
		g.Nodes = append(g.Nodes, scenario.Node{ID: testNode(i)})
	}
	for i, ends := range [][2]int{{0, 1}, {0, 2}, {1, 3}, {2, 3}} {
		p1, p2 := testPolicy(0, 10, 40), testPolicy(0, 10, 40)
		g.Channels = append(g.Channels, scenario.Channel{SCID: testSCID(i),
			Node1: testNode(ends[0]), Node2: testNode(ends[1]), CapacitySat: 1_000_000,
			Policy1: p1, Policy2: p2})
	}
	sc := baseScenario(g, testNode(0))
	for _, amt := range amounts {
		sc.Payments = append(sc.Payments, scenario.Payment{Target: testNode(3), AmountMsat: amt})
	}
	return sc
}

// TestBoundAddsParallelPaths checks that the bound is a flow, not a path:
// two corridors of a diamond add up.
func TestBoundAddsParallelPaths(t *testing.T) {
	sc := diamondScenario(500_000_000, 600_000_001)
	w := mustWorld(t, sc)
	setAllBalances(w, 300_000_000) // toward the higher node: 0 → 1, 2 → 3
	for i, want := range []bool{true, false} {
		if b := w.newBound(w.newSpec(i, sc.Payments[i])); b.feasible != want || b.reached > 600_000_000 {
			t.Errorf("payment %d: feasible %v, reached %d", i, b.feasible, b.reached)
		}
	}
}

// TestMaxFlowTo checks the generator's flow: both corridors, less one whose
// policy is disabled; nothing to a node the world does not know.
func TestMaxFlowTo(t *testing.T) {
	w := mustWorld(t, diamondScenario(1000))
	setAllBalances(w, 300_000_000)
	if got := w.MaxFlowTo(testVertex(3)); got != 600_000_000 {
		t.Errorf("both corridors: %d msat", got)
	}
	w.net.channels[w.net.chanIndex[mustSCID(t, testSCID(2))]].actual[0].IsDisabled = true
	if got := w.MaxFlowTo(testVertex(3)); got != 300_000_000 {
		t.Errorf("one corridor disabled: %d msat", got)
	}
	if got := w.MaxFlowTo(testVertex(9)); got != 0 {
		t.Errorf("an unknown node: %d msat", got)
	}
}

func mustSCID(t *testing.T, s string) uint64 {
	t.Helper()
	id, err := scenario.ParseSCID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestBoundAtLaterRounds checks that only a world with background traffic
// is checked again at a later round, with what arrived added.
func TestBoundAtLaterRounds(t *testing.T) {
	for _, dynamic := range []bool{false, true} {
		sc := lineScenario(3, 1_000_000, testPolicy(0, 10, 40), 400_000_000)
		if dynamic {
			sc.Traffic = scenario.Traffic{EventsPerHour: 1, MedianShiftSat: 1}
		}
		w := mustWorld(t, sc)
		setAllBalances(w, 300_000_000)
		b := w.newBound(w.newSpec(0, sc.Payments[0]))
		if b.feasible || b.reached != 300_000_000 {
			t.Fatalf("dynamic %v: at the start feasible %v, reached %d", dynamic, b.feasible, b.reached)
		}
		setAllBalances(w, 250_000_000) // traffic refilled... less, but 200M sat arrived
		b.atRound(200_000_000)
		if b.feasible != dynamic {
			t.Errorf("dynamic %v: feasible %v after a later round", dynamic, b.feasible)
		}
	}
}

// TestNoRouterBeatsTheBound plays every example scenario through the test
// routers and checks that no payment outside the bound succeeds and that the
// totals count the feasible payments.
func TestNoRouterBeatsTheBound(t *testing.T) {
	forEachHopRun(t, checkBoundHolds(t))
	forEachHopRunWith(t, func(sc *scenario.Scenario) { sc.Rules = testRules() }, checkBoundHolds(t))
}

// checkBoundHolds is TestNoRouterBeatsTheBound's check of one result.
func checkBoundHolds(t *testing.T) func(name string, res *Result) {
	return func(name string, res *Result) {
		feasible := 0
		for _, p := range res.Payments {
			if p.Success && !p.Feasible {
				t.Errorf("%s: payment %d succeeded outside the bound (%d of %d msat)",
					name, p.Index, p.BoundMsat, p.AmountMsat)
			}
			if p.Feasible != (p.BoundMsat == p.AmountMsat) {
				t.Errorf("%s: payment %d feasible %v with %d of %d msat", name, p.Index,
					p.Feasible, p.BoundMsat, p.AmountMsat)
			}
			if p.Feasible {
				feasible++
			}
		}
		if feasible != res.Totals.Feasible || feasible == 0 {
			t.Errorf("%s: %d feasible payments, totals say %d", name, feasible, res.Totals.Feasible)
		}
	}
}
