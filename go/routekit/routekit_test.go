package routekit

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
)

var testPrior = Prior{BimodalScale: 300_000_000, UniformShare: 0.2}

// diamond is 0 → {1, 2} → 3, with a cheap upper corridor over node 1 and a
// dear lower one over node 2, and a long detour 0 → 4 → 5 → 3.
func diamond() *fakeView {
	return newTestView(6, []testChannel{
		{scid: 1, a: 0, b: 1, capSat: 1_000_000, fromA: pol(0, 0), fromB: pol(0, 0)},
		{scid: 2, a: 1, b: 3, capSat: 1_000_000, fromA: pol(1000, 100), fromB: pol(0, 0)},
		{scid: 3, a: 0, b: 2, capSat: 2_000_000, fromA: pol(0, 0), fromB: pol(0, 0)},
		{scid: 4, a: 2, b: 3, capSat: 2_000_000, fromA: pol(1000, 2000), fromB: pol(0, 0)},
		{scid: 5, a: 0, b: 4, capSat: 500_000, fromA: pol(0, 0), fromB: pol(0, 0)},
		{scid: 6, a: 4, b: 5, capSat: 500_000, fromA: pol(0, 10), fromB: pol(0, 0)},
		{scid: 7, a: 5, b: 3, capSat: 500_000, fromA: pol(0, 10), fromB: pol(0, 0)},
	})
}

// feeCost prices a channel by its fee alone, plus a small cost per hop.
func feeCost(_ *Edge, _, fee lnwire.MilliSatoshi) (float64, float64, bool) {
	return float64(fee) + 1, 1, true
}

func channels(p *Path) []uint64 {
	var out []uint64
	for _, e := range p.Edges {
		out = append(out, e.ChannelID)
	}
	return out
}

func TestShortest(t *testing.T) {
	g := NewGraph(diamond())
	s := NewSearcher(g)
	tests := []struct {
		name   string
		edit   func(q *Query)
		want   []uint64 // nil: no path
		wantFe lnwire.MilliSatoshi
	}{
		{"cheapest", func(q *Query) {}, []uint64{5, 6, 7}, 20},
		{"hop limit", func(q *Query) { q.MaxHops = 2 }, []uint64{1, 2}, 1100},
		{"exclusion", func(q *Query) { q.MaxHops = 2; q.Exclude = map[uint64]bool{2: true} },
			[]uint64{3, 4}, 3000},
		{"fee budget", func(q *Query) { q.MaxHops = 2; q.FeeBudget = 1000 }, nil, 0},
		{"cltv limit", func(q *Query) { q.CltvLimit = q.FinalLock + 39 }, nil, 0},
		{"cltv limit fits two hops", func(q *Query) { q.CltvLimit = q.FinalLock + 79 },
			[]uint64{1, 2}, 1100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := &Query{Source: 0, Target: 3, Amount: 1_000_000, FeeBudget: 10_000,
				FinalLock: 800_040, Cost: feeCost}
			tc.edit(q)
			p := s.Shortest(q)
			if tc.want == nil {
				if p != nil {
					t.Fatalf("found %v, want none", channels(p))
				}
				return
			}
			if p == nil {
				t.Fatalf("found none, want %v", tc.want)
			}
			if got := channels(p); !slices.Equal(got, tc.want) {
				t.Fatalf("channels %v, want %v", got, tc.want)
			}
			if p.Fee() != tc.wantFe {
				t.Fatalf("fee %d, want %d", p.Fee(), tc.wantFe)
			}
			rt, err := g.Route(p, q.FinalLock, q.CltvLimit)
			if err != nil {
				t.Fatal(err)
			}
			if rt.TotalFees() != tc.wantFe || rt.ReceiverAmt() != q.Amount {
				t.Fatalf("route fees %d, receives %d", rt.TotalFees(), rt.ReceiverAmt())
			}
			if rt.SourcePubKey != vertex(0) || rt.Hops[len(rt.Hops)-1].PubKeyBytes != vertex(3) {
				t.Fatal("route does not run from the source to the target")
			}
			in, inLock := rt.TotalAmount, rt.TotalTimeLock
			for i := 1; i < len(rt.Hops); i++ {
				// Node Hops[i-1] receives in and forwards over channel
				// i, charging that channel's fee and delta.
				e, out := p.Edges[i], rt.Hops[i-1]
				fee, lock := in-out.AmtToForward, inLock-out.OutgoingTimeLock
				in, inLock = out.AmtToForward, out.OutgoingTimeLock
				if fee != e.Policy.ComputeFee(out.AmtToForward) ||
					lock != uint32(e.Policy.TimeLockDelta) {
					t.Fatalf("hop %d charges %d msat and %d blocks, its policy otherwise", i, fee, lock)
				}
			}
			again := PathAlong(p.Edges, 0, q.Amount)
			for i := range p.Amts {
				if again.Amts[i] != p.Amts[i] || again.Cltvs[i] != p.Cltvs[i] {
					t.Fatalf("PathAlong %v %v, search %v %v", again.Amts, again.Cltvs, p.Amts, p.Cltvs)
				}
			}
		})
	}
}

// TestInboundFees checks that a search prices a node's inbound discount as
// lnd's CheckHtlcForward does (routing.HopFee): node 1 takes 1000 msat and
// 100 ppm off what it charges for HTLCs arriving from the sender, which
// cancels its fee over channel 2, so the upper corridor pays nothing.
func TestInboundFees(t *testing.T) {
	view := diamond()
	for _, dc := range view.chans[vertex(1)] {
		if dc.ChannelID == 1 {
			dc.InboundFeeBaseMSat, dc.InboundFeeRate = -1000, -100
		}
	}
	g := NewGraph(view)
	q := &Query{Source: 0, Target: 3, Amount: 1_000_000, FeeBudget: 10_000,
		FinalLock: 800_040, MaxHops: 2, Cost: feeCost}
	p := NewSearcher(g).Shortest(q)
	if p == nil || !slices.Equal(channels(p), []uint64{1, 2}) {
		t.Fatalf("path %v, want [1 2]", p)
	}
	// Node 1's fee: 1000 + 100 ppm of 1M, less 1000 + 100 ppm of 1.0011M
	// (its inbound fee rounds up): -1 msat, which is 0.
	if p.Fee() != 0 {
		t.Fatalf("fee %d, want 0", p.Fee())
	}
	again := PathAlong(p.Edges, 0, q.Amount)
	if !slices.Equal(again.Amts, p.Amts) {
		t.Fatalf("PathAlong %v, search %v", again.Amts, p.Amts)
	}
	// A surcharge instead: node 1 now asks 1100 + 2000 msat, more than
	// the lower corridor's 3000.
	for _, dc := range view.chans[vertex(1)] {
		if dc.ChannelID == 1 {
			dc.InboundFeeBaseMSat, dc.InboundFeeRate = 2000, 0
		}
	}
	g.Refresh(1)
	if p := NewSearcher(g).Shortest(q); p == nil || !slices.Equal(channels(p), []uint64{3, 4}) || p.Fee() != 3000 {
		t.Fatalf("path with a surcharge: %v, want [3 4] for 3000", p)
	}
}

func TestMaxFlow(t *testing.T) {
	g := NewGraph(diamond())
	full := func(e *Edge) float64 { return float64(e.Capacity) }
	tests := []struct {
		name string
		cap  Capacity
		want float64
	}{
		{"capacities", full, 3_500_000_000},
		{"corridor closed", func(e *Edge) float64 {
			if e.ChannelID == 4 {
				return 0
			}
			return full(e)
		}, 1_500_000_000},
		{"halved", func(e *Edge) float64 { return full(e) / 2 }, 1_750_000_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := g.MaxFlow(0, 3, tc.cap); math.Abs(got-tc.want) > 10 {
				t.Fatalf("max flow %.0f, want %.0f", got, tc.want)
			}
		})
	}
}

// linearCost prices each msat at the channel's fee rate, up to its capacity.
func linearCost(e *Edge) []Piece {
	if !e.Usable() {
		return nil
	}
	return []Piece{{Width: float64(e.Capacity),
		Slope: (float64(e.Policy.FeeProportionalMillionths) + 1) / 1e6}}
}

func TestMinCostFlow(t *testing.T) {
	g := NewGraph(diamond())
	tests := []struct {
		name     string
		amount   lnwire.MilliSatoshi
		maxParts int
		want     map[uint64]lnwire.MilliSatoshi // amount per first channel
	}{
		{"cheapest corridor alone", 400_000_000, 0, map[uint64]lnwire.MilliSatoshi{5: 400_000_000}},
		{"spills over in order of cost", 1_200_000_000, 0,
			map[uint64]lnwire.MilliSatoshi{5: 500_000_000, 1: 700_000_000}},
		{"three corridors", 3_000_000_000, 0,
			map[uint64]lnwire.MilliSatoshi{5: 500_000_000, 1: 1_000_000_000, 3: 1_500_000_000}},
		{"one part at most", 1_200_000_000, 1,
			map[uint64]lnwire.MilliSatoshi{3: 1_200_000_000}},
		{"more than the network", 9_000_000_000, 0,
			map[uint64]lnwire.MilliSatoshi{5: 500_000_000, 1: 1_000_000_000, 3: 2_000_000_000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parts := g.MinCostFlow(&FlowQuery{Source: 0, Target: 3, Amount: tc.amount,
				MaxParts: tc.maxParts, Cost: linearCost, Units: 100})
			got := map[uint64]lnwire.MilliSatoshi{}
			for _, p := range parts {
				if p.Edges[0].From != 0 || p.Edges[len(p.Edges)-1].To != 3 {
					t.Fatal("a part does not run from source to target")
				}
				got[p.Edges[0].ChannelID] += p.Amount
			}
			if len(got) != len(tc.want) {
				t.Fatalf("parts %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if d := float64(got[k]) - float64(v); math.Abs(d) > float64(tc.amount)/100 {
					t.Fatalf("parts %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestBeliefs(t *testing.T) {
	g := NewGraph(diamond())
	e := g.EdgeInto(3, 2) // 1 → 3, capacity 1M sat
	now := time.Unix(1_700_000_000, 0)
	const c = 1_000_000_000.0
	tests := []struct {
		name  string
		learn func(b *Beliefs)
		at    time.Duration // how long after learning
		amt   float64
		want  float64 // probability, ±0.01
	}{
		{"nothing learnt, nothing asked", func(*Beliefs) {}, 0, 0, 1},
		{"over capacity", func(*Beliefs) {}, 0, c + 1, 0},
		{"carried", func(b *Beliefs) { b.Carried(e, 0.6*c, now) }, 0, 0.6 * c, 1},
		{"failed", func(b *Beliefs) { b.Failed(e, 0.3*c, 1, now) }, 0, 0.3 * c, 0},
		{"both ways", func(b *Beliefs) {
			b.Carried(e, 0.2*c, now)
			b.Failed(e, 0.4*c, 1, now)
		}, 0, 0.2 * c, 1},
		{"settled moves it", func(b *Beliefs) {
			b.Carried(e, 0.6*c, now)
			b.Settled(e, 0.5*c, now)
		}, 0, 0.2 * c, 0.5},
		{"forgotten", func(b *Beliefs) { b.Failed(e, 0.3*c, 1, now) }, 100 * time.Hour, 0.3 * c,
			testPrior.CDF(0.7*c, c)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBeliefs(testPrior, time.Hour)
			tc.learn(b)
			got := b.Prob(e, tc.amt, now.Add(tc.at))
			if tc.name == "settled moves it" {
				// Only that it fell below certainty: the shift lowered the bound.
				if got >= 1 {
					t.Fatalf("prob %.3f, want < 1 after the balance moved", got)
				}
				return
			}
			if math.Abs(got-tc.want) > 0.01 {
				t.Fatalf("prob %.3f, want %.3f", got, tc.want)
			}
		})
	}
}
