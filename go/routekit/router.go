package routekit

import (
	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// What every router built on a Payment repeats, under the payment's
// Settings: a single route for a shard, the hand-out of a route, the
// rounds of a planning router (Planner) and the learning from an attempt's
// outcome. A router embedding *Payment inherits ReportAttempt and writes
// only RequestRoute; it may write its own ReportAttempt instead.

// Best is the least-cost single route for shard under ProbCost with
// feeWeight and the settings' HopPenalty, nil when there is none or it is
// less likely than the settings' MinRouteProb.
func (p *Payment) Best(shard lnwire.MilliSatoshi, feeWeight float64) *Path {
	return p.likeliest(shard, p.ProbCost(shard, feeWeight, p.Settings.HopPenalty))
}

// LastTry is the route of a last try at a payment that no longer fits
// what the network surely carries (CanComplete is false): the best single
// route for the whole rest amt by the prior alone (PriorProb), what was
// learnt set aside, since in a network that drifts what was learnt goes
// stale, except that it avoids each channel direction where a shard of
// this payment failed since its first last try, at that amount or more (so
// that each last try goes another way). It answers up to the settings'
// LastTries times per payment; one route for the whole rest, so that
// without atomic MPP none of the rest settles unless all of it arrives.
// Nil when it has answered that often or finds no route.
func (p *Payment) LastTry(amt lnwire.MilliSatoshi, feeWeight float64) *Path {
	if p.lastTries >= p.Settings.LastTries {
		return nil
	}
	p.lastTries++
	return p.likeliest(amt, probCost(p.lastTryProb, amt, feeWeight, p.Settings.HopPenalty))
}

// lastTryProb is PriorProb, but 0 on a direction where a shard failed
// since the first last try with as much as amt (on top of the payment's
// other shards) or less.
func (p *Payment) lastTryProb(e *Edge, amt lnwire.MilliSatoshi) float64 {
	if failed, ok := p.lastFailed[dirKey(e)]; ok && float64(amt)+p.Locked(e) >= failed {
		return 0
	}
	return p.PriorProb(e, amt)
}

// noteLastFailure keeps where a failure after the first last try points
// (readFailure: the reported channel while attribution is trusted, else
// its neighbours too) and the total each of those directions was to carry,
// the payment's other shards included.
func (p *Payment) noteLastFailure(rt *route.Route, res *routing.SimAttemptResult) {
	d := readFailure(rt, res)
	if !d.Liquidity {
		return
	}
	first, last := d.Suspects(p.Attribution().Trusted)
	if p.lastFailed == nil {
		p.lastFailed = map[uint64]float64{}
	}
	for j := first; j <= last; j++ {
		if e, amt := p.Graph.Hop(rt, j); e != nil {
			k, total := dirKey(e), float64(amt)+p.Locked(e)
			if failed, ok := p.lastFailed[k]; !ok || total < failed {
				p.lastFailed[k] = total
			}
		}
	}
}

// likeliest is the least-cost route for amt, nil below the least
// probability.
func (p *Payment) likeliest(amt lnwire.MilliSatoshi, cost EdgeCost) *Path {
	path := p.search().Shortest(p.Query(amt, p.Settings.CltvPadding, cost))
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

// FirstBest is the best single route (Best) for the first of sizes that
// has one, as a plan of that one path; nil when none has.
func (p *Payment) FirstBest(sizes []lnwire.MilliSatoshi, feeWeight float64) []*Path {
	for _, size := range sizes {
		if path := p.Best(size, feeWeight); path != nil {
			return []*Path{path}
		}
	}
	return nil
}

// Planner plays a payment a planned round at a time. When a round opens
// (nothing in flight) and the rest no longer fits what the network surely
// carries (CanComplete under the settings' SureHalfLife), it makes the
// payment's last try (LastTry, at LastTryFeeWeight) or stops; before the
// first shard it stops a payment too unlikely to complete (WorthStarting);
// else Plan makes the round's paths. Each request sends the next planned
// path that the rest still needs and the payment's limits allow. A plan
// that covers less than the rest sends what it has: the round ends when
// its paths are spent (RequestRoute returns ErrNoRoute with shards in
// flight), and the next round plans what is still missing once they
// return. A plan of nothing, with nothing in flight, ends the payment. Its
// ReportAttempt is the Payment's; embed it to learn otherwise.
type Planner struct {
	*Payment

	// Plan is the paths of a round for the rest amt.
	Plan func(p *Payment, amt lnwire.MilliSatoshi) []*Path

	// LastTryFeeWeight is the fee weight of the last try's route.
	LastTryFeeWeight float64

	round []*Path // planned paths not yet handed out
	sent  string  // the label of the route last handed out
}

// Labels Planner gives the routes it sends, unless Plan labelled the path.
const (
	LabelPlan    = "plan"
	LabelLastTry = "last-try"
)

// RouteLabel names the branch that planned the route just handed out: the
// path's own Label, else LabelPlan or LabelLastTry (routing.RouteLabeler).
func (r *Planner) RouteLabel(*route.Route) string { return r.sent }

// RequestRoute answers the routing contract from the round's plan.
func (r *Planner) RequestRoute(amt lnwire.MilliSatoshi, inFlight uint32) (*route.Route, error) {
	r.Request(inFlight)
	if inFlight == 0 {
		switch {
		case !r.CanComplete(amt, r.Settings.SureHalfLife):
			r.round = nil
			if last := r.LastTry(amt, r.LastTryFeeWeight); last != nil {
				if last.Label == "" {
					last.Label = LabelLastTry
				}
				r.round = []*Path{last}
			}
		case !r.WorthStarting(amt):
			return nil, ErrNoRoute
		default:
			r.round = r.Plan(r.Payment, amt)
		}
	}
	for len(r.round) > 0 {
		next := r.round[0]
		r.round = r.round[1:]
		if next.Amount > amt {
			continue // an earlier part delivered more than planned
		}
		if rt, err := r.Send(next); err == nil {
			r.sent = next.Label
			if r.sent == "" {
				r.sent = LabelPlan
			}
			return rt, nil
		}
	}
	return nil, ErrNoRoute
}

// RoundParts is how many parts a round may plan: share of MaxParts, and no
// more than the attempts left spread over keptRounds rounds, so that a
// payment whose early rounds fail still has rounds to finish with rather
// than spending its last attempts on one wide round.
func (p *Payment) RoundParts(share, keptRounds float64) int {
	parts := int(float64(p.Spec.MaxParts) * share)
	if keptRounds > 0 {
		parts = min(parts, int(float64(p.AttemptsLeft())/keptRounds))
	}
	return max(parts, 1)
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
