package routekit

import (
	"math"
	"testing"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// TestPaymentBookkeeping follows a shard from dispatch to its outcome.
func TestPaymentBookkeeping(t *testing.T) {
	view := diamond()
	g := NewGraph(view)
	b := NewBeliefs(testPrior, 0)
	spec := &routing.SimPaymentSpec{Target: vertex(3), Amount: 1_000_000, FeeLimit: 10_000,
		MaxParts: 4, MaxAttempts: 10, FinalCLTVDelta: 40, CltvLimit: 900_000, Atomic: true}
	local := map[uint64]lnwire.MilliSatoshi{1: 500_000_000, 3: 500_000_000, 5: 500_000_000}
	p, err := NewPayment(g, b, view, vertex(0), local, spec)
	if err != nil {
		t.Fatal(err)
	}
	q := p.Query(spec.Amount, 3, func(e *Edge, amt, fee lnwire.MilliSatoshi) (float64, float64, bool) {
		prob := p.Prob(e, amt)
		return -math.Log(prob) + float64(fee)/1000, prob, true
	})
	q.MaxHops = 2
	path := NewSearcher(g).Shortest(q)
	rt := p.Route(path, 3)
	if rt == nil {
		t.Fatal("no route")
	}
	p.Dispatch(rt)
	if p.Attempts != 1 || p.AttemptsLeft() != 9 {
		t.Fatalf("dispatch counted %d attempts, %d left of 10", p.Attempts, p.AttemptsLeft())
	}
	e, amt := g.Hop(rt, 1)
	if p.Locked(e) != float64(amt) || p.Local[1] != 500_000_000-rt.TotalAmount {
		t.Fatalf("dispatch booked locked %.0f, local %d", p.Locked(e), p.Local[1])
	}
	p.Returned(rt, &routing.SimAttemptResult{})
	if p.Held(e) != float64(amt) || p.Delivered != spec.Amount {
		t.Fatalf("success booked held %.0f, delivered %d", p.Held(e), p.Delivered)
	}
	if lo, _ := b.Sendable(e, p.Now(), 0); lo < float64(amt) {
		t.Fatalf("sure lower bound %.0f after carrying %d", lo, amt)
	}
	if got := p.UpperBound(0); got > 1_500_000_000-float64(amt)+1 {
		t.Fatalf("upper bound %.0f ignores the held shard", got)
	}
	p.Finish()
	if lo, _ := b.Sendable(e, p.Now(), 0); lo != 0 {
		t.Fatalf("sure lower bound %.0f after the shard settled, want 0", lo)
	}
}

// TestOwnChannelRefusal: a temporary_channel_failure or unknown_next_peer
// on the sender's own channel (its peer has no free HTLC slot, or went
// offline) closes that channel to the payment's later shards, though its
// balance would still fit them; any other failure gives the balance back.
func TestOwnChannelRefusal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		res     routing.SimAttemptResult
		refused bool
	}{
		{"slots full", routing.SimAttemptResult{Failure: lnwire.NewTemporaryChannelFailure(nil)}, true},
		{"peer offline", routing.SimAttemptResult{Failure: &lnwire.FailUnknownNextPeer{}}, true},
		{"remote", routing.SimAttemptResult{Failure: lnwire.NewTemporaryChannelFailure(nil), FailureSourceIdx: 1}, false},
		{"expiry", routing.SimAttemptResult{Failure: &lnwire.FailExpiryTooFar{}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			view := diamond()
			g := NewGraph(view)
			spec := &routing.SimPaymentSpec{Target: vertex(3), Amount: 1_000_000, FeeLimit: 10_000,
				MaxParts: 4, MaxAttempts: 10, FinalCLTVDelta: 40, CltvLimit: 900_000, Atomic: true}
			local := map[uint64]lnwire.MilliSatoshi{1: 500_000_000, 3: 500_000_000, 5: 500_000_000}
			p, err := NewPayment(g, NewBeliefs(testPrior, 0), view, vertex(0), local, spec)
			if err != nil {
				t.Fatal(err)
			}
			send := func() *route.Route {
				path := p.Best(spec.Amount, 0)
				if path == nil {
					return nil
				}
				rt := p.Route(path, 3)
				p.Dispatch(rt)
				return rt
			}
			rt := send()
			own := rt.Hops[0].ChannelID
			p.Returned(rt, &tc.res)
			if got, want := p.Local[own] == 0, tc.refused; got != want {
				t.Fatalf("own channel %d keeps %d msat after the failure", own, p.Local[own])
			}
			if next := send(); next == nil || (next.Hops[0].ChannelID == own) == tc.refused {
				t.Fatalf("the next shard goes over %v, first over %d", next, own)
			}
		})
	}
}

func TestDiagnose(t *testing.T) {
	view := diamond()
	g := NewGraph(view)
	spec := &routing.SimPaymentSpec{Target: vertex(3), Amount: 1000}
	p, err := NewPayment(g, NewBeliefs(testPrior, 0), view, vertex(0), nil, spec)
	if err != nil {
		t.Fatal(err)
	}
	rt := &route.Route{TotalAmount: 1000, SourcePubKey: vertex(0), Hops: []*route.Hop{
		{PubKeyBytes: vertex(4), ChannelID: 5, AmtToForward: 1000},
		{PubKeyBytes: vertex(5), ChannelID: 6, AmtToForward: 1000},
		{PubKeyBytes: vertex(3), ChannelID: 7, AmtToForward: 1000},
	}}
	tests := []struct {
		name string
		res  routing.SimAttemptResult
		want Diagnosis
	}{
		{"liquidity at a hop", routing.SimAttemptResult{Failure: &lnwire.FailTemporaryChannelFailure{},
			FailureSourceIdx: 2}, Diagnosis{Liquidity: true, First: 1, Last: 2, Reported: 2}},
		{"unreadable", routing.SimAttemptResult{Failure: routing.UnreadableFailure{}, FailureSourceIdx: -1},
			Diagnosis{Unreadable: true, Liquidity: true, First: 1, Last: 2, Reported: -1}},
		{"own channel", routing.SimAttemptResult{Failure: &lnwire.FailTemporaryChannelFailure{}},
			Diagnosis{Reported: -1}},
		{"receiver", routing.SimAttemptResult{Failure: &lnwire.FailTemporaryChannelFailure{},
			FailureSourceIdx: 3}, Diagnosis{Liquidity: true, First: 2, Last: 2, Reported: 2}},
		{"policy", routing.SimAttemptResult{Failure: &lnwire.FailFeeInsufficient{},
			FailureSourceIdx: 1}, Diagnosis{Reported: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.Diagnose(rt, &tc.res); got != tc.want {
				t.Fatalf("diagnosis %+v, want %+v", got, tc.want)
			}
		})
	}
	w := p.FailureWeights(rt, 1, 2, func(int) float64 { return 1 })
	if math.Abs(w[0]+w[1]-1) > 1e-9 {
		t.Fatalf("weights %v do not sum to 1", w)
	}
}

func TestPlanFlow(t *testing.T) {
	tests := []struct {
		name     string
		amount   lnwire.MilliSatoshi
		maxParts int
		parts    int  // paths wanted
		short    bool // the fees leave a little less than the amount
	}{
		{"one corridor", 100_000_000, 4, 1, false},
		{"split over corridors", 2_000_000_000, 4, 2, false},
		{"one part allowed", 1_500_000_000, 1, 1, false},
		{"a sender's channel to the last msat", 2_000_000_000, 1, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			view := diamond()
			g := NewGraph(view)
			local := map[uint64]lnwire.MilliSatoshi{1: 1_000_000_000, 3: 2_000_000_000, 5: 500_000_000}
			spec := &routing.SimPaymentSpec{Target: vertex(3), Amount: tc.amount,
				FeeLimit: tc.amount / 10, MaxParts: uint32(tc.maxParts), FinalCLTVDelta: 40,
				CltvLimit: 900_000}
			p, err := NewPayment(g, NewBeliefs(testPrior, 0), view, vertex(0), local, spec)
			if err != nil {
				t.Fatal(err)
			}
			plan := p.PlanFlow(tc.amount, tc.maxParts, FlowCost{Pieces: 4, Units: 100, FeeWeight: 0.1})
			if len(plan) != tc.parts {
				t.Fatalf("%d parts, want %d", len(plan), tc.parts)
			}
			total := lnwire.MilliSatoshi(0)
			for _, path := range plan {
				total += path.Amount
				rt := p.Route(path, 3)
				if rt == nil || rt.ReceiverAmt() != path.Amount {
					t.Fatalf("part of %d msat does not make a route", path.Amount)
				}
				if path.Amts[0] > local[path.Edges[0].ChannelID] {
					t.Fatalf("part of %d msat overdraws the sender's channel", path.Amts[0])
				}
			}
			if tc.short {
				if total >= tc.amount || total < tc.amount*99/100 {
					t.Fatalf("parts deliver %d msat, want a little under %d", total, tc.amount)
				}
				return
			}
			if total != tc.amount {
				t.Fatalf("parts deliver %d msat, want %d", total, tc.amount)
			}
		})
	}
}

// TestPlanFlowMovesAShrunkPartsLack checks that a part shrunk to fit its
// fees in the sender's channel does not leave the plan short: what it lacks
// goes to a part whose own channel has room, not to a later round that no
// channel could forward so little for.
func TestPlanFlowMovesAShrunkPartsLack(t *testing.T) {
	view := diamond()
	// The cheap corridor's own channel holds less than the corridor carries.
	local := map[uint64]lnwire.MilliSatoshi{1: 400_000_000, 3: 2_000_000_000, 5: 500_000_000}
	amount := lnwire.MilliSatoshi(2_000_000_000)
	spec := &routing.SimPaymentSpec{Target: vertex(3), Amount: amount, FeeLimit: amount / 10,
		MaxParts: 4, FinalCLTVDelta: 40, CltvLimit: 900_000}
	p, err := NewPayment(NewGraph(view), NewBeliefs(testPrior, 0), view, vertex(0), local, spec)
	if err != nil {
		t.Fatal(err)
	}
	plan := p.PlanFlow(amount, 4, FlowCost{Pieces: 4, Units: 100, FeeWeight: 0.1})
	total, spent := lnwire.MilliSatoshi(0), map[uint64]lnwire.MilliSatoshi{}
	for _, path := range plan {
		total += path.Amount
		spent[path.Edges[0].ChannelID] += path.Amts[0]
	}
	for own, out := range spent {
		if out > local[own] {
			t.Fatalf("parts send %d msat over channel %d, which holds %d", out, own, local[own])
		}
	}
	if spent[1] == 0 || spent[1] < local[1]*99/100 {
		t.Fatalf("the cheap corridor's channel sends %d of its %d msat: the case is not tested", spent[1], local[1])
	}
	if total != amount {
		t.Fatalf("parts deliver %d msat, want %d", total, amount)
	}
}

// TestPlanFlowLeavesOutPartsSureToFail checks that a part is not planned
// over a channel that failed its amount for sure. The flow counts what
// arrives: a corridor whose middle channel failed a little more than a part
// still carries that part, but with the last channel's fee on top the
// middle channel would carry what failed.
func TestPlanFlowLeavesOutPartsSureToFail(t *testing.T) {
	const amount = lnwire.MilliSatoshi(300_000_000) // 100 flow units of 3M msat
	tests := []struct {
		name   string
		failed lnwire.MilliSatoshi // what channel 6 (4 → 5) failed
		parts  int
	}{
		// 99 units fit under it, 297M msat, and the 10 ppm fee of
		// channel 7 lifts that to 297,002,970 msat on channel 6.
		{"lifted back to what failed", 297_001_000, 0},
		{"well under what failed", 400_000_000, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, g := beginCorridor(t, amount)
			p.Beliefs.Failed(g.EdgeInto(5, 6), float64(tc.failed), 1, p.Now())
			plan := p.PlanFlow(amount, 4, FlowCost{Pieces: 4, Units: 100, FeeWeight: 0.1})
			if len(plan) != tc.parts {
				t.Fatalf("%d parts, want %d", len(plan), tc.parts)
			}
			for _, path := range plan {
				if path.Amts[1] >= tc.failed {
					t.Fatalf("a part carries %d msat over the channel that failed %d", path.Amts[1], tc.failed)
				}
			}
		})
	}
}

// TestFillShortfallAsksMayCarry checks that the dust a plan lacks is not
// put on a part whose grown amount a channel failed for sure: sent, it
// would fail again.
func TestFillShortfallAsksMayCarry(t *testing.T) {
	const amount = lnwire.MilliSatoshi(300_000_000)
	const lack = lnwire.MilliSatoshi(500)
	tests := []struct {
		name   string
		failed func(grown *Path) lnwire.MilliSatoshi // what channel 6 (4 → 5) failed
		grows  bool
	}{
		{"the grown part is what failed", func(g *Path) lnwire.MilliSatoshi { return g.Amts[1] }, false},
		{"well under what failed", func(g *Path) lnwire.MilliSatoshi { return 2 * g.Amts[1] }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, g := beginCorridor(t, amount)
			edges := []*Edge{g.EdgeInto(4, 5), g.EdgeInto(5, 6), g.EdgeInto(3, 7)}
			part := PathAlong(edges, p.Source, amount-lack)
			grown := PathAlong(edges, p.Source, amount)
			p.Beliefs.Failed(edges[1], float64(tc.failed(grown)), 1, p.Now())
			plan := []*Path{part}
			spent := map[uint64]lnwire.MilliSatoshi{5: part.Amts[0]}
			p.fillShortfall(plan, amount, spent, 10*lack)
			if got := plan[0].Amount == amount; got != tc.grows {
				t.Fatalf("part of %d msat after the fill, want grown %v", plan[0].Amount, tc.grows)
			}
			if spent[5] != plan[0].Amts[0] {
				t.Fatalf("spent %d on the own channel, the part sends %d", spent[5], plan[0].Amts[0])
			}
		})
	}
}

// beginCorridor begins a payment of amount on the diamond where only the
// corridor 0 → 4 → 5 → 3 has the sender's balance.
func beginCorridor(t *testing.T, amount lnwire.MilliSatoshi) (*Payment, *Graph) {
	t.Helper()
	view := diamond()
	g := NewGraph(view)
	local := map[uint64]lnwire.MilliSatoshi{1: 0, 3: 0, 5: 500_000_000}
	spec := &routing.SimPaymentSpec{Target: vertex(3), Amount: amount,
		FeeLimit: amount / 10, MaxParts: 4, FinalCLTVDelta: 40, CltvLimit: 900_000}
	p, err := NewPayment(g, NewBeliefs(testPrior, 0), view, vertex(0), local, spec)
	if err != nil {
		t.Fatal(err)
	}
	return p, g
}
