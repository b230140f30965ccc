package routekit

import (
	"errors"
	"math"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// Payment is the bookkeeping of one payment: the fees and amounts its
// shards commit, the sender's own balances, and what its shards lock on
// each remote channel direction (in flight this round, or held by the
// receiver of an atomic payment until it completes).
type Payment struct {
	Graph   *Graph
	Beliefs *Beliefs
	View    routing.SimNetworkView
	Spec    *routing.SimPaymentSpec

	Source, Target NodeID

	// Local is the sender's spendable balance per own channel, kept
	// current as shards leave and fail.
	Local map[uint64]lnwire.MilliSatoshi

	// FeesCommitted is the fee of every shard in flight, held or settled;
	// Delivered what arrived; InFlight what is on its way.
	FeesCommitted, Delivered, InFlight lnwire.MilliSatoshi

	// Rounds counts rounds of dispatch (a request with no shard in
	// flight opens one), this one included.
	Rounds int

	// Attempts counts the routes dispatched, each one of the payment's
	// Spec.MaxAttempts.
	Attempts int

	// Settings are the memory's (the defaults for a payment made without
	// one), the payment's own to change.
	Settings Settings

	memory     *Memory            // nil for a payment made without one
	searcher   *Searcher          // the memory's, or made on first use
	bound      float64            // UpperBound's last value
	boundValid bool               // false until computed and after every failure
	locked     map[uint64]float64 // per direction: in flight and held
	held       map[uint64]float64 // per direction: held at the receiver
	heldRoutes []*route.Route
	lastTries  int                // how often LastTry has answered
	lastFailed map[uint64]float64 // per direction: least amount failed since the first last try
	closed     map[uint64]bool    // own channels refused for the rest of the payment (Returned)
}

// NewPayment starts the bookkeeping of a payment on g, whose view it
// points at this payment's.
func NewPayment(g *Graph, b *Beliefs, view routing.SimNetworkView, source route.Vertex,
	local map[uint64]lnwire.MilliSatoshi, spec *routing.SimPaymentSpec) (*Payment, error) {

	g.SetView(view)
	src, ok := g.ID(source)
	if !ok {
		return nil, errors.New("routekit: unknown source")
	}
	dst, ok := g.ID(spec.Target)
	if !ok {
		return nil, errors.New("routekit: unknown target")
	}
	return &Payment{Graph: g, Beliefs: b, View: view, Spec: spec, Source: src, Target: dst,
		Local: local, Settings: settingsOf(b), locked: map[uint64]float64{}, held: map[uint64]float64{}}, nil
}

// dirKey names one direction of a channel.
func dirKey(e *Edge) uint64 {
	if e.FromNode1 {
		return e.ChannelID << 1
	}
	return e.ChannelID<<1 | 1
}

// Request counts a request for a route: one with nothing in flight opens a
// round.
func (p *Payment) Request(inFlight uint32) {
	if inFlight == 0 {
		p.Rounds++
	}
}

// Now is the payment's virtual time.
func (p *Payment) Now() time.Time { return p.View.Now() }

// Locked is what the payment's own shards lock on e's direction.
func (p *Payment) Locked(e *Edge) float64 { return p.locked[dirKey(e)] }

// Held is what the payment's arrived shards hold on e's direction.
func (p *Payment) Held(e *Edge) float64 { return p.held[dirKey(e)] }

// AttemptsLeft is how many more routes the payment may dispatch.
func (p *Payment) AttemptsLeft() int { return max(p.Spec.MaxAttempts-p.Attempts, 0) }

// FeeBudget is what the fee limit leaves to the next shard.
func (p *Payment) FeeBudget() lnwire.MilliSatoshi {
	return p.Spec.FeeLimit - min(p.FeesCommitted, p.Spec.FeeLimit)
}

// FinalLock is the time lock of a route's last channel: the current height,
// the receiver's final delta and padding against a block mined in flight.
func (p *Payment) FinalLock(padding uint32) uint32 {
	return p.View.BlockHeight() + uint32(p.Spec.FinalCLTVDelta) + padding
}

// Prob is the probability that e carries amt on top of what the payment's
// shards lock on it; the sender's own channels are known exactly.
func (p *Payment) Prob(e *Edge, amt lnwire.MilliSatoshi) float64 {
	if e.From == p.Source {
		if p.Local[e.ChannelID] >= amt {
			return 1
		}
		return 0
	}
	return p.Beliefs.Prob(e, float64(amt)+p.Locked(e), p.Now())
}

// PriorProb is the probability that e can carry amt by the prior alone,
// with what was learnt of its channel set aside (the sender's own channels
// and the router's own shards still count).
func (p *Payment) PriorProb(e *Edge, amt lnwire.MilliSatoshi) float64 {
	if e.From == p.Source {
		return p.Prob(e, amt)
	}
	// Over the capacity the interval [0, c] leaves no balance: 0.
	c := float64(e.Capacity)
	return p.Beliefs.Prior.intervalProb(c, 0, c, e.FromNode1, float64(amt)+p.Locked(e))
}

// Query is a path query for amt under the payment's limits and cost.
func (p *Payment) Query(amt lnwire.MilliSatoshi, padding uint32, cost EdgeCost) *Query {
	return &Query{Source: p.Source, Target: p.Target, Amount: amt, FeeBudget: p.FeeBudget(),
		FinalLock: p.FinalLock(padding), CltvLimit: p.Spec.CltvLimit, Cost: cost}
}

// Route builds a path's route with the final lock given, or nil when it
// breaks the payment's cltv or fee limit.
func (p *Payment) Route(path *Path, padding uint32) *route.Route {
	rt, err := p.Graph.Route(path, p.FinalLock(padding), p.Spec.CltvLimit)
	if err != nil || p.FeesCommitted+rt.TotalFees() > p.Spec.FeeLimit {
		return nil
	}
	return rt
}

// Dispatch books a route the router hands out: its fees, the sender's
// balance and the liquidity it locks should it pass.
func (p *Payment) Dispatch(rt *route.Route) {
	p.Attempts++
	p.FeesCommitted += rt.TotalFees()
	p.InFlight += rt.ReceiverAmt()
	p.Local[rt.Hops[0].ChannelID] -= rt.TotalAmount
	p.Graph.ForEachRemoteHop(rt, func(_ int, e *Edge, amt lnwire.MilliSatoshi) {
		p.locked[dirKey(e)] += float64(amt)
	})
}

// Returned books the outcome of a dispatched route: on success every
// channel carried its amount (learnt) and the shard is held (atomic) or
// settled; on failure its fee and balance come back (an own channel that
// refused it, ownRefused, keeps none for the rest of the payment), and
// after a last try where it failed is kept for the next (LastTry). What a failure says
// about the channels is the router's to learn (Diagnose, FailureWeights).
func (p *Payment) Returned(rt *route.Route, res *routing.SimAttemptResult) {
	now := p.Now()
	p.InFlight -= rt.ReceiverAmt()
	p.Graph.ForEachRemoteHop(rt, func(_ int, e *Edge, amt lnwire.MilliSatoshi) {
		p.locked[dirKey(e)] -= float64(amt)
	})
	if res.Failure != nil {
		p.boundValid = false
		if p.lastTries > 0 {
			p.noteLastFailure(rt, res)
		}
		if _, ok := res.Failure.(routing.UnreadableFailure); ok && p.memory != nil {
			p.memory.Unreadable++
		}
		p.FeesCommitted -= rt.TotalFees()
		own := rt.Hops[0].ChannelID
		p.Local[own] += rt.TotalAmount
		if ownRefused(res) {
			if p.closed == nil {
				p.closed = map[uint64]bool{}
			}
			p.closed[own] = true
		}
		if p.closed[own] {
			p.Local[own] = 0
		}
		return
	}
	p.Delivered += rt.ReceiverAmt()
	p.Graph.ForEachRemoteHop(rt, func(_ int, e *Edge, amt lnwire.MilliSatoshi) {
		k := dirKey(e)
		p.Beliefs.Carried(e, float64(amt)+p.held[k], now)
		if p.Spec.Atomic {
			p.held[k] += float64(amt)
			p.locked[k] += float64(amt)
		} else {
			p.Beliefs.Settled(e, float64(amt), now)
		}
	})
	if p.Spec.Atomic {
		p.heldRoutes = append(p.heldRoutes, rt)
	}
}

// ownRefused reports a failure on the sender's own channel that its known
// balance does not explain: a temporary_channel_failure there (its peer
// accepts no more HTLCs: the slots the payment's held and in-flight shards
// take leave none free, or the commitment's fee with one more HTLC eats
// into the balance) or unknown_next_peer (the peer went offline). Sent
// again, the same shard fails the same way, round after round, while the
// balance says it fits: the channel takes no more of the payment's shards
// (Returned).
func ownRefused(res *routing.SimAttemptResult) bool {
	if res.FailureSourceIdx != 0 {
		return false
	}
	switch res.Failure.(type) {
	case *lnwire.FailTemporaryChannelFailure, *lnwire.FailUnknownNextPeer:
		return true
	}
	return false
}

// Finish settles the shards an atomic payment holds if it completed (call
// it when the next payment starts: the runner says no more). An incomplete
// atomic payment's shards are released and move nothing.
func (p *Payment) Finish() {
	if !p.Spec.Atomic || p.Delivered < p.Spec.Amount {
		return
	}
	now := p.Now()
	for _, rt := range p.heldRoutes {
		p.Graph.ForEachRemoteHop(rt, func(_ int, e *Edge, amt lnwire.MilliSatoshi) {
			p.Beliefs.Settled(e, float64(amt), now)
		})
	}
	p.heldRoutes = nil
}

// Passed records that channels 1..upto-1 of rt carried their amounts.
func (p *Payment) Passed(rt *route.Route, upto int) {
	now := p.Now()
	p.Graph.ForEachRemoteHop(rt, func(j int, e *Edge, amt lnwire.MilliSatoshi) {
		if j < upto {
			p.Beliefs.Carried(e, float64(amt)+p.Held(e), now)
		}
	})
}

// Failed records that channel j of rt could not carry its amount, with
// confidence q that it was the one.
func (p *Payment) Failed(rt *route.Route, j int, q float64) {
	if e, amt := p.Graph.Hop(rt, j); e != nil && j > 0 {
		p.Beliefs.Failed(e, float64(amt)+p.Held(e), q, p.Now())
	}
}

// UpperBound is the most the network can deliver to the target as far as
// the router knows for sure: the max flow under the sure bounds (faded by
// half-life h since they moved), the sender's exact balances, and less what
// the payment's arrived shards hold.
func (p *Payment) UpperBound(h time.Duration) float64 {
	now := p.Now()
	return p.maxFlow(func(e *Edge) float64 {
		_, hi := p.Beliefs.Sendable(e, now, h)
		return hi
	})
}

// maxFlow is the max flow to the target with the sender's own channels at
// their balances, unusable channels closed, and every other channel at
// what remote says less what the payment's arrived shards hold.
func (p *Payment) maxFlow(remote func(e *Edge) float64) float64 {
	return p.maxFlowUpTo(remote, math.Inf(1))
}

// maxFlowUpTo is maxFlow, stopping once the flow reaches limit.
func (p *Payment) maxFlowUpTo(remote func(e *Edge) float64, limit float64) float64 {
	return p.Graph.MaxFlowUpTo(p.Source, p.Target, func(e *Edge) float64 {
		switch {
		case e.From == p.Source:
			return float64(p.Local[e.ChannelID])
		case !e.Usable():
			return 0
		}
		if len(p.held) == 0 {
			return remote(e)
		}
		return remote(e) - p.Held(e)
	}, limit)
}

// CanComplete reports whether amt more (on top of what is in flight) fits
// under UpperBound(h), computed again only after a failure: a payment that
// cannot complete should stop before it spends more of the sender's
// liquidity on parts that never count.
func (p *Payment) CanComplete(amt lnwire.MilliSatoshi, h time.Duration) bool {
	if !p.boundValid {
		p.bound, p.boundValid = p.UpperBound(h), true
	}
	return float64(amt+p.InFlight) <= p.bound
}

// ExpectedBound is the max flow to the target under what each channel is
// expected to carry (the prior on the sure bounds), less held shards.
func (p *Payment) ExpectedBound() float64 {
	now := p.Now()
	return p.maxFlow(func(e *Edge) float64 { return p.Beliefs.Expected(e, now) })
}

// ProbCost is the cost of lnd-like probability routing: −ln P, plus
// feeWeight per fee of 1000 ppm of amount, plus hopPenalty per channel.
func (p *Payment) ProbCost(amount lnwire.MilliSatoshi, feeWeight, hopPenalty float64) EdgeCost {
	return probCost(p.Prob, amount, feeWeight, hopPenalty)
}

// probCost is ProbCost with the probability of each channel from prob.
func probCost(prob func(*Edge, lnwire.MilliSatoshi) float64, amount lnwire.MilliSatoshi,
	feeWeight, hopPenalty float64) EdgeCost {
	return func(e *Edge, amt, fee lnwire.MilliSatoshi) (float64, float64, bool) {
		prob := prob(e, amt)
		if prob <= 0 {
			return 0, 0, false
		}
		return -math.Log(prob) + hopPenalty + feeWeight*float64(fee)/float64(amount)*1000, prob, true
	}
}

// Attribution is how far a router trusts where failures are said to come
// from.
type Attribution struct {
	// Trusted takes a reported position at its word.
	Trusted bool

	// ShiftShare is the share of failures reported one hop off, in each
	// direction, when positions are not trusted.
	ShiftShare float64
}

// weight is how likely a failure at channel j is reported at position
// reported (-1: no position).
func (a Attribution) weight(j, reported int) float64 {
	if reported < 0 || j == reported {
		return 1 - 2*a.ShiftShare
	}
	return a.ShiftShare
}

// LearnFailure records what a failed attempt says, after Returned: the
// channels before a stale policy carried their amounts; a liquidity failure
// is blamed by Blame. It returns the diagnosis.
func (p *Payment) LearnFailure(rt *route.Route, res *routing.SimAttemptResult, a Attribution) Diagnosis {
	d := p.Diagnose(rt, res)
	switch {
	case d.PolicyAt > 0:
		p.Passed(rt, d.PolicyAt)
	case d.Liquidity:
		p.Blame(rt, d, a)
	}
	return d
}

// Blame spreads a liquidity failure over the channels d names (only the
// reported one when a trusts it), each weighted by FailureWeights as soft
// evidence (certain when one channel takes all); channels before the first
// candidate carried their amounts.
func (p *Payment) Blame(rt *route.Route, d Diagnosis, a Attribution) {
	first, last := d.Suspects(a.Trusted)
	w := p.FailureWeights(rt, first, last, func(j int) float64 { return a.weight(j, d.Reported) })
	p.Passed(rt, first)
	for j := first; j <= last; j++ {
		if w[j-first] > 0 {
			p.Failed(rt, j, w[j-first])
		}
	}
}

// Diagnosis is where a failed attempt's evidence points.
type Diagnosis struct {
	// PolicyAt is the first channel whose policy the failure's update
	// changed (0: none): a stale policy failed the shard there.
	PolicyAt int

	// Unreadable is true for a failure whose source could not be read.
	Unreadable bool

	// Liquidity is true when the failure says a channel lacked balance:
	// then one of channels First..Last failed, Reported the position the
	// failure names (-1: none).
	Liquidity             bool
	First, Last, Reported int
}

// Suspects are the positions First..Last that may have failed: only the
// reported one when attribution is trusted and the failure names one.
func (d Diagnosis) Suspects(trusted bool) (first, last int) {
	if d.Reported > 0 && trusted {
		return d.Reported, d.Reported
	}
	return d.First, d.Last
}

// Diagnose refreshes rt's policies from the failure's channel update and
// reads what the failure says (readFailure) when the update did not place it.
func (p *Payment) Diagnose(rt *route.Route, res *routing.SimAttemptResult) Diagnosis {
	if at := p.Graph.RefreshRoute(rt); at > 0 {
		_, unreadable := res.Failure.(routing.UnreadableFailure)
		return Diagnosis{PolicyAt: at, Unreadable: unreadable, Reported: -1}
	}
	return readFailure(rt, res)
}

// readFailure is what a failure of rt says by itself. The reported
// position is widened to its neighbours (a degraded attribution shifts it
// by one), and a receiver blamed with a channel code is read as its last
// channel.
func readFailure(rt *route.Route, res *routing.SimAttemptResult) Diagnosis {
	d := Diagnosis{Reported: -1}
	_, d.Unreadable = res.Failure.(routing.UnreadableFailure)
	pos, n := res.FailureSourceIdx, len(rt.Hops)
	switch {
	case d.Unreadable:
		d.Liquidity, d.First, d.Last = true, 1, n-1
	case pos == 0 || IsPolicyFailure(res.Failure):
		// The sender's own channel (known exactly), or a policy failure
		// the update did not place: nothing about liquidity.
	case pos >= n:
		d.Liquidity, d.First, d.Last, d.Reported = true, n-1, n-1, n-1
	default:
		d.Liquidity, d.First, d.Last, d.Reported = true, max(pos-1, 1), min(pos+1, n-1), pos
	}
	if d.Liquidity && d.First > d.Last {
		d.Liquidity = false // a one-channel route: only the sender's own
	}
	return d
}

// IsPolicyFailure reports failures about a policy rather than liquidity.
func IsPolicyFailure(f lnwire.FailureMessage) bool {
	switch f.(type) {
	case *lnwire.FailFeeInsufficient, *lnwire.FailIncorrectCltvExpiry,
		*lnwire.FailChannelDisabled, *lnwire.FailAmountBelowMinimum,
		*lnwire.FailExpiryTooSoon, *lnwire.FailIncorrectDetails,
		*lnwire.FailFinalIncorrectCltvExpiry, *lnwire.FailFinalIncorrectHtlcAmount:
		return true
	}
	return false
}

// FailureWeights is the posterior that channel j (first ≤ j ≤ last) of rt
// failed it: attribution(j) — how likely a failure at j is reported as it
// was — times the chance that j is the first channel of the route that
// could not carry its amount. The weights sum to 1 (all 0 when nothing
// could have failed).
func (p *Payment) FailureWeights(rt *route.Route, first, last int, attribution func(j int) float64) []float64 {
	w := make([]float64, last-first+1)
	passed, total := 1.0, 0.0
	for j := 1; j <= last; j++ {
		prob := 0.5
		if e, amt := p.Graph.Hop(rt, j); e != nil {
			prob = p.Beliefs.Prob(e, float64(amt)+p.Locked(e), p.Now())
		}
		if j >= first {
			w[j-first] = attribution(j) * passed * max(1-prob, 1e-3)
			total += w[j-first]
		}
		passed *= max(prob, 1e-3)
	}
	for i := range w {
		if total > 0 {
			w[i] /= total
		}
	}
	return w
}

// minFlowProb floors the probability a flow's cost is taken at, so that the
// last piece of a channel costs much but not infinitely.
const minFlowProb = 1e-4

// Pieces linearises e's cost for a min-cost flow, after Pickhardt and
// Richter: up to what e surely carries (the sender's own balance, or the
// sure lower bound) only feeSlope per msat; above it, n pieces of −ln of the
// probability that e carries the flow on top of what the payment's shards
// lock, up to the sure upper bound, each piece's slope raised to at least
// the one before so the cost stays convex.
func (p *Payment) Pieces(e *Edge, n int, feeSlope float64) []Piece {
	if e.From == p.Source {
		return []Piece{{Width: float64(p.Local[e.ChannelID]), Slope: feeSlope}}
	}
	if !e.Usable() {
		return nil
	}
	now, locked := p.Now(), p.Locked(e)
	b := p.Beliefs.peek(e, now)
	lo, hi := b.sendable(e.FromNode1, now, 0)
	// A failure proves the balance below the amount it failed: the
	// upper bound itself cannot be carried.
	lo, hi = max(lo-locked, 0), hi-locked-1
	if pol := e.Policy; pol.HasMaxHTLC || pol.MaxHTLC > 0 {
		hi = min(hi, float64(pol.MaxHTLC))
	}
	if hi <= 0 {
		return nil
	}
	pieces := make([]Piece, 0, n+1)
	if lo > 0 {
		pieces = append(pieces, Piece{Width: lo, Slope: feeSlope})
	}
	step := (hi - lo) / float64(n)
	prob := b.curve(p.Beliefs.Prior, e.FromNode1)
	prev, slope := 0.0, 0.0
	for k := 1; k <= n && step > 0; k++ {
		x := lo + step*float64(k)
		c := -math.Log(max(prob(x+locked), minFlowProb))
		slope = max(slope, (c-prev)/step)
		prev = c
		pieces = append(pieces, Piece{Width: step, Slope: slope + feeSlope})
	}
	return pieces
}

// FlowCost is how PlanFlow prices a channel for a payment of amount A: −ln
// of the chance it carries the flow, linearised in Pieces between what it
// surely carries and what it may, plus FeeWeight per fee of 1000 ppm of A,
// plus HopWeight per channel for a part carrying all of A (a part carrying
// a share pays that share).
//
// The zero FlowCost is usable: Pieces 0 prices a remote channel by what it
// surely carries alone (no uncertain piece), Units 0 is DefaultUnits, and
// weights 0 ignore fees and hops. Two champions use Pieces 5, Units 100,
// FeeWeight 0.2 and HopWeight 0.2.
type FlowCost struct {
	// Pieces is how many linear pieces price the uncertain part of each
	// remote channel.
	Pieces int
	// Units is the flow's resolution: the amount is cut into this many
	// units (0: DefaultUnits).
	Units int
	// FeeWeight is the cost of a fee of 1000 ppm of the amount.
	FeeWeight float64
	// HopWeight is the cost of one channel for a part carrying the whole
	// amount.
	HopWeight float64
}

// PlanFlow plans amt as a min-cost flow under c over the current beliefs
// (what the payment's own shards lock included), split into at most
// maxParts paths priced exactly (fees, time locks) and ordered largest
// first; parts a policy refuses, longer than MaxHops or sure to fail
// (mayCarry) are left out. The paths may deliver less than amt when the
// beliefs say the network cannot carry it; when the flow carries all of
// amt, they deliver all of it wherever the sender's balances allow
// (fillShortfall). The paths' Prob is 1 and Cost 0 (PathAlong): it does not
// price them.
func (p *Payment) PlanFlow(amt lnwire.MilliSatoshi, maxParts int, c FlowCost) []*Path {
	flow := p.Graph.MinCostFlow(&FlowQuery{
		Source: p.Source, Target: p.Target, Amount: amt, Units: c.Units, MaxParts: maxParts,
		Cost: func(e *Edge) []Piece { return p.Pieces(e, c.Pieces, c.slope(e, p.Source, amt)) },
	})
	var plan []*Path
	spent := map[uint64]lnwire.MilliSatoshi{}   // per own channel, fees included
	stacked := map[uint64]lnwire.MilliSatoshi{} // per direction, what earlier parts carry
	for _, part := range flow {
		if part.Amount == 0 || len(part.Edges) > MaxHops {
			continue
		}
		path := PathAlong(part.Edges, p.Source, part.Amount)
		own := part.Edges[0].ChannelID
		if path != nil && spent[own]+path.Amts[0] > p.Local[own] {
			// The flow counted what arrives; the fees come on top and
			// must fit the sender's balance too.
			over := spent[own] + path.Amts[0] - p.Local[own]
			path = nil
			if over < part.Amount {
				path = PathAlong(part.Edges, p.Source, part.Amount-over)
			}
		}
		if path != nil && path.Amts[0]+spent[own] <= p.Local[own] && p.mayCarry(path, stacked) {
			spent[own] += path.Amts[0]
			plan = append(plan, path)
		}
	}
	if carried(flow) >= amt {
		p.fillShortfall(plan, amt, spent, 2*amt/lnwire.MilliSatoshi(unitsOr(c.Units)))
	}
	return plan
}

// mayCarry reports whether each remote channel of path may carry its
// amount on top of what the plan's earlier parts put on it (stacked, by
// direction, to which it then adds path's) and what the payment's shards
// lock. The flow counts what arrives, so the fees of the channels after one
// can lift a part back to an amount that channel failed for sure; sent, it
// fails again, round after round, until the payment's attempts are spent.
func (p *Payment) mayCarry(path *Path, stacked map[uint64]lnwire.MilliSatoshi) bool {
	for i, e := range path.Edges {
		if e.From != p.Source && p.Prob(e, path.Amts[i]+stacked[dirKey(e)]) <= 0 {
			return false
		}
	}
	p.stack(path, stacked)
	return true
}

// stack adds what path puts on each remote channel direction to stacked
// (the sender's own channels are PlanFlow's spent).
func (p *Payment) stack(path *Path, stacked map[uint64]lnwire.MilliSatoshi) {
	for i, e := range path.Edges {
		if e.From != p.Source {
			stacked[dirKey(e)] += path.Amts[i]
		}
	}
}

// fillShortfall moves what the plan lacks of amt, when it is at most dust,
// onto the first part whose own channel can pay for it and whose remote
// channels may carry it grown (mayCarry, beside the plan's other parts). A
// part shrunk to fit its fees in the sender's balance otherwise leaves a
// remainder of a few hundred msat, below what most channels forward (their
// minimum HTLC), and a payment that delivered all but that fails.
func (p *Payment) fillShortfall(plan []*Path, amt lnwire.MilliSatoshi,
	spent map[uint64]lnwire.MilliSatoshi, dust lnwire.MilliSatoshi) {

	var planned lnwire.MilliSatoshi
	for _, path := range plan {
		planned += path.Amount
	}
	if planned >= amt || amt-planned > dust {
		return
	}
	for i, path := range plan {
		own := path.Edges[0].ChannelID
		grown := PathAlong(path.Edges, p.Source, path.Amount+amt-planned)
		if grown != nil && spent[own]-path.Amts[0]+grown.Amts[0] <= p.Local[own] &&
			p.mayCarry(grown, p.stackedBy(plan, i)) {
			spent[own] += grown.Amts[0] - path.Amts[0]
			plan[i] = grown
			return
		}
	}
}

// stackedBy is what the plan's parts but skip put on each remote channel
// direction, as mayCarry counts it.
func (p *Payment) stackedBy(plan []*Path, skip int) map[uint64]lnwire.MilliSatoshi {
	stacked := map[uint64]lnwire.MilliSatoshi{}
	for j, path := range plan {
		if j != skip {
			p.stack(path, stacked)
		}
	}
	return stacked
}

// slope is the linear part of e's cost per msat of a flow of amt: its fee
// rate with the base fee spread over amt, and the hop cost.
func (c FlowCost) slope(e *Edge, source NodeID, amt lnwire.MilliSatoshi) float64 {
	hop := c.HopWeight / float64(amt)
	if e.From == source || e.Policy == nil {
		return hop
	}
	rate := float64(e.Policy.FeeProportionalMillionths)/1e6 + float64(e.Policy.FeeBaseMSat)/float64(amt)
	return hop + c.FeeWeight*1000*rate/float64(amt)
}
