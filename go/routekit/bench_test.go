package routekit

import (
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/routesim-evolve/routesim/routing"
)

// benchAmount is the payment of the benchmarks: 0.5 BTC.
const benchAmount = lnwire.MilliSatoshi(50_000_000_000)

var (
	benchOnce sync.Once
	benchView *fakeView
)

// benchSenderRank is the sender's rank by total capacity.
const benchSenderRank = 200

// benchPayment is a 0.5 BTC payment on the 2021 mainnet graph from a node
// of middling size to the largest node it has no channel with, the sender
// holding all of each of its channels; it skips where the data is absent.
func benchPayment(b *testing.B) *Payment {
	benchOnce.Do(func() { benchView = realGraph(b) })
	if benchView == nil {
		b.Skip("the 2021 mainnet graph is absent")
	}
	g := NewGraph(benchView)
	total := make([]int64, g.NumNodes())
	for v := range g.in {
		for _, e := range g.in[v] {
			total[v] += int64(e.Capacity)
		}
	}
	order := make([]int, len(total))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return total[order[i]] > total[order[j]] })
	// A sender of middling size and the largest node it has no channel
	// with: a payment that must cross the network.
	src, dst := NodeID(order[benchSenderRank]), NodeID(-1)
	adjacent := map[NodeID]bool{}
	for _, e := range g.in[src] {
		adjacent[e.From] = true
	}
	for _, v := range order {
		if NodeID(v) != src && !adjacent[NodeID(v)] {
			dst = NodeID(v)
			break
		}
	}
	local := map[uint64]lnwire.MilliSatoshi{}
	for v := range g.in {
		for _, e := range g.in[v] {
			if e.From == src {
				local[e.ChannelID] = e.Capacity
			}
		}
	}
	spec := &routing.SimPaymentSpec{Target: g.Vertex(dst), Amount: benchAmount,
		FeeLimit: benchAmount / 100, MaxParts: 16, MaxAttempts: 100, FinalCLTVDelta: 40,
		CltvLimit: 800_000 + 2016}
	p, err := NewPayment(g, NewBeliefs(testPrior, 0), benchView, g.Vertex(src), local, spec)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkShortest(b *testing.B) {
	p := benchPayment(b)
	s := NewSearcher(p.Graph)
	// 2021 channels forward at most 2^32 msat (4.29M sat) per HTLC.
	for _, amt := range []lnwire.MilliSatoshi{benchAmount / 50, 4_000_000_000} {
		b.Run(amt.ToSatoshis().String(), func(b *testing.B) {
			q := p.Query(amt, 3, p.ProbCost(amt, 0.1, 0.01)) // the champions' cost
			for i := 0; i < b.N; i++ {
				if s.Shortest(q) == nil {
					b.Fatal("no path")
				}
			}
		})
	}
}

func BenchmarkMaxFlow(b *testing.B) {
	p := benchPayment(b)
	for i := 0; i < b.N; i++ {
		if p.UpperBound(0) < float64(benchAmount) {
			b.Fatal("the benchmark payment does not fit the max flow")
		}
	}
}

func BenchmarkMinCostFlow(b *testing.B) {
	p := benchPayment(b)
	feeSlope := func(e *Edge) float64 {
		if e.From == p.Source || e.Policy == nil {
			return 0
		}
		return 0.1 * 1000 * float64(e.Policy.FeeProportionalMillionths) / 1e6 / float64(benchAmount)
	}
	q := &FlowQuery{Source: p.Source, Target: p.Target, Amount: benchAmount,
		MaxParts: int(p.Spec.MaxParts), Units: 100,
		Cost: func(e *Edge) []Piece { return p.Pieces(e, 5, feeSlope(e)) }}
	var parts []FlowPart
	for i := 0; i < b.N; i++ {
		parts = p.Graph.MinCostFlow(q)
	}
	sum := lnwire.MilliSatoshi(0)
	for _, part := range parts {
		sum += part.Amount
	}
	hops := 0
	for _, part := range parts {
		hops = max(hops, len(part.Edges))
	}
	b.ReportMetric(float64(hops), "max-hops")
	b.ReportMetric(float64(len(parts)), "parts")
	b.ReportMetric(float64(sum)/float64(benchAmount), "share")
}

// BenchmarkLikelyFeasible draws worlds for the 0.5 BTC payment: at
// StartProb 0.2, and at prob 1, which draws all feasibleSamples worlds
// unless one fails.
func BenchmarkLikelyFeasible(b *testing.B) {
	p := benchPayment(b)
	for _, prob := range []float64{0.2, 1} {
		b.Run(strconv.FormatFloat(prob, 'g', -1, 64), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				p.LikelyFeasible(benchAmount, prob)
			}
		})
	}
}
