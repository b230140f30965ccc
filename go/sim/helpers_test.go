package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/scenario"
)

// testNode is the hex id of test node i; ids grow with i, so in a channel
// between i < j node i is lnd's node 1.
func testNode(i int) string {
	return fmt.Sprintf("02%064x", i+1)
}

func testVertex(i int) route.Vertex {
	v, _ := scenario.ParseNodeID(testNode(i))
	return v
}

func testSCID(i int) string {
	return fmt.Sprintf("%dx1x0", 700000+i)
}

func testPolicy(baseMsat, ratePPM uint32, cltv uint16) *scenario.Policy {
	return &scenario.Policy{FeeBaseMsat: baseMsat, FeeRatePPM: ratePPM,
		CltvDelta: cltv, HtlcMinMsat: 1000}
}

// lineScenario is a scenario on the line 0 - 1 - ... - n-1, channel i
// between nodes i and i+1, both directions with the same policy. Node 0
// sends; every payment goes to node n-1.
func lineScenario(n int, capSat int64, pol *scenario.Policy, payments ...uint64) *scenario.Scenario {
	g := &scenario.Graph{Format: scenario.FormatGraph}
	for i := 0; i < n; i++ {
		g.Nodes = append(g.Nodes, scenario.Node{ID: testNode(i)})
	}
	for i := 0; i+1 < n; i++ {
		p1, p2 := *pol, *pol
		g.Channels = append(g.Channels, scenario.Channel{
			SCID: testSCID(i), Node1: testNode(i), Node2: testNode(i + 1),
			CapacitySat: capSat, Policy1: &p1, Policy2: &p2,
		})
	}
	sc := baseScenario(g, testNode(0))
	for _, amt := range payments {
		sc.Payments = append(sc.Payments, scenario.Payment{Target: testNode(n - 1), AmountMsat: amt})
	}
	return sc
}

func baseScenario(g *scenario.Graph, source string) *scenario.Scenario {
	return &scenario.Scenario{
		Format:      scenario.FormatScenario,
		Name:        "test",
		Arena:       scenario.ArenaBase,
		Seed:        1,
		Source:      source,
		BlockHeight: 800000,
		StartTime:   time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Liquidity:   scenario.Liquidity{BimodalScaleSat: 300000, UniformShare: 0.2},
		Clock:       scenario.Clock{PaymentIntervalSec: 600, AttemptLatencySec: 2},
		Defaults: scenario.PaymentDefaults{MaxParts: 4, MaxAttempts: 20, FeeLimitPPM: 50000,
			FeeLimitBase: 100000, FinalCLTVDelta: 40, CltvLimitDelta: 2016},
		Graph: g,
	}
}

func mustWorld(t *testing.T, sc *scenario.Scenario) *World {
	t.Helper()
	w, err := NewWorld(sc)
	if err != nil {
		t.Fatalf("NewWorld: %v", err)
	}
	return w
}

// setAllBalances puts amt msat on the sending side (toward higher node
// numbers) of every channel of a line.
// balancedLine is the world of a line of n nodes paying amt once, its
// 1M-sat channels all charging 1000 msat + 100 ppm with a delta of 40 and
// each end holding half.
func balancedLine(t *testing.T, n int, amt lnwire.MilliSatoshi) *World {
	t.Helper()
	w := mustWorld(t, lineScenario(n, 1_000_000, testPolicy(1000, 100, 40), uint64(amt)))
	setAllBalances(w, 500_000_000)
	return w
}

// forEachHopRun plays every example scenario through the hop router and
// hands check each result with the scenario's file name.
func forEachHopRun(t *testing.T, check func(name string, res *Result)) {
	t.Helper()
	forEachHopRunWith(t, func(*scenario.Scenario) {}, check)
}

// forEachHopRunWith is forEachHopRun on the example scenarios as change
// leaves them.
func forEachHopRunWith(t *testing.T, change func(*scenario.Scenario), check func(name string, res *Result)) {
	t.Helper()
	for _, name := range exampleScenarios {
		sc := loadExample(t, name)
		change(sc)
		res, err := Run(sc, newHopRouter, Options{RouterName: "hop"})
		if err != nil {
			t.Fatal(err)
		}
		check(name, res)
	}
}

func setAllBalances(w *World, amt lnwire.MilliSatoshi) {
	for i := range w.net.channels {
		w.net.channels[i].setBalance(amt)
	}
}

// lineRoute builds a correct route along the line from node 0 to node
// hops, delivering amt, with fees and time locks from the gossip view (the
// announced policies), as a router would build it.
func lineRoute(t *testing.T, w *World, hops int, amt lnwire.MilliSatoshi) *route.Route {
	t.Helper()
	// amount[k] and lock[k] are carried by channel k; node k+1 forwards
	// over channel k+1 (direction 0) and keeps its fee and delta.
	amount := make([]lnwire.MilliSatoshi, hops)
	lock := make([]uint32, hops)
	amount[hops-1], lock[hops-1] = amt, w.BlockHeight()+40
	for k := hops - 2; k >= 0; k-- {
		pol := w.net.channels[k+1].announced[0]
		amount[k] = amount[k+1] + pol.ComputeFee(amount[k+1])
		lock[k] = lock[k+1] + uint32(pol.TimeLockDelta)
	}
	routeHops := make([]*route.Hop, hops)
	for i := range routeHops {
		routeHops[i] = &route.Hop{
			PubKeyBytes: testVertex(i + 1), ChannelID: w.net.channels[i].id,
			AmtToForward: amt, OutgoingTimeLock: lock[hops-1],
		}
		if i+1 < hops {
			routeHops[i].AmtToForward, routeHops[i].OutgoingTimeLock = amount[i+1], lock[i+1]
		}
	}
	rt, err := route.NewRouteFromHops(amount[0], lock[0], testVertex(0), routeHops)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// loadExample loads one of the docs/examples scenarios.
func loadExample(t *testing.T, name string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Load("../../docs/examples/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

var exampleScenarios = []string{
	"base-example.json", "drift-example.json", "atomic-example.json", "attribution-example.json",
}
