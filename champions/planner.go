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
	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routekit"
	"github.com/routesim-evolve/routesim/routing"
)

// The cost of a round's min-cost flow (routekit.FlowCost).
const (
	// planPieces is how many linear pieces approximate each channel's
	// −ln P between what it surely carries and what it may.
	planPieces = 5 // evolve:tunable [1, 12] success

	// planUnits is the flow's resolution: the rest in this many units.
	planUnits = 100 // evolve:tunable [20, 400] success

	// feeLambda weighs fees against −ln P: a fee of 1000 ppm of the
	// payment costs as much as feeLambda of −ln P.
	feeLambda = 0.2 // evolve:tunable [0, 2] fee

	// hopLambda is the cost of a channel per share of the payment it
	// carries: longer routes fail more often than their −ln P says.
	hopLambda = 0.2 // evolve:tunable [0, 0.5] retry
)

// How a round uses the flow.
const (
	// partsShare is the share of MaxParts a plan may use: fewer, larger
	// parts leave room for a second round.
	partsShare = 1.0 // evolve:tunable [0.25, 1] retry

	// keptRounds spreads the attempts left: a round uses at most the
	// attempts left over keptRounds, so that failed rounds do not spend
	// the last attempts on a payment that one more round would finish.
	keptRounds = 3.0 // evolve:tunable [1, 8] retry

	// planWhen: "always" plans every round with the flow; "atomic" only
	// in the atomic MPP arena, and probes with the whole rest elsewhere.
	planWhen = "always" // evolve:choice always|atomic success
)

// The single route tried when the flow finds none.
const (
	// smallestPartSat is the smallest shard the fallback halves down to.
	smallestPartSat = 1_000 // evolve:tunable [100, 100_000] retry

	// fallbackCost prices it by −ln P ("prob") or with ten times the fee
	// weight ("fee").
	fallbackCost = "prob" // evolve:choice prob|fee success
)

// know lives for one scenario: the graph and what the router learnt, under
// routekit's default settings (prior, half-lives, attribution, padding).
var know = routekit.NewMemoryWith(routekit.DefaultSettings())

// newCandidateRouter plays each payment a planned round at a time
// (planRound); it learns from failures as routekit's Payment does, taking
// blame at its word until an unreadable failure is seen.
func newCandidateRouter(view routing.SimNetworkView, source route.Vertex,
	localBalances map[uint64]lnwire.MilliSatoshi,
	spec *routing.SimPaymentSpec) (routing.SimRouter, error) {

	pay, err := know.Begin(view, source, localBalances, spec)
	return &routekit.Planner{Payment: pay, Plan: planRound, LastTryFeeWeight: feeLambda}, err
}

// planRound is the routes for the rest amt: the min-cost flow's parts, or
// the fallback's single route when the flow finds none.
func planRound(p *routekit.Payment, amt lnwire.MilliSatoshi) []*routekit.Path {
	if planWhen == "atomic" && !p.Spec.Atomic && p.Rounds == 1 {
		if whole := p.FirstBest([]lnwire.MilliSatoshi{amt}, fallbackFee()); whole != nil {
			return whole
		}
	}
	plan := p.PlanFlow(amt, p.RoundParts(partsShare, keptRounds), routekit.FlowCost{
		Pieces: planPieces, Units: planUnits, FeeWeight: feeLambda, HopWeight: hopLambda})
	if len(plan) > 0 {
		return plan
	}
	return p.FirstBest(routekit.Halvings(amt, smallestPartSat*1000), fallbackFee())
}

// fallbackFee is the fee weight of the single route.
func fallbackFee() float64 {
	if fallbackCost == "fee" {
		return 10 * feeLambda
	}
	return feeLambda
}
