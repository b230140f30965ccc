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

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routekit"
	"github.com/routesim-evolve/routesim/routing"
)

// costFee prices a shard's route: −ln P + costFee·(fee per 1000 ppm), plus
// routekit's hop penalty; routes below routekit's least probability are
// not tried.
const costFee = 0.3 // evolve:tunable [0, 2] fee

// Sizing a shard.
const (
	// targetProb: a shard is the largest amount whose best route is at
	// least this likely.
	targetProb = 0.3 // evolve:tunable [0.05, 0.95] success

	// bisectSteps is how many searches refine the shard size.
	bisectSteps = 7 // evolve:tunable [2, 14] retry

	// sizeExponent: when no size reaches targetProb, the whole rest and
	// the smallest shard are weighed by P·(size/rest)^sizeExponent.
	sizeExponent = 0.6 // evolve:tunable [0, 1.5] success

	// smallestShardSat is the smallest shard tried.
	smallestShardSat = 5_000 // evolve:tunable [1_000, 100_000] success
)

// wholeRounds: without atomic MPP, the first rounds send the whole rest as
// one shard (a bottleneck shows before anything is spent).
const wholeRounds = 1 // evolve:tunable [0, 10] success

// mem lives for one scenario: the graph and what the router learnt, under
// routekit's default settings (prior, half-lives, attribution, padding).
var mem = routekit.NewMemoryWith(routekit.DefaultSettings())

func newCandidateRouter(view routing.SimNetworkView, source route.Vertex,
	localBalances map[uint64]lnwire.MilliSatoshi,
	spec *routing.SimPaymentSpec) (routing.SimRouter, error) {

	payment, err := mem.Begin(view, source, localBalances, spec)
	return &targetRouter{payment}, err
}

// targetRouter plays one payment. Its ReportAttempt is routekit's: blame
// is taken at its word until an unreadable failure is seen.
type targetRouter struct {
	*routekit.Payment
}

// RequestRoute sends the largest shard likely enough to pass, unless the
// rest no longer fits what the network can surely carry or the payment is
// too unlikely to complete to start.
func (t *targetRouter) RequestRoute(amt lnwire.MilliSatoshi, inFlight uint32) (*route.Route, error) {
	t.Request(inFlight)
	switch {
	case !t.CanComplete(amt, t.Settings.SureHalfLife):
		return t.Send(t.LastTry(amt, costFee))
	case !t.WorthStarting(amt):
		return nil, routekit.ErrNoRoute
	}
	return t.Send(t.WholeFirst(wholeRounds, func(whole bool) *routekit.Path {
		return t.shard(amt, whole)
	}))
}

// shard is the route of the next shard: the whole rest when splitting is
// not allowed (or not yet wanted) or likely enough, else the largest shard
// whose best route reaches targetProb.
func (t *targetRouter) shard(amt lnwire.MilliSatoshi, whole bool) *routekit.Path {
	rest := t.Best(amt, costFee)
	if whole || t.Spec.MaxParts <= 1 || (rest != nil && rest.Prob >= targetProb) {
		return rest
	}
	lo := min(lnwire.MilliSatoshi(smallestShardSat*1000), amt)
	small := t.Best(lo, costFee)
	if small == nil || small.Prob < targetProb {
		return likelier(rest, small, amt)
	}
	// Bisect [lo, amt) on a log scale for the largest shard whose best
	// route still reaches targetProb.
	found, hi := small, amt
	for i := 0; i < bisectSteps && hi > lo+lo/16; i++ {
		mid := lnwire.MilliSatoshi(math.Sqrt(float64(lo) * float64(hi)))
		if f := t.Best(mid, costFee); f != nil && f.Prob >= targetProb {
			lo, found = mid, f
		} else {
			hi = mid
		}
	}
	return found
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
