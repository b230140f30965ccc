package routekit

import (
	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// What every router built on a Payment repeats, under the payment's
// Settings: a single route for a shard, the hand-out of a route, the
// rounds of a planning router and the learning from an attempt's outcome.
// A router embedding *Payment inherits ReportAttempt and writes only
// RequestRoute; it may write its own ReportAttempt instead.

// Best is the least-cost single route for shard under ProbCost with
// feeWeight and the settings' HopPenalty, nil when there is none or it is
// less likely than the settings' MinRouteProb.
func (p *Payment) Best(shard lnwire.MilliSatoshi, feeWeight float64) *Path {
	cost := p.ProbCost(shard, feeWeight, p.Settings.HopPenalty)
	path := p.search().Shortest(p.Query(shard, p.Settings.CltvPadding, cost))
	if path == nil || path.Prob < p.Settings.MinRouteProb {
		return nil
	}
	return path
}

// search is the memory's searcher, or one of the payment's own.
func (p *Payment) search() *Searcher {
	if p.searcher == nil {
		p.searcher = NewSearcher(p.Graph)
	}
	return p.searcher
}

// Halvings are the shard sizes amt, amt/2, amt/4, … down to least (amt
// itself whatever least is).
func Halvings(amt, least lnwire.MilliSatoshi) []lnwire.MilliSatoshi {
	sizes := []lnwire.MilliSatoshi{amt}
	for s := amt / 2; s >= least && s > 0; s /= 2 {
		sizes = append(sizes, s)
	}
	return sizes
}

// WholeFirst is the path pick finds for the next shard: in the first
// wholeRounds rounds of a payment that is not atomic, pick(true), the whole
// rest as one shard (a bottleneck shows before anything is spent), and
// pick(false), a split, when no route carries it all or after those rounds.
func (p *Payment) WholeFirst(wholeRounds int, pick func(whole bool) *Path) *Path {
	whole := !p.Spec.Atomic && p.Rounds <= wholeRounds
	if path := pick(whole); path != nil || !whole {
		return path
	}
	return pick(false)
}

// Send hands out path: its route with the settings' cltv padding, booked
// by Dispatch; ErrNoRoute when path is nil or breaks the payment's limits.
func (p *Payment) Send(path *Path) (*route.Route, error) {
	if path == nil {
		return nil, ErrNoRoute
	}
	rt := p.Route(path, p.Settings.CltvPadding)
	if rt == nil {
		return nil, ErrNoRoute
	}
	p.Dispatch(rt)
	return rt, nil
}

// RoundRoute answers RequestRoute for a router that plans a round at a
// time: when a round opens (nothing in flight) the payment stops if the
// rest amt no longer fits what the network surely carries (CanComplete
// under the settings' SureHalfLife), else plan makes the round's paths;
// each request sends the next planned path that the rest still needs and
// the payment's limits allow.
func (p *Payment) RoundRoute(amt lnwire.MilliSatoshi, inFlight uint32,
	plan func(amt lnwire.MilliSatoshi) []*Path) (*route.Route, error) {

	p.Request(inFlight)
	if inFlight == 0 {
		if !p.CanComplete(amt, p.Settings.SureHalfLife) {
			return nil, ErrNoRoute
		}
		p.plan = plan(amt)
	}
	for len(p.plan) > 0 {
		next := p.plan[0]
		p.plan = p.plan[1:]
		if next.Amount > amt {
			continue // an earlier part delivered more than planned
		}
		if rt, err := p.Send(next); err == nil {
			return rt, nil
		}
	}
	return nil, ErrNoRoute
}

// Attribution is how far failure positions are trusted now: at their word
// until an unreadable failure of the scenario has shown attribution
// degraded, then spread by the settings' ShiftShare.
func (p *Payment) Attribution() Attribution {
	return Attribution{Trusted: p.memory == nil || p.memory.Unreadable == 0,
		ShiftShare: p.Settings.ShiftShare}
}

// ReportAttempt books an attempt's outcome (Returned) and learns from a
// failure under the payment's Attribution: the routing contract's
// ReportAttempt for a router that takes no more from failures.
func (p *Payment) ReportAttempt(_ uint64, rt *route.Route, res *routing.SimAttemptResult) error {
	p.Returned(rt, res)
	if res.Failure != nil {
		p.LearnFailure(rt, res, p.Attribution())
	}
	return nil
}
