package lndref

import (
	"math"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/lightningnetwork/lnd/lnwire"
	lndrouting "github.com/lightningnetwork/lnd/routing"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// fakeView is a gossip view with no channels and a settable clock: enough
// for mission control, which never reads the graph.
type fakeView struct {
	now    time.Time
	height uint32
}

func (v *fakeView) ForEachNode(func(route.Vertex) error) error { return nil }

func (v *fakeView) ForEachNodeDirectedChannel(route.Vertex,
	func(*routing.DirectedChannel) error) error {
	return nil
}

func (v *fakeView) FetchNodeFeatures(route.Vertex) *lnwire.FeatureVector {
	return lnwire.NewFeatureVector(lnwire.NewRawFeatureVector(
		lnwire.TLVOnionPayloadRequired, lnwire.PaymentAddrRequired,
		lnwire.MPPOptional), lnwire.Features)
}

func (v *fakeView) Now() time.Time      { return v.now }
func (v *fakeView) BlockHeight() uint32 { return v.height }

var (
	self  = vertex(1)
	nodeA = vertex(2)
	nodeB = vertex(3)
	nodeC = vertex(4)

	start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

func vertex(i byte) route.Vertex {
	var v route.Vertex
	v[0], v[1] = 0x02, i
	return v
}

// testRef sets up a reference and one payment router on a fake view.
func testRef(t *testing.T, kind EstimatorKind, mapping bool) (*Reference, *fakeView, routing.SimRouter) {
	t.Helper()
	ref, err := New(Config{Estimator: kind, Self: self, TimeMapping: mapping})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ref.Close(); err != nil {
			t.Error(err)
		}
	})
	if ref.VirtualClock() == mapping {
		t.Fatalf("VirtualClock() = %v with TimeMapping %v", ref.VirtualClock(), mapping)
	}
	view := &fakeView{now: start, height: 800_000}
	r, err := ref.NewRouter(view, self, map[uint64]lnwire.MilliSatoshi{1: 5_000_000_000},
		&routing.SimPaymentSpec{
			Target: nodeC, Amount: 100_000_000, FeeLimit: 1_000_000,
			MaxParts: 16, MaxAttempts: 40, FinalCLTVDelta: 40,
			CltvLimit: 800_000 + 2016,
		})
	if err != nil {
		t.Fatal(err)
	}
	return ref, view, r
}

// testRoute is self -1-> A -2-> B -3-> C delivering amt, with no fees.
func testRoute(t *testing.T, amt lnwire.MilliSatoshi) *route.Route {
	t.Helper()
	var hops []*route.Hop
	for i, n := range []route.Vertex{nodeA, nodeB, nodeC} {
		hops = append(hops, &route.Hop{
			PubKeyBytes: n, ChannelID: uint64(i + 1),
			AmtToForward: amt, OutgoingTimeLock: 800_100,
		})
	}
	rt, err := route.NewRouteFromHops(amt, 800_100, self, hops)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

const testCapacity = btcutil.Amount(1_000_000) // sat

// TestLiquidityMiss: a temporary_channel_failure at A (A could not forward
// to B) makes mission control doubt the pair A→B above the failed amount,
// and the doubt fades over the scenario's virtual hours (apriori: the
// penalty half-life is one hour).
func TestLiquidityMiss(t *testing.T) {
	const failed = lnwire.MilliSatoshi(200_000_000)
	above, below := lnwire.MilliSatoshi(300_000_000), lnwire.MilliSatoshi(20_000_000)

	// recovery is how long the estimator takes to forget much: the
	// apriori penalty half-life (two of them), the bimodal decay time.
	for _, tc := range []struct {
		name     string
		kind     EstimatorKind
		mapping  bool
		recovery time.Duration
	}{
		{"apriori", Apriori, false, 2 * lndrouting.DefaultPenaltyHalfLife},
		{"bimodal", Bimodal, false, lndrouting.DefaultBimodalDecayTime},
		{"apriori time mapping", Apriori, true, 2 * lndrouting.DefaultPenaltyHalfLife},
		{"bimodal time mapping", Bimodal, true, lndrouting.DefaultBimodalDecayTime},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, view, r := testRef(t, tc.kind, tc.mapping)
			mc := ref.MissionControl()
			prob := func(amt lnwire.MilliSatoshi) float64 {
				return mc.GetProbability(nodeA, nodeB, amt, testCapacity)
			}
			beforeAbove, beforeBelow := prob(above), prob(below)

			view.now = start.Add(10 * time.Minute)
			rt := testRoute(t, failed)
			err := r.ReportAttempt(7, rt, &routing.SimAttemptResult{
				Failure:          lnwire.NewTemporaryChannelFailure(nil),
				FailureSource:    nodeA,
				FailureSourceIdx: 1,
			})
			if err != nil {
				t.Fatal(err)
			}

			hist := mc.GetPairHistorySnapshot(nodeA, nodeB)
			if hist.FailAmt != failed {
				t.Errorf("A→B fail amount %v, want %v", hist.FailAmt, failed)
			}
			if !tc.mapping && !hist.FailTime.Equal(view.now) {
				t.Errorf("A→B fail time %v, want the virtual %v", hist.FailTime, view.now)
			}
			if ok := mc.GetPairHistorySnapshot(self, nodeA); ok.SuccessAmt == 0 {
				t.Errorf("self→A not recorded as a success: %+v", ok)
			}

			afterAbove, afterBelow := prob(above), prob(below)
			t.Logf("P(A→B) above: %.4f → %.4f; below: %.4f → %.4f",
				beforeAbove, afterAbove, beforeBelow, afterBelow)
			if afterAbove >= beforeAbove || afterAbove > 0.01 {
				t.Errorf("P above the failed amount %.4f → %.4f, want a drop below 0.01",
					beforeAbove, afterAbove)
			}
			if afterBelow <= afterAbove {
				t.Errorf("P below the failed amount %.4f is not above P above it %.4f",
					afterBelow, afterAbove)
			}

			// The penalty fades on the virtual clock.
			view.now = start.Add(10*time.Minute + tc.recovery)
			later := prob(above)
			t.Logf("P(A→B) above, %v of virtual time later: %.4f", tc.recovery, later)
			if later <= afterAbove+0.01 {
				t.Errorf("P above did not recover over %v of virtual time: %.4f → %.4f",
					tc.recovery, afterAbove, later)
			}
			if tc.kind == Apriori {
				// Two half-lives: the failure weighs w = 1/4, in
				// the node probability (weighted mean with the
				// a priori 0.6, weight 1) and in the pair's.
				w := 0.25
				want := lndrouting.DefaultAprioriHopProbability / (1 + w) * (1 - w)
				if math.Abs(later-want) > 0.001 {
					t.Errorf("apriori P two half-lives after: %.4f, want ≈ %.4f", later, want)
				}
			}
		})
	}
}

// TestTimeMappingMatchesClock: the fallback time mapping gives the same
// probabilities as mission control on the virtual clock.
func TestTimeMappingMatchesClock(t *testing.T) {
	for _, kind := range []EstimatorKind{Apriori, Bimodal} {
		t.Run(string(kind), func(t *testing.T) {
			refs := map[bool]*Reference{}
			views := map[bool]*fakeView{}
			routers := map[bool]routing.SimRouter{}
			for _, mapping := range []bool{false, true} {
				refs[mapping], views[mapping], routers[mapping] = testRef(t, kind, mapping)
			}
			steps := []struct {
				at   time.Duration
				idx  int
				amt  lnwire.MilliSatoshi
				fail bool
			}{
				{5 * time.Minute, 1, 300_000_000, true},
				{20 * time.Minute, 2, 100_000_000, true},
				{50 * time.Minute, -1, 50_000_000, false},
				{3 * time.Hour, 1, 150_000_000, true},
			}
			for i, s := range steps {
				for mapping, r := range routers {
					views[mapping].now = start.Add(s.at)
					res := &routing.SimAttemptResult{FailureSourceIdx: -1}
					if s.fail {
						res = &routing.SimAttemptResult{
							Failure:          lnwire.NewTemporaryChannelFailure(nil),
							FailureSourceIdx: s.idx,
						}
					}
					if err := r.ReportAttempt(uint64(i), testRoute(t, s.amt), res); err != nil {
						t.Fatal(err)
					}
				}
				for _, probe := range []time.Duration{0, 30 * time.Minute, 5 * time.Hour} {
					for _, pair := range [][2]route.Vertex{{nodeA, nodeB}, {nodeB, nodeC}} {
						for _, amt := range []lnwire.MilliSatoshi{10_000_000, 120_000_000, 400_000_000} {
							var p [2]float64
							for j, mapping := range []bool{false, true} {
								views[mapping].now = start.Add(s.at + probe)
								p[j] = refs[mapping].MissionControl().GetProbability(
									pair[0], pair[1], amt, testCapacity)
							}
							if math.Abs(p[0]-p[1]) > 1e-9 {
								t.Errorf("step %d +%v %x→%x %v: clock %.6f, mapping %.6f",
									i, probe, pair[0][1:2], pair[1][1:2], amt, p[0], p[1])
							}
						}
					}
				}
			}
		})
	}
}

// TestUnreadableFailure: a failure nobody can read blames every pair of
// the route, in both directions, as lnd does for an unreadable onion. (The
// bimodal estimator sees such an amount-0 failure only at a positive age:
// mission control is queried ResultAge after the report.)
func TestUnreadableFailure(t *testing.T) {
	for _, kind := range []EstimatorKind{Apriori, Bimodal} {
		t.Run(string(kind), func(t *testing.T) {
			ref, view, r := testRef(t, kind, false)
			mc := ref.MissionControl()
			pairs := [][2]route.Vertex{{nodeA, nodeB}, {nodeB, nodeC}, {nodeB, nodeA}, {nodeC, nodeB}}
			const amt = lnwire.MilliSatoshi(50_000_000)
			before := make([]float64, len(pairs))
			for i, p := range pairs {
				before[i] = mc.GetProbability(p[0], p[1], amt, testCapacity)
			}
			view.now = start.Add(time.Minute)
			err := r.ReportAttempt(1, testRoute(t, amt), &routing.SimAttemptResult{
				Failure:          routing.UnreadableFailure{},
				FailureSource:    vertex(9),
				FailureSourceIdx: -1,
			})
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range pairs {
				after := mc.GetProbability(p[0], p[1], amt, testCapacity)
				if after >= before[i] || after > 0.01 {
					t.Errorf("pair %x→%x: P %.4f → %.4f, want a drop below 0.01",
						p[0][1:2], p[1][1:2], before[i], after)
				}
			}
			for _, p := range [][2]route.Vertex{{self, nodeA}, {nodeA, self}, {nodeA, nodeB}, {nodeB, nodeC}} {
				h := mc.GetPairHistorySnapshot(p[0], p[1])
				if !h.FailTime.Equal(view.now) || h.FailAmt != 0 {
					t.Errorf("pair %x→%x: history %+v, want a failure at amount 0 at %v",
						p[0][1:2], p[1][1:2], h, view.now)
				}
			}
		})
	}
}

// TestFinalFailureEndsPayment: a failure mission control calls final (the
// receiver rejects the payment details; an unreadable failure on a direct
// route) makes the router give up.
func TestFinalFailureEndsPayment(t *testing.T) {
	direct := func(t *testing.T) *route.Route {
		rt, err := route.NewRouteFromHops(1000, 800_100, self, []*route.Hop{
			{PubKeyBytes: nodeA, ChannelID: 1, AmtToForward: 1000, OutgoingTimeLock: 800_100},
		})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	for _, tc := range []struct {
		name   string
		rt     func(*testing.T) *route.Route
		result *routing.SimAttemptResult
		final  bool
	}{
		{"incorrect payment details", func(t *testing.T) *route.Route { return testRoute(t, 1000) },
			&routing.SimAttemptResult{
				Failure:       lnwire.NewFailIncorrectDetails(1000, 800_000),
				FailureSource: nodeC, FailureSourceIdx: 3,
			}, true},
		{"unreadable on a direct route", direct,
			&routing.SimAttemptResult{
				Failure: routing.UnreadableFailure{}, FailureSource: vertex(9), FailureSourceIdx: -1,
			}, true},
		{"liquidity miss", func(t *testing.T) *route.Route { return testRoute(t, 1000) },
			&routing.SimAttemptResult{
				Failure:       lnwire.NewTemporaryChannelFailure(nil),
				FailureSource: nodeA, FailureSourceIdx: 1,
			}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, r := testRef(t, Apriori, false)
			if err := r.ReportAttempt(1, tc.rt(t), tc.result); err != nil {
				t.Fatal(err)
			}
			failed := r.(*paymentRouter).failed
			if (failed != nil) != tc.final {
				t.Fatalf("router failed = %v, want final %v", failed, tc.final)
			}
			if tc.final {
				if _, err := r.RequestRoute(1000, 0); err == nil {
					t.Error("RequestRoute after a final failure did not return an error")
				}
			}
		})
	}
}

// TestPolicyFailureSecondChance: a fee_insufficient failure with a channel
// update costs the failing node nothing the first time (lnd trusts the new
// policy for a second chance); a second one within a minute of virtual time
// penalises the pair into it, one after more than a minute does not. The
// interval runs on the scenario's clock.
func TestPolicyFailureSecondChance(t *testing.T) {
	update := lnwire.ChannelUpdate1{
		ShortChannelID: lnwire.NewShortChanIDFromInt(3),
		BaseFee:        5000, FeeRate: 500, TimeLockDelta: 40,
	}
	fail := &routing.SimAttemptResult{
		Failure:          lnwire.NewFeeInsufficient(100_000_000, update),
		FailureSource:    nodeB,
		FailureSourceIdx: 2,
	}
	for _, tc := range []struct {
		gap       time.Duration
		penalised bool
	}{
		{30 * time.Second, true},
		{2 * time.Minute, false},
	} {
		t.Run(tc.gap.String(), func(t *testing.T) {
			for _, kind := range []EstimatorKind{Apriori, Bimodal} {
				ref, view, r := testRef(t, kind, false)
				mc := ref.MissionControl()
				if err := r.ReportAttempt(1, testRoute(t, 100_000_000), fail); err != nil {
					t.Fatal(err)
				}
				if h := mc.GetPairHistorySnapshot(nodeA, nodeB); !h.FailTime.IsZero() {
					t.Fatalf("%s: first policy failure penalised A→B: %+v", kind, h)
				}
				view.now = view.now.Add(tc.gap)
				if err := r.ReportAttempt(2, testRoute(t, 100_000_000), fail); err != nil {
					t.Fatal(err)
				}
				h := mc.GetPairHistorySnapshot(nodeA, nodeB)
				if got := !h.FailTime.IsZero(); got != tc.penalised {
					t.Errorf("%s: second policy failure %v later: A→B penalised %v, want %v (%+v)",
						kind, tc.gap, got, tc.penalised, h)
				}
			}
		})
	}
}
