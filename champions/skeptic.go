package main

// A router that does not believe every failure report, on the routekit
// toolkit (go/routekit).
//
// Where failure attribution is degraded, a report may name the wrong hop
// (one off, either way) or none at all. A router that takes each report at
// its word marks good channels empty and keeps retrying the bad one. This
// one cross-checks:
//
//   - How far to trust a position is estimated as the scenario goes: the
//     share of unreadable failures among liquidity failures is seen; the
//     share shifted is assumed to be shiftPerStripped times it.
//   - Blame is spread over the reported channel and its neighbours,
//     weighted by that trust and by how likely each channel was to fail
//     given what is already known (a channel known to carry the amount
//     cannot be the one, whatever the report says).
//   - A blamed channel is quarantined: the evidence is soft until a second
//     failure in another attempt blames it too (then it becomes a sure
//     bound), and a later success through it at that amount refutes it.
//   - While no report has yet proven unreliable, positions are trusted.
//
// Routes are planned a round at a time as a min-cost flow over the
// beliefs (routekit's PlanFlow), with a single most likely route when the
// flow finds nothing.
//
// What the offline proposer may turn is marked "evolve:tunable" (numbers)
// and "evolve:choice" (alternative blocks).

import (
	"math"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routekit"
	"github.com/routesim-evolve/routesim/routing"
)

// Trust in failure reports.
const (
	// shiftPerStripped: shifted reports are assumed this many times as
	// frequent as stripped (unreadable) ones, split between both ways.
	shiftPerStripped = 1.0 // evolve:tunable [0.2, 4] success

	// minShift and maxShift bound the share of reports assumed shifted
	// each way once any report proved unreliable.
	minShift = 0.03 // evolve:tunable [0.005, 0.2] success
	maxShift = 0.3  // evolve:tunable [0.1, 0.45] success

	// corroborate is the weight each of two blames must reach for their
	// agreement to make a sure bound.
	corroborate = 0.25 // evolve:tunable [0.05, 0.9] success

	// quarantine: "corroborate" keeps soft blame soft until a second
	// attempt confirms it; "soft" never hardens it; "trust" hardens the
	// reported channel at once (what a naive router does).
	quarantine = "corroborate" // evolve:choice corroborate|soft|trust success
)

// How a round is planned: the min-cost flow's cost (PlanFlow), its fee
// weight also that of the single route tried when the flow finds none.
const (
	feePerProb = 0.2 // evolve:tunable [0, 2] fee
	hopPerProb = 0.2 // evolve:tunable [0, 0.5] retry
	flowPieces = 5   // evolve:tunable [1, 12] success
	flowUnits  = 100 // evolve:tunable [20, 400] success

	// keptRounds: a round uses at most the attempts left over this many
	// rounds, so that failed rounds leave attempts to finish with.
	keptRounds = 3.0 // evolve:tunable [1, 8] retry
)

// world lives for one scenario, under routekit's default settings;
// suspects are the quarantined blames.
var (
	world    = routekit.NewMemoryWith(routekit.DefaultSettings())
	suspects = map[suspectKey]suspicion{}

	// liquidityFailures counts remote liquidity failures, readable or
	// not: the base of the unreadable share.
	liquidityFailures int
)

// suspectKey is one direction of a channel.
type suspectKey struct {
	scid      uint64
	fromNode1 bool
}

// suspicion is a soft blame waiting for corroboration.
type suspicion struct {
	amt     float64 // the amount (with held shards) that failed
	weight  float64
	attempt uint64
	at      time.Time
}

func newCandidateRouter(view routing.SimNetworkView, source route.Vertex,
	localBalances map[uint64]lnwire.MilliSatoshi,
	spec *routing.SimPaymentSpec) (routing.SimRouter, error) {

	pm, err := world.Begin(view, source, localBalances, spec)
	return &skeptic{&routekit.Planner{Payment: pm, Plan: plan, LastTryFeeWeight: feePerProb}}, err
}

// skeptic plays one payment a planned round at a time, learning from
// failures its own way.
type skeptic struct {
	*routekit.Planner
}

// plan is the min-cost flow's parts for the rest amt or, when it finds
// none, the most likely single route for the rest or for the largest
// halving of it (down to 1/128 of it) that has one.
func plan(p *routekit.Payment, amt lnwire.MilliSatoshi) []*routekit.Path {
	round := p.PlanFlow(amt, p.RoundParts(1, keptRounds), routekit.FlowCost{
		Pieces: flowPieces, Units: flowUnits, FeeWeight: feePerProb, HopWeight: hopPerProb})
	if len(round) > 0 {
		return round
	}
	return p.FirstBest(routekit.Halvings(amt, max(amt/128, 1)), feePerProb)
}

// ReportAttempt books the outcome, refutes suspicions a success disproves
// and weighs what a failure says.
func (s *skeptic) ReportAttempt(id uint64, rt *route.Route, res *routing.SimAttemptResult) error {
	s.Returned(rt, res)
	if res.Failure == nil {
		world.Graph.ForEachRemoteHop(rt, func(_ int, e *routekit.Edge, amt lnwire.MilliSatoshi) {
			k := suspectKey{e.ChannelID, e.FromNode1}
			if sus, ok := suspects[k]; ok && float64(amt) >= sus.amt {
				delete(suspects, k)
			}
		})
		return nil
	}
	d := s.Diagnose(rt, res)
	switch {
	case d.PolicyAt > 0:
		s.Passed(rt, d.PolicyAt)
	case d.Liquidity:
		liquidityFailures++
		s.blame(id, rt, d)
	}
	return nil
}

// shiftShare is the share of reports assumed shifted each way: 0 until a
// report proved unreliable.
func shiftShare() float64 {
	if world.Unreadable == 0 || quarantine == "trust" {
		return 0
	}
	stripped := float64(world.Unreadable) / float64(max(liquidityFailures, 1))
	return math.Min(maxShift, math.Max(minShift, stripped*shiftPerStripped/2))
}

// blame weighs each candidate channel, hardens a blame two attempts agree
// on, and quarantines the rest as soft evidence.
func (s *skeptic) blame(id uint64, rt *route.Route, d routekit.Diagnosis) {
	shift := shiftShare()
	first, last := d.Suspects(shift == 0)
	w := s.FailureWeights(rt, first, last, func(j int) float64 {
		if d.Reported < 0 || j == d.Reported {
			return 1 - 2*shift
		}
		return shift
	})
	s.Passed(rt, first)
	now := s.Now()
	for j := first; j <= last; j++ {
		weight := w[j-first]
		e, amt := world.Graph.Hop(rt, j)
		if e == nil || weight <= 0 {
			continue
		}
		x := float64(amt) + s.Held(e)
		k := suspectKey{e.ChannelID, e.FromNode1}
		prior, seen := suspects[k]
		fresh := seen && prior.attempt != id && now.Sub(prior.at) < world.Beliefs.HalfLife
		switch {
		case weight >= 0.999 || (quarantine == "corroborate" && fresh &&
			prior.weight >= corroborate && weight >= corroborate):
			// Two attempts agree (or nothing else could have failed): the
			// weaker of the two claims is sure.
			world.Beliefs.Failed(e, math.Max(x, prior.amt), 1, now)
			delete(suspects, k)
		default:
			world.Beliefs.Failed(e, x, weight, now)
			suspects[k] = suspicion{amt: x, weight: weight, attempt: id, at: now}
		}
	}
}
