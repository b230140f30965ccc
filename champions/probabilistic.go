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
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routekit"
	"github.com/routesim-evolve/routesim/routing"
)

// The prior over hidden balances.
const (
	// bimodalScaleSat is s of the bimodal prior e^(-x/s) + e^((x-c)/s).
	bimodalScaleSat = 300_000.0 // evolve:tunable [30_000, 3_000_000] success

	// uniformShare is the prior weight of a uniform balance.
	uniformShare = 0.2 // evolve:tunable [0.01, 0.8] success
)

// The cost of a route: −ln P + feeWeight·(fee in units of 1000 ppm) +
// hopPenalty per hop.
const (
	feeWeight = 0.3 // evolve:tunable [0, 2] fee

	hopPenalty = 0.01 // evolve:tunable [0, 0.5] retry
)

// Forgetting: what the router learnt relaxes toward the prior with virtual
// time, as background traffic moves balances.
const (
	memoryHalfLifeMin = 600.0 // evolve:tunable [5, 1440] success

	// boundHalfLifeMin is the half-life of the sure bounds that decide
	// whether a payment can still complete at all.
	boundHalfLifeMin = 600.0 // evolve:tunable [5, 1440] success

	decayMode = "always" // evolve:choice always|never success
)

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

	// minRouteProb: routes less likely than this are not tried.
	minRouteProb = 0.0001 // evolve:tunable [0.000001, 0.05] success
)

// Degraded attribution.
const (
	// shiftShare is the assumed share of failures blamed one hop off, in
	// each direction, once degraded attribution was seen.
	shiftShare = 0.1 // evolve:tunable [0.01, 0.4] success

	// blameMode: "adaptive" trusts reports until an unreadable failure is
	// seen, "soft" never trusts them fully, "hard" always does.
	blameMode = "adaptive" // evolve:choice adaptive|soft|hard success
)

// finalCltvPadding is added to the final cltv delta, so a block mined while
// the shard is in flight does not fail it.
const finalCltvPadding = 3

// memory lives for one scenario: the graph and what the router learnt.
var memory = routekit.NewMemory(routekit.NewBeliefs(
	routekit.Prior{BimodalScale: bimodalScaleSat * 1000, UniformShare: uniformShare},
	halfLife(memoryHalfLifeMin)))

// halfLife is a half-life in minutes as a duration; 0 (never forget) when
// decay is off.
func halfLife(minutes float64) time.Duration {
	if decayMode == "never" {
		return 0
	}
	return time.Duration(minutes * float64(time.Minute))
}

// newCandidateRouter is the contract every candidate implements.
func newCandidateRouter(view routing.SimNetworkView, source route.Vertex,
	localBalances map[uint64]lnwire.MilliSatoshi,
	spec *routing.SimPaymentSpec) (routing.SimRouter, error) {

	p, err := memory.Begin(view, source, localBalances, spec)
	if err != nil {
		return nil, err
	}
	return &probRouter{p: p}, nil
}

// probRouter plays one payment.
type probRouter struct {
	p *routekit.Payment
}

// RequestRoute picks a shard size and the most likely route for it.
func (r *probRouter) RequestRoute(amt lnwire.MilliSatoshi, inFlight uint32) (*route.Route, error) {
	p := r.p
	p.Request(inFlight)
	if !r.feasible(amt) {
		return nil, routekit.ErrNoRoute
	}
	probing := !p.Spec.Atomic && p.Rounds <= fullAmountRounds
	best := r.bestShard(amt, probing)
	if best == nil && probing {
		// No single route carries the whole rest: split at once.
		best = r.bestShard(amt, false)
	}
	if best == nil {
		return nil, routekit.ErrNoRoute
	}
	rt := p.Route(best, finalCltvPadding)
	if rt == nil {
		return nil, routekit.ErrNoRoute
	}
	p.Dispatch(rt)
	return rt, nil
}

// feasible reports whether the rest can still complete: it fits the max flow
// under what the router knows for sure (so a payment it stops could hardly
// have completed) and, optionally without atomic MPP, a multiple of the max
// flow under expected capacities.
func (r *probRouter) feasible(amt lnwire.MilliSatoshi) bool {
	p := r.p
	if !p.CanComplete(amt, halfLife(boundHalfLifeMin)) {
		return false
	}
	if p.Spec.Atomic || expectedFlowFactor <= 0 {
		return true
	}
	return float64(amt+p.InFlight) <= p.ExpectedBound()*expectedFlowFactor
}

// search is the least-cost route for a shard, or nil when none is likely
// enough.
func (r *probRouter) search(shard lnwire.MilliSatoshi) *routekit.Path {
	q := r.p.Query(shard, finalCltvPadding, r.p.ProbCost(shard, feeWeight, hopPenalty))
	f := memory.Shortest(q)
	if f == nil || f.Prob < minRouteProb {
		return nil
	}
	return f
}

// bestShard searches a route for each shard size worth trying (only the
// whole rest when whole is set) and picks one by sizeScore.
func (r *probRouter) bestShard(amt lnwire.MilliSatoshi, whole bool) *routekit.Path {
	var best *routekit.Path
	bestScore := -1.0
	for _, size := range r.shardSizes(amt, whole) {
		f := r.search(size)
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
	sizes := []lnwire.MilliSatoshi{amt}
	if r.p.Spec.MaxParts <= 1 || whole {
		return sizes
	}
	minShard := lnwire.MilliSatoshi(minShardSat * 1000)
	for s := amt / 2; s >= minShard; s /= 2 {
		sizes = append(sizes, s)
	}
	return sizes
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

// ReportAttempt learns from a shard's outcome and frees what it booked.
func (r *probRouter) ReportAttempt(_ uint64, rt *route.Route, res *routing.SimAttemptResult) error {
	r.p.Returned(rt, res)
	if res.Failure != nil {
		r.p.LearnFailure(rt, res, attribution())
	}
	return nil
}

// attribution is how far failure positions are trusted now.
func attribution() routekit.Attribution {
	trusted := memory.Unreadable == 0
	switch blameMode {
	case "hard":
		trusted = true
	case "soft":
		trusted = false
	}
	return routekit.Attribution{Trusted: trusted, ShiftShare: shiftShare}
}
