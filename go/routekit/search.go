package routekit

import (
	"errors"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// MaxHops is the onion's limit on the length of a route
// (routing.MaxRouteHops, the one definition).
const MaxHops = routing.MaxRouteHops

// EdgeCost prices carrying amt over e, whose own fee for it is fee (0 on
// the sender's own channel): a cost ≥ 0 added to the route's, and the
// probability that e carries amt (multiplied into the route's). ok false
// leaves e out of the route.
type EdgeCost func(e *Edge, amt, fee lnwire.MilliSatoshi) (cost, prob float64, ok bool)

// Query is one path search: a route from Source delivering Amount to
// Target, of least total cost under Cost.
type Query struct {
	Source, Target NodeID

	// Amount is what the target receives.
	Amount lnwire.MilliSatoshi

	// FeeBudget is the most the route may pay in fees.
	FeeBudget lnwire.MilliSatoshi

	// FinalLock is the absolute time lock of the last channel; CltvLimit
	// bounds the route's total time lock (0: no limit).
	FinalLock, CltvLimit uint32

	// MaxHops bounds the number of channels (0: the onion's MaxHops).
	MaxHops int

	// Exclude names channels the route may not use.
	Exclude map[uint64]bool

	// Cost prices each channel.
	Cost EdgeCost
}

// Path is a route found for one amount: the channels from the sender's own
// to the target's, what each carries (Amts[0] is the route's total), and
// the time lock each carries above the final one.
type Path struct {
	Amount lnwire.MilliSatoshi

	// Prob is the path's success probability as the search that found it
	// priced it (Best, Shortest); PathAlong, and so PlanFlow, leave it 1
	// and Cost 0: price a planned path with Payment.Prob per channel.
	Prob float64
	Cost float64

	Edges []*Edge
	Amts  []lnwire.MilliSatoshi
	Cltvs []uint32

	// Label names the branch of the router that planned the path; Planner
	// reports it to the simulator (routing.RouteLabeler), which counts
	// each label's attempts and failures in the feedback.
	Label string
}

// Fee is what the path pays to forwarding nodes.
func (p *Path) Fee() lnwire.MilliSatoshi { return p.Amts[0] - p.Amount }

// label is a node's best known way to the target in the current search.
type label struct {
	cost float64
	prob float64
	recv lnwire.MilliSatoshi // what the node must receive, before its inbound fee
	fwd  lnwire.MilliSatoshi // what it forwards (recv less its outbound fee)
	cltv uint32              // deltas of the nodes from here to the target
	hops int
	via  *Edge // the channel toward the target
	gen  uint32
	done bool
}

// Searcher runs searches on one graph, reusing its buffers. It is not safe
// for concurrent use.
type Searcher struct {
	g      *Graph
	labels []label
	gen    uint32
	queue  queue[float64]
}

// NewSearcher makes a searcher for g.
func NewSearcher(g *Graph) *Searcher {
	return &Searcher{g: g, labels: make([]label, g.NumNodes())}
}

// Shortest finds the path of least cost for q, walking backward from the
// target as lnd does, so that each channel is priced at the exact amount it
// must carry. It returns nil when no path meets q's limits.
func (s *Searcher) Shortest(q *Query) *Path {
	if q.Amount == 0 || (q.CltvLimit > 0 && q.FinalLock > q.CltvLimit) || q.Source == q.Target {
		return nil
	}
	maxHops := q.MaxHops
	if maxHops <= 0 || maxHops > MaxHops {
		maxHops = MaxHops
	}
	s.gen++
	s.labels[q.Target] = label{prob: 1, recv: q.Amount, fwd: q.Amount, gen: s.gen}
	s.queue.reset()
	s.queue.push(q.Target, 0)
	for s.queue.len() > 0 {
		v, _ := s.queue.pop()
		if s.labels[v].done {
			continue
		}
		s.labels[v].done = true
		if v == q.Source {
			return s.trace(q)
		}
		if s.labels[v].hops < maxHops {
			s.relax(v, q)
		}
	}
	return nil
}

// relax offers every channel into v to the node at its other end.
func (s *Searcher) relax(v NodeID, q *Query) {
	lv := s.labels[v]
	for i := range s.g.in[v] {
		e := &s.g.in[v][i]
		lu := &s.labels[e.From]
		if (lu.gen == s.gen && lu.done) || q.Exclude[e.ChannelID] {
			continue
		}
		over := lv.recv // what e carries: v's receive with its inbound fee on e
		if v != q.Target {
			over = e.Arriving(lv.fwd, lv.recv)
		}
		recv, cltv, ok := extend(e, over, lv.cltv, e.From == q.Source)
		if !ok || recv-q.Amount > q.FeeBudget ||
			(q.CltvLimit > 0 && q.FinalLock+cltv > q.CltvLimit) {
			continue
		}
		// The fee this step adds: From's outbound fee on e and v's
		// inbound fee on e (a discount may take it below 0; the search
		// prices no step below 0, as lnd's clamps a node's fee).
		c, p, ok := q.Cost(e, over, recv-min(recv, lv.recv))
		if !ok || p <= 0 {
			continue
		}
		cost := lv.cost + c
		if lu.gen == s.gen && cost >= lu.cost {
			continue
		}
		*lu = label{cost: cost, prob: lv.prob * p, recv: recv, fwd: over, cltv: cltv,
			hops: lv.hops + 1, via: e, gen: s.gen}
		s.queue.push(e.From, cost)
	}
}

// extend is what e's sender must receive to forward amt over e, and the
// time lock above the final one it must get: the sender's own channel
// charges nothing and adds no delta, a remote one charges its policy's fee
// and delta and refuses amounts outside its HTLC range.
func extend(e *Edge, amt lnwire.MilliSatoshi, cltv uint32, own bool) (lnwire.MilliSatoshi, uint32, bool) {
	if own {
		return amt, cltv, true
	}
	pol := e.Policy
	if !e.Usable() || amt < pol.MinHTLC || ((pol.HasMaxHTLC || pol.MaxHTLC > 0) && amt > pol.MaxHTLC) {
		return 0, 0, false
	}
	return amt + pol.ComputeFee(amt), cltv + uint32(pol.TimeLockDelta), true
}

// trace reads the path found from the sender's label.
func (s *Searcher) trace(q *Query) *Path {
	ls := s.labels[q.Source]
	p := &Path{Amount: q.Amount, Prob: ls.prob, Cost: ls.cost}
	for v := q.Source; v != q.Target; v = s.labels[v].via.To {
		e := s.labels[v].via
		p.Edges = append(p.Edges, e)
		p.Amts = append(p.Amts, s.labels[v].fwd) // what v sends over e
		p.Cltvs = append(p.Cltvs, s.labels[e.To].cltv)
	}
	return p
}

// PathAlong prices a given chain of edges from source for amt delivered:
// what each channel carries and the time locks, as Shortest would. It
// returns nil when a channel's policy refuses its amount.
func PathAlong(edges []*Edge, source NodeID, amt lnwire.MilliSatoshi) *Path {
	n := len(edges)
	p := &Path{Amount: amt, Prob: 1, Edges: edges,
		Amts: make([]lnwire.MilliSatoshi, n), Cltvs: make([]uint32, n)}
	// What edges[i].To forwards and must receive before its inbound fee,
	// and its lock.
	fwd, recv, cltv := amt, amt, uint32(0)
	for i := n - 1; i >= 0; i-- {
		over := recv
		if i < n-1 {
			over = edges[i].Arriving(fwd, recv)
		}
		p.Amts[i], p.Cltvs[i] = over, cltv
		var ok bool
		fwd = over
		recv, cltv, ok = extend(edges[i], over, cltv, edges[i].From == source)
		if !ok {
			return nil
		}
	}
	return p
}

// ErrNoRoute is what a router returns to give up a payment (or to end a
// round) when it has no route to offer.
var ErrNoRoute = errors.New("no route found")

// ErrRouteLimits is returned by Route when the route breaks the cltv limit.
var ErrRouteLimits = errors.New("routekit: route exceeds the cltv limit")

// Route turns a path into lnd's route encoding, with finalLock the absolute
// time lock of the last channel: channel i carries TotalAmount for i = 0 and
// Hops[i-1].AmtToForward after, under the matching time locks.
func (g *Graph) Route(p *Path, finalLock, cltvLimit uint32) (*route.Route, error) {
	n := len(p.Edges)
	if n == 0 {
		return nil, errors.New("routekit: empty path")
	}
	hops := make([]*route.Hop, n)
	for i, e := range p.Edges {
		hops[i] = &route.Hop{
			PubKeyBytes:      g.nodes[e.To],
			ChannelID:        e.ChannelID,
			AmtToForward:     p.Amount,
			OutgoingTimeLock: finalLock,
		}
		if i+1 < n {
			hops[i].AmtToForward = p.Amts[i+1]
			hops[i].OutgoingTimeLock = finalLock + p.Cltvs[i+1]
		}
	}
	rt, err := route.NewRouteFromHops(p.Amts[0], finalLock+p.Cltvs[0], g.nodes[p.Edges[0].From], hops)
	if err != nil {
		return nil, err
	}
	if cltvLimit > 0 && rt.TotalTimeLock > cltvLimit {
		return nil, ErrRouteLimits
	}
	return rt, nil
}
