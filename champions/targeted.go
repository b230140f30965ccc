package main

// A router that sizes each shard to a target probability, on the routekit
// toolkit (go/routekit), with channel-level mission control.
//
// Learning is routekit's: one balance interval per channel, shared by both
// directions, learnt across payments, conditioned on lnd's bimodal prior
// mixed with a uniform share, fading with virtual time; its own shards move
// or lock it; blame softens once unreadable failures betray degraded
// attribution. What this file decides is the shard: instead of the rest and
// its halvings, it sends the largest amount whose best route (Dijkstra over
// −ln P + fee weight) is still at least targetProb likely, found by
// bisection on a log scale. A shard is as large as the network is likely to
// carry, neither a blind half nor a fixed fraction.
//
// Knobs: "evolve:tunable" numbers, "evolve:choice" strategy switches.

import (
	"math"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routekit"
	"github.com/routesim-evolve/routesim/routing"
)

const (
	// priorScaleSat is s of lnd's bimodal prior e^(-x/s) + e^((x-c)/s);
	// priorUniform the weight of a uniform balance mixed into it.
	priorScaleSat = 300_000.0 // evolve:tunable [30_000, 3_000_000] success
	priorUniform  = 0.2       // evolve:tunable [0.01, 0.8] success

	// Route cost: −ln P + costFee·(fee per 1000 ppm) + costHop per hop.
	costFee = 0.3  // evolve:tunable [0, 2] fee
	costHop = 0.01 // evolve:tunable [0, 0.5] retry

	// forgetMin is the half-life of what was learnt, sureMin that of the
	// sure bounds deciding whether a payment can still complete; forget
	// turns both off.
	forgetMin = 600.0    // evolve:tunable [5, 1440] success
	sureMin   = 600.0    // evolve:tunable [5, 1440] success
	forget    = "always" // evolve:choice always|never success
)

const (
	// targetProb: a shard is the largest amount whose best route is at
	// least this likely.
	targetProb = 0.3 // evolve:tunable [0.05, 0.95] success

	// bisectSteps is how many searches refine the shard size.
	bisectSteps = 7 // evolve:tunable [2, 14] retry

	// sizeExponent: when no size reaches targetProb, the whole rest and
	// the smallest shard are weighed by P·(size/rest)^sizeExponent.
	sizeExponent = 0.6 // evolve:tunable [0, 1.5] success

	// wholeRounds: without atomic MPP, the first rounds send the whole
	// rest as one shard (a bottleneck shows before anything is spent).
	wholeRounds = 1 // evolve:tunable [0, 10] success

	// smallestShardSat is the smallest shard tried.
	smallestShardSat = 5_000 // evolve:tunable [1_000, 100_000] success

	// leastProb: routes less likely than this are not tried.
	leastProb = 0.0001 // evolve:tunable [0.000001, 0.05] success
)

const (
	// offByOne is the assumed share of failures blamed one hop off, in
	// each direction, once positions are not trusted.
	offByOne = 0.1 // evolve:tunable [0.01, 0.4] success

	// trustRule: "adaptive" trusts failure positions until an unreadable
	// failure is seen, "soft" never fully, "hard" always.
	trustRule = "adaptive" // evolve:choice adaptive|soft|hard success

	// lockPadding is added to the final cltv delta against a block mined
	// while the shard is in flight.
	lockPadding = 3
)

// mem lives for one scenario: the graph and what the router learnt.
var mem = routekit.NewMemory(routekit.NewBeliefs(
	routekit.Prior{BimodalScale: priorScaleSat * 1000, UniformShare: priorUniform},
	minutes(forgetMin)))

// minutes is a half-life as a duration, 0 when forgetting is off.
func minutes(m float64) time.Duration {
	if forget == "never" {
		return 0
	}
	return time.Duration(m * float64(time.Minute))
}

func newCandidateRouter(view routing.SimNetworkView, source route.Vertex,
	localBalances map[uint64]lnwire.MilliSatoshi,
	spec *routing.SimPaymentSpec) (routing.SimRouter, error) {

	payment, err := mem.Begin(view, source, localBalances, spec)
	return &targetRouter{payment}, err
}

// targetRouter plays one payment.
type targetRouter struct {
	*routekit.Payment
}

// RequestRoute sends the largest shard likely enough to pass, unless the
// rest no longer fits what the network can surely carry.
func (t *targetRouter) RequestRoute(amt lnwire.MilliSatoshi, inFlight uint32) (*route.Route, error) {
	t.Request(inFlight)
	if !t.CanComplete(amt, minutes(sureMin)) {
		return nil, routekit.ErrNoRoute
	}
	whole := !t.Spec.Atomic && t.Rounds <= wholeRounds
	shard := t.shard(amt, whole)
	if shard == nil && whole {
		shard = t.shard(amt, false) // no single route carries it all
	}
	var rt *route.Route
	if shard != nil {
		rt = t.Route(shard, lockPadding)
	}
	if rt == nil {
		return nil, routekit.ErrNoRoute
	}
	t.Dispatch(rt)
	return rt, nil
}

// shard is the route of the next shard: the whole rest when splitting is
// not allowed (or not yet wanted) or likely enough, else the largest shard
// whose best route reaches targetProb.
func (t *targetRouter) shard(amt lnwire.MilliSatoshi, whole bool) *routekit.Path {
	rest := t.best(amt)
	if whole || t.Spec.MaxParts <= 1 || (rest != nil && rest.Prob >= targetProb) {
		return rest
	}
	lo := min(lnwire.MilliSatoshi(smallestShardSat*1000), amt)
	small := t.best(lo)
	if small == nil || small.Prob < targetProb {
		return likelier(rest, small, amt)
	}
	// Bisect [lo, amt) on a log scale for the largest shard whose best
	// route still reaches targetProb.
	found, hi := small, amt
	for i := 0; i < bisectSteps && hi > lo+lo/16; i++ {
		mid := lnwire.MilliSatoshi(math.Sqrt(float64(lo) * float64(hi)))
		if f := t.best(mid); f != nil && f.Prob >= targetProb {
			lo, found = mid, f
		} else {
			hi = mid
		}
	}
	return found
}

// best is the least-cost route for a shard, nil when none is likely enough.
func (t *targetRouter) best(shard lnwire.MilliSatoshi) *routekit.Path {
	f := mem.Shortest(t.Query(shard, lockPadding, t.ProbCost(shard, costFee, costHop)))
	if f == nil || f.Prob < leastProb {
		return nil
	}
	return f
}

// likelier picks between two routes for shards of the rest amt by
// P·(size/rest)^sizeExponent; either may be nil.
func likelier(a, b *routekit.Path, amt lnwire.MilliSatoshi) *routekit.Path {
	score := func(f *routekit.Path) float64 {
		if f == nil {
			return -1
		}
		return f.Prob * math.Pow(float64(f.Amount)/float64(amt), sizeExponent)
	}
	if score(a) >= score(b) {
		return a
	}
	return b
}

// ReportAttempt books the outcome and learns from a failure.
func (t *targetRouter) ReportAttempt(_ uint64, rt *route.Route, res *routing.SimAttemptResult) error {
	t.Returned(rt, res)
	if res.Failure == nil {
		return nil
	}
	trusted := trustRule == "hard" || (trustRule == "adaptive" && mem.Unreadable == 0)
	t.LearnFailure(rt, res, routekit.Attribution{Trusted: trusted, ShiftShare: offByOne})
	return nil
}
