package sim

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
	"github.com/routesim-evolve/routesim/scenario"
)

// TestRunExamplesConserveFunds plays every example arena with conservation
// checked after each payment, twice, and wants identical results.
func TestRunExamplesConserveFunds(t *testing.T) {
	for _, name := range exampleScenarios {
		t.Run(name, func(t *testing.T) {
			sc := loadExample(t, name)
			var first []byte
			for run := 0; run < 2; run++ {
				res, err := Run(sc, newHopRouter, Options{RouterName: "hop", CheckConservation: true})
				if err != nil {
					t.Fatal(err)
				}
				if res.Totals.Payments != len(sc.Payments) || res.Totals.Attempts == 0 {
					t.Fatalf("implausible totals %+v", res.Totals)
				}
				data, _ := json.Marshal(res)
				if run == 0 {
					first = data
				} else if string(data) != string(first) {
					t.Fatal("two runs of one scenario differ")
				}
			}
		})
	}
}

// TestAtomicHoldAndRelease checks that arrived shards of an atomic payment
// hold liquidity until the payment ends, settle together on success, and
// are released (no fee, nothing moved) on failure; a router that observes
// payment ends is told which.
func TestAtomicHoldAndRelease(t *testing.T) {
	const part = lnwire.MilliSatoshi(40_000_000)
	for _, complete := range []bool{true, false} {
		sc := lineScenario(3, 1_000_000, testPolicy(1000, 100, 40), uint64(2*part))
		sc.AtomicMPP, sc.Arena = true, scenario.ArenaAtomicMPP
		w := mustWorld(t, sc)
		setAllBalances(w, 500_000_000)
		before := balances(w)
		routes := []*route.Route{lineRoute(t, w, 2, part)}
		if complete {
			routes = append(routes, lineRoute(t, w, 2, part))
		}
		r := &scriptedRouter{routes: routes}
		factory := func(routing.SimNetworkView, route.Vertex, map[uint64]lnwire.MilliSatoshi,
			*routing.SimPaymentSpec) (routing.SimRouter, error) {
			return r, nil
		}
		res := w.runPayment(0, w.sc.Payments[0], factory, w.view(), &stopwatch{})
		if err := w.checkSettled(); err != nil {
			t.Fatal(err)
		}
		if res.Success != complete {
			t.Fatalf("complete=%v: success %v (%s)", complete, res.Success, res.FailureReason)
		}
		// The router hears once how its payment ended, as the result says.
		want := routing.SimPaymentOutcome{Success: complete, Released: !complete,
			Delivered: lnwire.MilliSatoshi(res.DeliveredMsat), Fees: lnwire.MilliSatoshi(res.FeeMsat)}
		if len(r.ended) != 1 || r.ended[0] != want {
			t.Fatalf("complete=%v: router told %+v, want [%+v]", complete, r.ended, want)
		}
		after := balances(w)
		if !complete {
			if after != before || res.FeeMsat != 0 || res.DeliveredMsat != 0 {
				t.Fatalf("failed atomic payment moved funds or paid fees: %+v", res)
			}
			if res.AttemptLog[0].Outcome != "held" {
				t.Fatalf("first shard outcome %q, want held", res.AttemptLog[0].Outcome)
			}
			continue
		}
		if got := after[1][1] - before[1][1]; got != 2*part {
			t.Fatalf("receiver gained %d, want %d", got, 2*part)
		}
		if res.FeeMsat == 0 {
			t.Fatal("successful payment paid no fee")
		}
	}
}

// TestHeldShardsCountTowardTheCap checks that shards held at the receiver
// (atomic MPP) count toward MaxParts in later rounds, as lnd's payment
// session counts every active shard: the old simulator capped each round's
// shards alone, so a payment could end with more parts than the cap.
func TestHeldShardsCountTowardTheCap(t *testing.T) {
	const part = lnwire.MilliSatoshi(30_000_000)
	sc := lineScenario(3, 1_000_000, testPolicy(1000, 100, 40), uint64(3*part))
	sc.AtomicMPP, sc.Arena = true, scenario.ArenaAtomicMPP
	sc.Defaults.MaxParts = 2
	w := mustWorld(t, sc)
	setAllBalances(w, 500_000_000)
	r := &scriptedRouter{routes: []*route.Route{
		lineRoute(t, w, 2, part), lineRoute(t, w, 2, part), lineRoute(t, w, 2, part),
	}}
	factory := func(routing.SimNetworkView, route.Vertex, map[uint64]lnwire.MilliSatoshi,
		*routing.SimPaymentSpec) (routing.SimRouter, error) {
		return r, nil
	}
	res := w.runPayment(0, w.sc.Payments[0], factory, w.view(), &stopwatch{})
	if res.Success || res.Attempts != 2 || res.FailureReason != ReasonPartsExhausted {
		t.Fatalf("success %v after %d attempts (%q): the cap of 2 let a third through",
			res.Success, res.Attempts, res.FailureReason)
	}
	if err := w.checkSettled(); err != nil {
		t.Fatal(err)
	}
}

// TestSiblingShardsContend checks that a shard meets the liquidity its
// sibling in flight holds.
func TestSiblingShardsContend(t *testing.T) {
	const part = lnwire.MilliSatoshi(40_000_000)
	sc := lineScenario(3, 1_000_000, testPolicy(1000, 100, 40), uint64(2*part))
	sc.AtomicMPP, sc.Arena = true, scenario.ArenaAtomicMPP
	w := mustWorld(t, sc)
	setAllBalances(w, 500_000_000)
	w.net.channels[1].setBalance(part + part/2) // room for one shard only
	first, second := w.forward(lineRoute(t, w, 2, part), 40), w.forward(lineRoute(t, w, 2, part), 40)
	if first.failIdx != -1 {
		t.Fatalf("first shard failed: %v", first.failure)
	}
	if second.failIdx != 1 || failureName(second.failure) != "temporary_channel_failure" {
		t.Fatalf("second shard: position %d %v, want a liquidity failure at 1",
			second.failIdx, second.failure)
	}
	w.release(first.holds)
	if err := w.checkSettled(); err != nil {
		t.Fatal(err)
	}
}

// TestInvalidRoutes checks that the runner refuses routes a payment may not
// send, and says why.
func TestInvalidRoutes(t *testing.T) {
	const amt = lnwire.MilliSatoshi(10_000_000)
	tests := []struct {
		name   string
		mangle func(rt *route.Route)
	}{
		{"no hops", func(rt *route.Route) { rt.Hops = nil }},
		{"wrong source", func(rt *route.Route) { rt.SourcePubKey = testVertex(2) }},
		{"unknown channel", func(rt *route.Route) { rt.Hops[1].ChannelID = 42 }},
		{"wrong hop node", func(rt *route.Route) { rt.Hops[0].PubKeyBytes = testVertex(2) }},
		{"short of target", func(rt *route.Route) { rt.Hops = rt.Hops[:2] }},
		{"too much", func(rt *route.Route) { rt.Hops[2].AmtToForward = 2 * amt }},
		{"over fee budget", func(rt *route.Route) { rt.TotalAmount += 10_000_000 }},
		{"over cltv limit", func(rt *route.Route) { rt.TotalTimeLock += 5000 }},
		{"nil hop", func(rt *route.Route) { rt.Hops[1] = nil }},
		{"over the hop limit", func(rt *route.Route) {
			for len(rt.Hops) <= MaxRouteHops {
				rt.Hops = append(rt.Hops, rt.Hops[0])
			}
		}},
		{"fee near 2^64 msat", func(rt *route.Route) { rt.TotalAmount = math.MaxUint64 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := lineScenario(4, 1_000_000, testPolicy(1000, 100, 40), uint64(amt))
			w := mustWorld(t, sc)
			rt := lineRoute(t, w, 3, amt)
			tc.mangle(rt)
			r := &scriptedRouter{routes: []*route.Route{rt}}
			factory := func(routing.SimNetworkView, route.Vertex, map[uint64]lnwire.MilliSatoshi,
				*routing.SimPaymentSpec) (routing.SimRouter, error) {
				return r, nil
			}
			res := w.runPayment(0, w.sc.Payments[0], factory, w.view(), &stopwatch{})
			if res.FailureReason != ReasonInvalidRoute || res.Error == "" || res.Attempts != 0 {
				t.Fatalf("got reason %q error %q attempts %d", res.FailureReason, res.Error, res.Attempts)
			}
		})
	}
}

// TestAttemptLimitAndGiveUp checks the two ordinary ends of a failing
// payment.
func TestAttemptLimitAndGiveUp(t *testing.T) {
	const amt = lnwire.MilliSatoshi(10_000_000)
	sc := lineScenario(3, 1_000_000, testPolicy(1000, 100, 40), uint64(amt))
	sc.Defaults.MaxAttempts = 3
	w := mustWorld(t, sc)
	w.net.channels[1].setBalance(0) // node 1 can never forward
	var routes []*route.Route
	for i := 0; i < 5; i++ {
		routes = append(routes, lineRoute(t, w, 2, amt))
	}
	for _, tc := range []struct {
		routes []*route.Route
		want   string
		tries  int
	}{
		{routes, ReasonAttemptsExhausted, 3},
		{routes[:2], ReasonRouterGaveUp, 2},
	} {
		r := &scriptedRouter{routes: tc.routes}
		factory := func(routing.SimNetworkView, route.Vertex, map[uint64]lnwire.MilliSatoshi,
			*routing.SimPaymentSpec) (routing.SimRouter, error) {
			return r, nil
		}
		res := w.runPayment(0, w.sc.Payments[0], factory, w.view(), &stopwatch{})
		if res.FailureReason != tc.want || res.Attempts != tc.tries || len(r.results) != tc.tries {
			t.Fatalf("reason %q after %d attempts (%d reports), want %q after %d",
				res.FailureReason, res.Attempts, len(r.results), tc.want, tc.tries)
		}
	}
}

// TestReceiverRefusalEndsThePayment checks that a shard the receiver
// refuses for its details (here a time lock too soon for it, which every
// hop forwarded) ends the payment, as lnd's payment lifecycle ends it
// (routing's processPaymentOutcomeFinal: reasonIncorrectDetails): the old
// simulator let the router go on, having tested every hop of the route for
// an attempt.
func TestReceiverRefusalEndsThePayment(t *testing.T) {
	const amt = lnwire.MilliSatoshi(10_000_000)
	w := balancedLine(t, 4, amt)
	probe := lineRoute(t, w, 3, amt)
	shiftLocks(probe, -1)
	r := &scriptedRouter{routes: []*route.Route{probe, lineRoute(t, w, 3, amt)}}
	factory := func(routing.SimNetworkView, route.Vertex, map[uint64]lnwire.MilliSatoshi,
		*routing.SimPaymentSpec) (routing.SimRouter, error) {
		return r, nil
	}
	res := w.runPayment(0, w.sc.Payments[0], factory, w.view(), &stopwatch{})
	if res.FailureReason != ReasonIncorrectDetails || res.Attempts != 1 || res.Success {
		t.Fatalf("reason %q after %d attempts (success %v), want %q after 1",
			res.FailureReason, res.Attempts, res.Success, ReasonIncorrectDetails)
	}
}

// TestAttributionRates draws many attempts and wants each degradation kind
// within tolerance of its configured rate, and checks how each kind is
// applied to a report.
func TestAttributionRates(t *testing.T) {
	sc := loadExample(t, "attribution-example.json")
	sc.Attribution = scenario.Attribution{StrippedRate: 0.1, ShiftBeforeRate: 0.05, ShiftAfterRate: 0.15}
	w := mustWorld(t, sc)
	const n = 40000
	counts := map[string]int{}
	for p := 0; p < n/40; p++ {
		for k := 0; k < 40; k++ {
			counts[w.drawAttribution(p, k).kind]++
		}
	}
	want := map[string]float64{degradeStripped: 0.1, degradeShiftBefore: 0.05,
		degradeShiftAfter: 0.15, degradeNone: 0.7}
	for kind, rate := range want {
		got := float64(counts[kind]) / n
		tol := 4 * math.Sqrt(rate*(1-rate)/n)
		if math.Abs(got-rate) > tol {
			t.Errorf("%s drawn %.4f of attempts, want %.4f ± %.4f", kind, got, rate, tol)
		}
	}
}

// TestShiftedReportNamesTheBlamedChannel checks that a shifted report
// carries the blamed node's own channel update, and that the sender learns
// that one: the old simulator kept the update of the channel that really
// failed (its short channel id undid the shift) and applied it to the
// sender's view.
func TestShiftedReportNamesTheBlamedChannel(t *testing.T) {
	const amt = lnwire.MilliSatoshi(10_000_000)
	w := balancedLine(t, 5, amt)
	rt := lineRoute(t, w, 4, amt)
	w.net.channels[2].actual[0].FeeProportionalMillionths += 10 // node 2 fails
	out := w.forward(rt, 40)
	if out.failIdx != 2 {
		t.Fatalf("failed at %d, want 2", out.failIdx)
	}
	for _, tc := range []struct {
		kind        string
		blamed      int
		wantChannel int // the channel whose update the report carries
	}{
		{degradeNone, 2, 2},
		{degradeShiftBefore, 1, 1},
		{degradeShiftAfter, 3, 3},
	} {
		res, _, learned := w.report(rt, out, attributionDraw{kind: tc.kind})
		fee, ok := res.Failure.(*lnwire.FailFeeInsufficient)
		if !ok || res.FailureSourceIdx != tc.blamed {
			t.Fatalf("%s: %T blaming %d, want fee_insufficient blaming %d",
				tc.kind, res.Failure, res.FailureSourceIdx, tc.blamed)
		}
		want := w.net.channels[tc.wantChannel].id
		if fee.Update.ShortChannelID.ToUint64() != want || learned == nil ||
			learned.channel != tc.wantChannel {
			t.Fatalf("%s: the report names channel %s, want the blamed node's %s",
				tc.kind, fee.Update.ShortChannelID, lnwire.NewShortChanIDFromInt(want))
		}
	}
}

func TestAttributionApplied(t *testing.T) {
	sc := lineScenario(5, 1_000_000, testPolicy(1000, 100, 40), 1000)
	w := mustWorld(t, sc)
	rt := lineRoute(t, w, 4, 10_000_000)
	fail := func(idx int) forwardOutcome {
		return forwardOutcome{failIdx: idx, failure: lnwire.NewTemporaryChannelFailure(nil)}
	}
	tests := []struct {
		name    string
		out     forwardOutcome
		kind    string
		wantIdx int
		applied string
	}{
		{"success is truthful", forwardOutcome{failIdx: -1}, degradeStripped, -1, degradeNone},
		{"local failure is truthful", fail(0), degradeStripped, 0, degradeNone},
		{"stripped", fail(2), degradeStripped, -1, degradeStripped},
		{"shift before", fail(2), degradeShiftBefore, 1, degradeShiftBefore},
		{"shift before stops at the first hop", fail(1), degradeShiftBefore, 1, degradeNone},
		{"shift after", fail(2), degradeShiftAfter, 3, degradeShiftAfter},
		{"shift after stops at the receiver", fail(4), degradeShiftAfter, 4, degradeNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, applied, _ := w.report(rt, tc.out, attributionDraw{kind: tc.kind, nodeSeed: 3})
			if res.FailureSourceIdx != tc.wantIdx || applied != tc.applied {
				t.Fatalf("reported position %d kind %s, want %d %s",
					res.FailureSourceIdx, applied, tc.wantIdx, tc.applied)
			}
			if tc.applied == degradeStripped {
				if _, ok := res.Failure.(routing.UnreadableFailure); !ok {
					t.Fatalf("stripped failure carries %T", res.Failure)
				}
				for i := 0; i <= len(rt.Hops); i++ {
					if routeNode(rt, i) == res.FailureSource {
						t.Fatal("stripped failure blamed a node on the route")
					}
				}
				return
			}
			if tc.wantIdx >= 0 && res.FailureSource != routeNode(rt, tc.wantIdx) {
				t.Fatal("failure source does not match its index")
			}
		})
	}
}

// TestCommonRandomNumbers checks that what a router does changes none of
// the draws: two worlds of one scenario start alike, and after different
// payments they still play the same background events and draw the same
// attribution for every attempt.
func TestCommonRandomNumbers(t *testing.T) {
	sc := loadExample(t, "drift-example.json")
	sc.Attribution = scenario.Attribution{StrippedRate: 0.2}
	a, b := mustWorld(t, sc), mustWorld(t, sc)
	for i := range a.net.channels {
		ca, cb := &a.net.channels[i], &b.net.channels[i]
		if ca.local != cb.local || *ca.actualOr() != *cb.actualOr() {
			t.Fatalf("channel %d drawn differently", i)
		}
	}
	var evA, evB []trafficEvent
	a.traffic.observe = func(e trafficEvent) { evA = append(evA, e) }
	b.traffic.observe = func(e trafficEvent) { evB = append(evB, e) }
	// World a makes a payment (its rounds play traffic too); b does not.
	pay := a.runPayment(0, sc.Payments[0], newHopRouter, a.view(), &stopwatch{})
	if pay.Attempts == 0 {
		t.Fatal("the payment made no attempt")
	}
	horizon := sc.StartTime.Add(3 * time.Hour)
	a.advanceTo(horizon)
	b.advanceTo(horizon)
	if len(evA) == 0 || len(evA) != len(evB) {
		t.Fatalf("worlds played %d and %d events", len(evA), len(evB))
	}
	for i := range evA {
		if evA[i] != evB[i] {
			t.Fatalf("event %d differs: %+v vs %+v", i, evA[i], evB[i])
		}
	}
	for p := 0; p < 5; p++ {
		for k := 0; k < 20; k++ {
			if a.drawAttribution(p, k) != b.drawAttribution(p, k) {
				t.Fatalf("attribution draw %d/%d differs", p, k)
			}
		}
	}
}

// actualOr is the node-1 actual policy, or an empty one.
func (c *channel) actualOr() *routing.CachedEdgePolicy {
	if c.actual[0] == nil {
		return &routing.CachedEdgePolicy{}
	}
	return c.actual[0]
}

// TestLiquidityDraws checks the bimodal and uniform mix: with capacities far
// above the scale, bimodal balances sit near an end, and only uniform ones
// fall in the middle half.
func TestLiquidityDraws(t *testing.T) {
	const n = 4000
	g := &scenario.Graph{Format: scenario.FormatGraph}
	for i := 0; i <= n; i++ {
		g.Nodes = append(g.Nodes, scenario.Node{ID: testNode(i)})
	}
	for i := 1; i <= n; i++ {
		g.Channels = append(g.Channels, scenario.Channel{SCID: testSCID(i), Node1: testNode(0),
			Node2: testNode(i), CapacitySat: 10_000_000})
	}
	for _, uniform := range []float64{0, 0.3} {
		sc := baseScenario(g, testNode(1))
		sc.Liquidity = scenario.Liquidity{BimodalScaleSat: 300_000, UniformShare: uniform}
		w := mustWorld(t, sc)
		middle, nearEnd := 0, 0
		for i := range w.net.channels {
			c := &w.net.channels[i]
			if c.direction(w.source) >= 0 {
				continue
			}
			frac := float64(c.local[0]) / float64(c.capacity)
			switch {
			case frac > 0.25 && frac < 0.75:
				middle++
			case frac < 0.1 || frac > 0.9:
				nearEnd++
			}
		}
		wantMiddle := uniform * 0.5 * n
		if math.Abs(float64(middle)-wantMiddle) > 4*math.Sqrt(wantMiddle+1)+2 {
			t.Errorf("uniform share %v: %d balances in the middle half, want about %.0f", uniform, middle, wantMiddle)
		}
		if wantNear := (1 - uniform) * n; float64(nearEnd) < 0.95*wantNear {
			t.Errorf("uniform share %v: %d balances near an end, want at least %.0f", uniform, nearEnd, 0.95*wantNear)
		}
	}
}

// TestStaleGossip checks that the configured share of policies is stale and
// that stale policies only ever ask for more than they announce.
func TestStaleGossip(t *testing.T) {
	sc := loadExample(t, "base-example.json")
	sc.Gossip = scenario.Gossip{StaleShare: 0.3, StaleFeeRateFactor: 2, StaleBaseFeeAddMsat: 1000, StaleCltvAdd: 40}
	w := mustWorld(t, sc)
	stale, total := 0, 0
	for i := range w.net.channels {
		c := &w.net.channels[i]
		for d := 0; d < 2; d++ {
			ann, act := c.announced[d], c.actual[d]
			if ann == nil {
				continue
			}
			total++
			if act.FeeBaseMSat < ann.FeeBaseMSat || act.FeeProportionalMillionths < ann.FeeProportionalMillionths ||
				act.TimeLockDelta < ann.TimeLockDelta {
				t.Fatalf("channel %d direction %d asks less than announced", c.id, d)
			}
			if *act != *ann {
				stale++
			}
		}
	}
	got := float64(stale) / float64(total)
	if math.Abs(got-0.3) > 4*math.Sqrt(0.3*0.7/float64(total)) {
		t.Fatalf("%.3f of %d policies stale, want 0.3", got, total)
	}
}

// TestTrafficMovesRemoteLiquidity checks that background traffic moves
// remote balances at about the configured rate, never the sender's own, and
// conserves funds.
func TestTrafficMovesRemoteLiquidity(t *testing.T) {
	sc := loadExample(t, "drift-example.json")
	w := mustWorld(t, sc)
	before := make([][2]lnwire.MilliSatoshi, len(w.net.channels))
	for i := range w.net.channels {
		before[i] = w.net.channels[i].local
	}
	const hours = 4
	w.advanceTo(sc.StartTime.Add(hours * time.Hour))
	want := sc.Traffic.EventsPerHour * hours
	if got := float64(w.traffic.played); math.Abs(got-want) > 4*math.Sqrt(want) {
		t.Fatalf("played %v events in %d hours, want about %v", got, hours, want)
	}
	moved := 0
	for i := range w.net.channels {
		c := &w.net.channels[i]
		if c.local != before[i] {
			if c.direction(w.source) >= 0 {
				t.Fatalf("traffic moved the sender's channel %d", c.id)
			}
			moved++
		}
	}
	if moved < len(w.net.channels)/2 {
		t.Fatalf("traffic moved only %d of %d channels", moved, len(w.net.channels))
	}
	if err := w.checkSettled(); err != nil {
		t.Fatal(err)
	}
}

// TestStrippedFailureTeachesNothing checks that the channel update of a
// failure reaches the gossip view only when the sender could read it.
func TestStrippedFailureTeachesNothing(t *testing.T) {
	const amt = lnwire.MilliSatoshi(10_000_000)
	for _, stripped := range []bool{false, true} {
		sc := lineScenario(4, 1_000_000, testPolicy(1000, 100, 40), uint64(amt))
		if stripped {
			sc.Attribution, sc.Arena = scenario.Attribution{StrippedRate: 1}, scenario.ArenaAttribution
		}
		w := mustWorld(t, sc)
		setAllBalances(w, 500_000_000)
		rt := lineRoute(t, w, 3, amt)
		w.net.channels[1].actual[0].FeeProportionalMillionths = 900
		r := &scriptedRouter{routes: []*route.Route{rt}}
		factory := func(routing.SimNetworkView, route.Vertex, map[uint64]lnwire.MilliSatoshi,
			*routing.SimPaymentSpec) (routing.SimRouter, error) {
			return r, nil
		}
		w.runPayment(0, sc.Payments[0], factory, w.view(), &stopwatch{})
		learned := w.net.channels[1].announced[0].FeeProportionalMillionths == 900
		if learned == stripped {
			t.Fatalf("stripped=%v: gossip learned the update: %v", stripped, learned)
		}
	}
}

// floodRouter fails with an error of the given text at once.
type floodRouter struct{ text string }

func (r floodRouter) RequestRoute(lnwire.MilliSatoshi, uint32) (*route.Route, error) {
	return nil, errors.New(r.text)
}

func (r floodRouter) ReportAttempt(uint64, *route.Route, *routing.SimAttemptResult) error {
	return nil
}

// TestARoutersErrorTextIsBounded checks that a router's error, however
// long, is kept to MaxErrorBytes, cut on a rune boundary, whether it comes
// from the factory or from a request.
func TestARoutersErrorTextIsBounded(t *testing.T) {
	sc := lineScenario(3, 1_000_000, testPolicy(1000, 100, 40), 10_000_000)
	flood := strings.Repeat("é", 3<<20) // 6 MiB
	tests := []struct {
		name    string
		factory routing.RouterFactory
	}{
		{"from the factory", func(routing.SimNetworkView, route.Vertex,
			map[uint64]lnwire.MilliSatoshi, *routing.SimPaymentSpec) (routing.SimRouter, error) {
			return nil, errors.New(flood)
		}},
		{"from a request", func(routing.SimNetworkView, route.Vertex,
			map[uint64]lnwire.MilliSatoshi, *routing.SimPaymentSpec) (routing.SimRouter, error) {
			return floodRouter{flood}, nil
		}},
		{"a short one whole", func(routing.SimNetworkView, route.Vertex,
			map[uint64]lnwire.MilliSatoshi, *routing.SimPaymentSpec) (routing.SimRouter, error) {
			return floodRouter{"no route"}, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(sc, tt.factory, Options{})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Payments[0].Error
			if len(text) > MaxErrorBytes+len("…") || !utf8.ValidString(text) {
				t.Fatalf("error of %d bytes (valid UTF-8: %v)", len(text), utf8.ValidString(text))
			}
			if tt.name == "a short one whole" && text != "no route" {
				t.Fatalf("error %q", text)
			}
		})
	}
}

// labelRouter is hopRouter labelling each route with the label of its turn.
type labelRouter struct {
	routing.SimRouter
	labels []string
	next   int
}

func (r *labelRouter) RouteLabel(*route.Route) string {
	r.next++
	return r.labels[(r.next-1)%len(r.labels)]
}

// TestRouteLabelsAreKeptClean checks that a RouteLabeler's labels reach the
// attempt log with only the allowed bytes, at most MaxRouteLabelBytes, and
// that a router without labels leaves none.
func TestRouteLabelsAreKeptClean(t *testing.T) {
	sc := lineScenario(3, 1_000_000, testPolicy(1000, 100, 40), 10_000_000)
	tests := []struct {
		name  string
		label string
		want  string
	}{
		{"a plain label", "flow", "flow"},
		{"forbidden bytes dropped", "retry \"x\"\n<é>/1", "retryx/1"},
		{"a long one cut", strings.Repeat("ab", 40), strings.Repeat("ab", 16)},
		{"none", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			factory := func(v routing.SimNetworkView, s route.Vertex,
				l map[uint64]lnwire.MilliSatoshi, spec *routing.SimPaymentSpec) (routing.SimRouter, error) {
				inner, err := newHopRouter(v, s, l, spec)
				if tt.label == "" {
					return inner, err
				}
				return &labelRouter{SimRouter: inner, labels: []string{tt.label}}, err
			}
			res, err := Run(sc, factory, Options{})
			if err != nil {
				t.Fatal(err)
			}
			log := res.Payments[0].AttemptLog
			if len(log) == 0 {
				t.Fatal("no attempt")
			}
			for _, a := range log {
				if a.Label != tt.want {
					t.Errorf("label %q, want %q", a.Label, tt.want)
				}
			}
		})
	}
}
