package routekit

import (
	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// NodeID is a node's index in a Graph, dense from 0 in the view's order.
type NodeID = int32

// Edge is one direction of a channel: From may forward to To over it under
// Policy, the policy From announced.
type Edge struct {
	// From and To are the sending and the receiving node.
	From, To NodeID

	// ChannelID is the short channel id.
	ChannelID uint64

	// Channel is the channel's dense index in the graph, from 0, shared by
	// both directions: a slice indexed by it is a per-channel table.
	Channel int32

	// Capacity is the channel's announced capacity.
	Capacity lnwire.MilliSatoshi

	// FromNode1 is true when From is the channel's node 1 (the smaller
	// key): sending lowers node 1's balance.
	FromNode1 bool

	// Policy is From's policy for this direction; nil when none was
	// announced.
	Policy *routing.CachedEdgePolicy

	// InboundBase and InboundRate are To's inbound fee on this channel
	// (lnd 0.18+): what To adds to its fee, in msat and ppm of what it
	// forwards plus its outbound fee, for an HTLC that arrives over it;
	// almost always a discount (negative), zero where To announces none.
	InboundBase, InboundRate int32
}

// Arriving is what To must receive over e to forward fwd on, where recv is
// fwd plus To's outbound fee: recv with To's inbound fee on e added, as
// lnd's CheckHtlcForward adds it, and never less than fwd (a fee below 0
// is 0).
func (e *Edge) Arriving(fwd, recv lnwire.MilliSatoshi) lnwire.MilliSatoshi {
	in := routing.CachedEdgePolicy{InboundFeeBaseMSat: e.InboundBase, InboundFeeRate: e.InboundRate}
	return lnwire.MilliSatoshi(max(int64(recv)+in.InboundFee(recv), int64(fwd)))
}

// Usable reports whether remote forwarding over e is possible at all: a
// policy is known and does not disable the channel.
func (e *Edge) Usable() bool {
	return e.Policy != nil && !e.Policy.IsDisabled
}

// Graph is a router's copy of the gossip view, indexed for search. Build it
// once per scenario (the first payment's view) and call SetView for every
// later payment: the nodes and channels stay, the policies a failure updates
// are re-read by Refresh.
type Graph struct {
	view     routing.SimNetworkView
	index    map[route.Vertex]NodeID
	nodes    []route.Vertex
	channels map[uint64]int32 // dense index per short channel id
	in       [][]Edge
	flow     *flowNet
}

// NewGraph reads the whole view once.
func NewGraph(view routing.SimNetworkView) *Graph {
	g := &Graph{view: view, index: map[route.Vertex]NodeID{}, channels: map[uint64]int32{}}
	_ = view.ForEachNode(func(n route.Vertex) error {
		g.index[n] = NodeID(len(g.nodes))
		g.nodes = append(g.nodes, n)
		return nil
	})
	g.in = make([][]Edge, len(g.nodes))
	for i := range g.nodes {
		g.Refresh(NodeID(i))
	}
	return g
}

// SetView points later refreshes at the view of the current payment.
func (g *Graph) SetView(view routing.SimNetworkView) { g.view = view }

// NumNodes is the number of nodes.
func (g *Graph) NumNodes() int { return len(g.nodes) }

// NumChannels is the number of channels, one more than the largest
// Edge.Channel.
func (g *Graph) NumChannels() int { return len(g.channels) }

// channel is the dense index of channel scid, given on first sight.
func (g *Graph) channel(scid uint64) int32 {
	i, ok := g.channels[scid]
	if !ok {
		i = int32(len(g.channels))
		g.channels[scid] = i
	}
	return i
}

// Vertex is the public key of node v.
func (g *Graph) Vertex(v NodeID) route.Vertex { return g.nodes[v] }

// ID is the index of the node with key v.
func (g *Graph) ID(v route.Vertex) (NodeID, bool) {
	id, ok := g.index[v]
	return id, ok
}

// In is the list of channels into node v. The slice is the graph's own:
// a Refresh of v replaces it.
func (g *Graph) In(v NodeID) []Edge { return g.in[v] }

// Refresh re-reads the channels into node v, whose policies a failure's
// channel update may have changed.
func (g *Graph) Refresh(v NodeID) {
	var list []Edge
	_ = g.view.ForEachNodeDirectedChannel(g.nodes[v], func(ch *routing.DirectedChannel) error {
		from, ok := g.index[ch.OtherNode]
		if !ok {
			return nil
		}
		list = append(list, Edge{
			From:      from,
			To:        v,
			ChannelID: ch.ChannelID,
			Channel:   g.channel(ch.ChannelID),
			Capacity:  lnwire.MilliSatoshi(ch.Capacity) * 1000,
			FromNode1: !ch.IsNode1,
			Policy:    ch.InPolicy,
			// The listed node is To: its own inbound fee on the channel.
			InboundBase: ch.InboundFeeBaseMSat,
			InboundRate: ch.InboundFeeRate,
		})
		return nil
	})
	g.in[v] = list
}

// EdgeInto finds the edge over channel scid into node v, or nil.
func (g *Graph) EdgeInto(v NodeID, scid uint64) *Edge {
	for i := range g.in[v] {
		if g.in[v][i].ChannelID == scid {
			return &g.in[v][i]
		}
	}
	return nil
}

// Hop is channel j of rt (0 is the sender's own) and the amount it carries;
// nil when the channel is not in the graph.
func (g *Graph) Hop(rt *route.Route, j int) (*Edge, lnwire.MilliSatoshi) {
	amt := rt.TotalAmount
	if j > 0 {
		amt = rt.Hops[j-1].AmtToForward
	}
	v, ok := g.index[rt.Hops[j].PubKeyBytes]
	if !ok {
		return nil, amt
	}
	return g.EdgeInto(v, rt.Hops[j].ChannelID), amt
}

// ForEachRemoteHop calls f for every channel of rt after the sender's own,
// with its position (from 1) and amount; channels missing from the graph are
// skipped.
func (g *Graph) ForEachRemoteHop(rt *route.Route, f func(j int, e *Edge, amt lnwire.MilliSatoshi)) {
	for j := 1; j < len(rt.Hops); j++ {
		if e, amt := g.Hop(rt, j); e != nil {
			f(j, e, amt)
		}
	}
}

// RefreshRoute re-reads the policies of rt's channels, which a failure's
// channel update may have changed, and returns the first channel whose
// policy changed (0 if none): the one that truly failed on a stale policy.
func (g *Graph) RefreshRoute(rt *route.Route) int {
	changed := 0
	for j := 1; j < len(rt.Hops); j++ {
		v, ok := g.index[rt.Hops[j].PubKeyBytes]
		if !ok {
			continue
		}
		var old routing.CachedEdgePolicy
		if before := g.EdgeInto(v, rt.Hops[j].ChannelID); before != nil && before.Policy != nil {
			old = *before.Policy
		}
		g.Refresh(v)
		after := g.EdgeInto(v, rt.Hops[j].ChannelID)
		if changed == 0 && after != nil && after.Policy != nil && *after.Policy != old {
			changed = j
		}
	}
	return changed
}
