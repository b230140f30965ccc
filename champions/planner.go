package main

// Joint route-set planning, on the routekit toolkit (go/routekit).
//
// Instead of sending a shard, waiting and halving on failure, the router
// plans each round's whole rest at once: a min-cost flow over what it
// believes of every channel, the cost of a channel being −ln of the chance
// that it carries the flow put on it (linearised in pieces, so parts share
// a corridor only as far as it can bear them) plus the fees. The flow is
// split into at most MaxParts routes, each sized to what its corridor
// carries, and handed out in one round; after the round the beliefs hold
// what the failures taught and the rest is planned again. This suits the
// atomic MPP arena, where the receiver holds arrived parts and every round
// that fails costs attempts while the network moves under the plan.
//
// Learning is routekit's (balance intervals per channel, the bimodal prior
// mixed with a uniform share, forgetting with virtual time, soft blame once
// attribution proves unreliable). When the flow finds nothing, a single
// most likely route for the rest, or a halving of it, is tried instead.
//
// Marked knobs ("evolve:tunable", "evolve:choice") are the offline
// proposer's to turn.

import (
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routekit"
	"github.com/routesim-evolve/routesim/routing"
)

// What the router assumes and how long it remembers: the prior's bimodal
// scale and uniform share, the half-lives of what it learnt and of the sure
// bounds that stop a payment, the share of failures assumed blamed one hop
// off once attribution proved degraded, the cltv padding, and the cost of
// the single route tried when the flow finds none.
const (
	bimodalSat   = 300_000.0 // evolve:tunable [30_000, 3_000_000] success
	uniformPart  = 0.2       // evolve:tunable [0.01, 0.8] success
	halfLifeMin  = 600.0     // evolve:tunable [5, 1440] success
	sureHalfMin  = 600.0     // evolve:tunable [5, 1440] success
	unreliable   = 0.1       // evolve:tunable [0.01, 0.4] success
	lockCushion  = 3
	fallbackCost = "prob" // evolve:choice prob|fee success
)

// How a round is planned.
const (
	// planPieces is how many linear pieces approximate each channel's
	// −ln P between what it surely carries and what it may.
	planPieces = 5 // evolve:tunable [1, 12] success

	// planUnits is the flow's resolution: the rest in this many units.
	planUnits = 100 // evolve:tunable [20, 400] success

	// feeLambda weighs fees against −ln P: a fee of 1000 ppm of the
	// payment costs as much as feeLambda of −ln P.
	feeLambda = 0.2 // evolve:tunable [0, 2] fee

	// partsShare is the share of MaxParts a plan may use: fewer, larger
	// parts leave room for a second round.
	partsShare = 1.0 // evolve:tunable [0.25, 1] retry

	// hopLambda is the cost of a channel per share of the payment it
	// carries: longer routes fail more often than their −ln P says.
	hopLambda = 0.2 // evolve:tunable [0, 0.5] retry

	// smallestPartSat is the smallest shard the fallback halves down to.
	smallestPartSat = 1_000 // evolve:tunable [100, 100_000] retry

	// planWhen: "always" plans every round with the flow; "atomic" only
	// in the atomic MPP arena, and probes with the whole rest elsewhere.
	planWhen = "always" // evolve:choice always|atomic success
)

// know lives for one scenario: the graph and what the router learnt.
var know = routekit.NewMemory(routekit.NewBeliefs(
	routekit.Prior{BimodalScale: bimodalSat * 1000, UniformShare: uniformPart},
	time.Duration(halfLifeMin*float64(time.Minute))))

func newCandidateRouter(view routing.SimNetworkView, source route.Vertex,
	localBalances map[uint64]lnwire.MilliSatoshi,
	spec *routing.SimPaymentSpec) (routing.SimRouter, error) {

	pay, err := know.Begin(view, source, localBalances, spec)
	return &planRouter{Payment: pay}, err
}

// planRouter plays one payment, a planned round at a time.
type planRouter struct {
	*routekit.Payment
	plan []*routekit.Path // routes of this round not yet handed out
}

// RequestRoute hands out the round's plan, made when a round opens.
func (r *planRouter) RequestRoute(amt lnwire.MilliSatoshi, inFlight uint32) (*route.Route, error) {
	r.Request(inFlight)
	if inFlight == 0 {
		if !r.CanComplete(amt, time.Duration(sureHalfMin*float64(time.Minute))) {
			return nil, routekit.ErrNoRoute
		}
		r.plan = r.planRound(amt)
	}
	for len(r.plan) > 0 {
		next := r.plan[0]
		r.plan = r.plan[1:]
		if next.Amount > amt {
			continue // an earlier part delivered more than planned
		}
		if rt := r.Route(next, lockCushion); rt != nil {
			r.Dispatch(rt)
			return rt, nil
		}
	}
	return nil, routekit.ErrNoRoute
}

// planRound is the routes for the rest amt: the min-cost flow's parts, or
// the fallback's single route when the flow finds none.
func (r *planRouter) planRound(amt lnwire.MilliSatoshi) []*routekit.Path {
	if planWhen == "atomic" && !r.Spec.Atomic && r.Rounds == 1 {
		if whole := r.single(amt); whole != nil {
			return []*routekit.Path{whole}
		}
	}
	parts := max(1, int(float64(r.Spec.MaxParts)*partsShare))
	plan := r.PlanFlow(amt, parts, routekit.FlowCost{
		Pieces: planPieces, Units: planUnits, FeeWeight: feeLambda, HopWeight: hopLambda})
	if len(plan) == 0 {
		least := min(amt, smallestPartSat*1000)
		for shard := amt; shard >= least && len(plan) == 0; shard /= 2 {
			if f := r.single(shard); f != nil {
				plan = append(plan, f)
			}
		}
	}
	return plan
}

// single is the best single route for shard, nil when it is too unlikely.
func (r *planRouter) single(shard lnwire.MilliSatoshi) *routekit.Path {
	cost := r.ProbCost(shard, feeLambda, 0.01)
	if fallbackCost == "fee" {
		cost = r.ProbCost(shard, 10*feeLambda, 0.01)
	}
	f := know.Shortest(r.Query(shard, lockCushion, cost))
	if f == nil || f.Prob < 0.0001 {
		return nil
	}
	return f
}

// ReportAttempt books the outcome and learns from a failure; blame is
// taken at its word until an unreadable failure is seen.
func (r *planRouter) ReportAttempt(_ uint64, rt *route.Route, res *routing.SimAttemptResult) error {
	r.Returned(rt, res)
	if res.Failure != nil {
		r.LearnFailure(rt, res, routekit.Attribution{
			Trusted: know.Unreadable == 0, ShiftShare: unreliable})
	}
	return nil
}
