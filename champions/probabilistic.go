package main

// A probability-aware router with channel-level mission control, on the
// routekit toolkit (go/routekit: graph, search, flows, beliefs).
//
// What it does, and why:
//
//   - It keeps, for every remote channel, an interval on the balance of the
//     channel's node 1, learnt from every attempt of every payment; the two
//     directions share it. Its own shards move it (settled) or lock part of
//     it (in flight, or held by an atomic receiver).
//   - The success probability of a hop is the prior (lnd's bimodal model
//     mixed with a uniform share) conditioned on that interval. Routes are
//     found by Dijkstra over −ln P + fee weight: delivery leads the score.
//   - Knowledge fades with virtual time, as background traffic moves
//     balances.
//   - Failure blame is soft once unreadable failures reveal degraded
//     attribution: spread over the neighbours of the blamed position,
//     weighted by how likely each hop was to fail.
//   - A payment stops once the max flow under what the router knows for
//     sure cannot carry the rest.
//   - The shard size is chosen among the whole rest and its halvings by the
//     probability of the best route for each size.
//
// The offline proposer may move every number marked "evolve:tunable" and
// switch every string marked "evolve:choice".

import (
	"math"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routekit"
	"github.com/routesim-evolve/routesim/routing"
)

// The cost of a shard's route: −ln P + feeWeight·(fee in units of 1000
// ppm), plus routekit's hop penalty; routes below routekit's least
// probability are not tried.
const feeWeight = 0.3 // evolve:tunable [0, 2] fee

// Splitting.
const (
	// acceptProb: a shard of the whole rest is sent when its best route
	// is at least this likely.
	acceptProb = 0.5 // evolve:tunable [0.05, 0.95] retry

	// sizeExponent weighs shard size against route probability when
	// splitting: the shard maximising P·(size/rest)^sizeExponent wins.
	sizeExponent = 0.6 // evolve:tunable [0, 1.5] success

	// fullAmountRounds: without atomic MPP, the first rounds send the
	// whole rest as one shard.
	fullAmountRounds = 1 // evolve:tunable [0, 10] success

	// minShardSat is the smallest shard the router splits down to.
	minShardSat = 5_000 // evolve:tunable [1_000, 100_000] success

	// splitRule: "expected" picks the size by P·size^e, "halving" takes the
	// largest size whose route reaches acceptProb (lnd-like).
	splitRule = "expected" // evolve:choice expected|halving success

	// expectedFlowFactor: without atomic MPP a payment stops when the rest
	// exceeds this multiple of the max flow under expected capacities
	// (0: never).
	expectedFlowFactor = 0.0 // evolve:tunable [0, 4] success
)

// memory lives for one scenario: the graph and what the router learnt,
// under routekit's default settings (prior, half-lives, attribution,
// padding).
var memory = routekit.NewMemoryWith(routekit.DefaultSettings())

// newCandidateRouter is the contract every candidate implements.
func newCandidateRouter(view routing.SimNetworkView, source route.Vertex,
	localBalances map[uint64]lnwire.MilliSatoshi,
	spec *routing.SimPaymentSpec) (routing.SimRouter, error) {

	p, err := memory.Begin(view, source, localBalances, spec)
	if err != nil {
		return nil, err
	}
	return &probRouter{p}, nil
}

// probRouter plays one payment. Its ReportAttempt is routekit's: failure
// positions are trusted until an unreadable failure is seen, then blame is
// spread over the neighbours of the blamed position.
type probRouter struct {
	*routekit.Payment
}

// RequestRoute picks a shard size and the most likely route for it.
func (r *probRouter) RequestRoute(amt lnwire.MilliSatoshi, inFlight uint32) (*route.Route, error) {
	r.Request(inFlight)
	switch {
	case !r.CanComplete(amt, r.Settings.SureHalfLife):
		return r.Send(r.LastTry(amt, feeWeight))
	case !r.feasible(amt):
		return nil, routekit.ErrNoRoute
	}
	return r.Send(r.WholeFirst(fullAmountRounds, func(whole bool) *routekit.Path {
		return r.bestShard(amt, whole)
	}))
}

// feasible reports whether a rest that fits the max flow under what the
// router knows for sure is worth going on with: the payment is likely enough
// to complete to start, and, optionally without atomic MPP, it fits a
// multiple of the max flow under expected capacities.
func (r *probRouter) feasible(amt lnwire.MilliSatoshi) bool {
	if !r.WorthStarting(amt) {
		return false
	}
	if r.Spec.Atomic || expectedFlowFactor <= 0 {
		return true
	}
	return float64(amt+r.InFlight) <= r.ExpectedBound()*expectedFlowFactor
}

// bestShard searches a route for each shard size worth trying (only the
// whole rest when whole is set) and picks one by sizeScore.
func (r *probRouter) bestShard(amt lnwire.MilliSatoshi, whole bool) *routekit.Path {
	var best *routekit.Path
	bestScore := -1.0
	for _, size := range r.shardSizes(amt, whole) {
		f := r.Best(size, feeWeight)
		if f == nil {
			continue
		}
		if size == amt && f.Prob >= acceptProb {
			return f
		}
		if score := sizeScore(f, amt); score > bestScore {
			best, bestScore = f, score
		}
	}
	return best
}

// shardSizes are the sizes worth trying: the whole rest, then halvings down
// to the smallest shard while the shard cap allows a split.
func (r *probRouter) shardSizes(amt lnwire.MilliSatoshi, whole bool) []lnwire.MilliSatoshi {
	if r.Spec.MaxParts <= 1 || whole {
		return []lnwire.MilliSatoshi{amt}
	}
	return routekit.Halvings(amt, minShardSat*1000)
}

// sizeScore rates a candidate shard against the rest to send.
func sizeScore(f *routekit.Path, amt lnwire.MilliSatoshi) float64 {
	frac := float64(f.Amount) / float64(amt)
	if splitRule == "halving" {
		// The largest size that reaches acceptProb; below it, the likeliest.
		if f.Prob >= acceptProb {
			return 2 + frac
		}
		return f.Prob
	}
	return f.Prob * math.Pow(frac, sizeExponent)
}
