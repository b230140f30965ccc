package main

// The seed router: cheapest-path Dijkstra with failure blacklisting and
// halving splits. It is deliberately simple: it ignores capacity and success
// probability, and it never retries a blacklisted channel, not even at a
// lower amount. Evolution starts from here.
//
// Numbers marked "evolve:tunable" may be changed by the offline proposer.

import (
	"container/heap"
	"errors"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

const (
	// minShardMsat is the smallest shard the router splits down to.
	minShardMsat = 10_000_000 // evolve:tunable

	// finalCltvPadding is added to the receiver's final cltv delta, so a
	// block mined while the shard is in flight does not fail it.
	finalCltvPadding = 3 // evolve:tunable

	// maxHops caps the length of a route.
	maxHops = 20 // evolve:tunable
)

var errNoRoute = errors.New("no route found")

// newCandidateRouter is the contract every candidate implements.
func newCandidateRouter(view routing.SimNetworkView, source route.Vertex,
	localBalances map[uint64]lnwire.MilliSatoshi,
	spec *routing.SimPaymentSpec) (routing.SimRouter, error) {

	return &seedRouter{
		view:     view,
		source:   source,
		local:    localBalances,
		spec:     spec,
		banned:   make(map[uint64]bool),
		maxShard: spec.Amount,
	}, nil
}

type seedRouter struct {
	view   routing.SimNetworkView
	source route.Vertex
	local  map[uint64]lnwire.MilliSatoshi
	spec   *routing.SimPaymentSpec

	// banned channels are never used again in this payment.
	banned map[uint64]bool

	// maxShard is the largest shard to try; it halves on no path.
	maxShard lnwire.MilliSatoshi

	// feesCommitted is the fee of every shard in flight or settled.
	feesCommitted lnwire.MilliSatoshi

	// finished is set when the receiver rejected the payment.
	finished bool
}

// RequestRoute returns the cheapest route for as much of amt as the current
// shard size allows, halving the shard while no route is found.
func (r *seedRouter) RequestRoute(amt lnwire.MilliSatoshi, inFlight uint32) (*route.Route, error) {
	if r.finished {
		return nil, errors.New("payment rejected by the receiver")
	}
	for {
		shard := min(amt, r.maxShard)
		rt := r.cheapestRoute(shard)
		if rt != nil {
			r.feesCommitted += rt.TotalFees()
			r.local[rt.Hops[0].ChannelID] -= rt.TotalAmount
			return rt, nil
		}
		canSplit := r.spec.MaxParts > 1 && inFlight+1 < r.spec.MaxParts
		if !canSplit || shard/2 < minShardMsat {
			return nil, errNoRoute
		}
		r.maxShard = shard / 2
	}
}

// ReportAttempt bans the channel the failure points at. The sender's own
// balance was debited when the shard left; a failure gives it back.
func (r *seedRouter) ReportAttempt(_ uint64, rt *route.Route, res *routing.SimAttemptResult) error {
	if res.Failure == nil {
		return nil
	}
	r.feesCommitted -= rt.TotalFees()
	r.local[rt.Hops[0].ChannelID] += rt.TotalAmount
	idx := res.FailureSourceIdx
	switch {
	case idx == len(rt.Hops):
		// The receiver itself failed the payment: no point going on.
		r.finished = true
	case idx >= 0:
		// The failing node could not forward over its outgoing channel.
		r.banned[rt.Hops[idx].ChannelID] = true
	default:
		// Unattributable: distrust every remote channel of the route.
		for _, h := range rt.Hops[1:] {
			r.banned[h.ChannelID] = true
		}
	}
	return nil
}

// pathNode is a node reached by the backward search: the amount it must
// receive to deliver the shard, and the channel it forwards over.
type pathNode struct {
	vertex  route.Vertex
	receive lnwire.MilliSatoshi
	hops    int
	next    route.Vertex
	channel uint64
	delta   uint16
	index   int
}

// cheapestRoute runs Dijkstra backward from the target, minimising the
// amount the sender must send, and builds the route.
func (r *seedRouter) cheapestRoute(shard lnwire.MilliSatoshi) *route.Route {
	best := map[route.Vertex]*pathNode{}
	done := map[route.Vertex]bool{}
	start := &pathNode{vertex: r.spec.Target, receive: shard}
	best[start.vertex] = start
	queue := &nodeQueue{start}
	for queue.Len() > 0 {
		n := heap.Pop(queue).(*pathNode)
		if done[n.vertex] {
			continue
		}
		done[n.vertex] = true
		if n.vertex == r.source {
			return r.buildRoute(best, shard)
		}
		if n.hops >= maxHops {
			continue
		}
		_ = r.view.ForEachNodeDirectedChannel(n.vertex, func(ch *routing.DirectedChannel) error {
			from := ch.OtherNode
			if done[from] || r.banned[ch.ChannelID] || !r.usable(ch, from, n.receive) {
				return nil
			}
			receive := n.receive
			delta := uint16(0)
			if from != r.source {
				receive += ch.InPolicy.ComputeFee(n.receive)
				delta = ch.InPolicy.TimeLockDelta
			}
			if old, ok := best[from]; ok && old.receive <= receive {
				return nil
			}
			p := &pathNode{vertex: from, receive: receive, hops: n.hops + 1,
				next: n.vertex, channel: ch.ChannelID, delta: delta}
			best[from] = p
			heap.Push(queue, p)
			return nil
		})
	}
	return nil
}

// usable reports whether from can forward amt over ch toward the node ch is
// listed for.
func (r *seedRouter) usable(ch *routing.DirectedChannel, from route.Vertex, amt lnwire.MilliSatoshi) bool {
	if from == r.source {
		return r.local[ch.ChannelID] >= amt
	}
	p := ch.InPolicy
	return p != nil && !p.IsDisabled && amt >= p.MinHTLC && amt <= p.MaxHTLC
}

// buildRoute walks the search result from the sender to the target.
// chain[i] is the i-th node of the path (the sender first) with the channel
// it forwards over and that channel's cltv delta.
func (r *seedRouter) buildRoute(best map[route.Vertex]*pathNode, shard lnwire.MilliSatoshi) *route.Route {
	var chain []*pathNode
	for n := best[r.source]; n.vertex != r.spec.Target; n = best[n.next] {
		chain = append(chain, n)
	}
	n := len(chain)
	// lockOver[i] is the time lock of the HTLC over channel i: the final
	// lock on the last channel, plus each forwarding node's delta before.
	lockOver := make([]uint32, n)
	lockOver[n-1] = r.view.BlockHeight() + uint32(r.spec.FinalCLTVDelta) + finalCltvPadding
	for i := n - 2; i >= 0; i-- {
		lockOver[i] = lockOver[i+1] + uint32(chain[i+1].delta)
	}
	hops := make([]*route.Hop, n)
	for i := range hops {
		hops[i] = &route.Hop{
			PubKeyBytes:      chain[i].next,
			ChannelID:        chain[i].channel,
			AmtToForward:     shard,
			OutgoingTimeLock: lockOver[n-1],
		}
		if i+1 < n {
			hops[i].AmtToForward = best[chain[i+1].next].receive
			hops[i].OutgoingTimeLock = lockOver[i+1]
		}
	}
	total := best[r.source].receive
	rt, err := route.NewRouteFromHops(total, lockOver[0], r.source, hops)
	if err != nil || rt.TotalTimeLock > r.spec.CltvLimit ||
		r.feesCommitted+rt.TotalFees() > r.spec.FeeLimit {
		return nil
	}
	return rt
}

// nodeQueue is a min-heap of search nodes by amount to receive.
type nodeQueue []*pathNode

func (q nodeQueue) Len() int           { return len(q) }
func (q nodeQueue) Less(i, j int) bool { return q[i].receive < q[j].receive }
func (q nodeQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i]; q[i].index, q[j].index = i, j }
func (q *nodeQueue) Push(x any)        { n := x.(*pathNode); n.index = len(*q); *q = append(*q, n) }
func (q *nodeQueue) Pop() any {
	old := *q
	n := old[len(old)-1]
	*q = old[:len(old)-1]
	return n
}
