package sim

import (
	"fmt"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
	"github.com/routesim-evolve/routesim/scenario"
)

// gossipView is the router's window on the world: announced policies (as
// corrected by the channel updates failures brought back), capacities,
// features and the clock. It never shows hidden balances.
type gossipView struct {
	net   *Network
	clock viewClock
}

// viewClock is the time a view shows: the world's virtual clock, or a fixed
// moment for a graph alone.
type viewClock interface {
	Now() time.Time
	BlockHeight() uint32
}

// view is the world's gossip view, the one its routers see.
func (w *World) view() *gossipView { return &gossipView{net: w.net, clock: w} }

// fixedClock is the moment a view of a graph alone shows.
type fixedClock struct {
	now    time.Time
	height uint32
}

func (c fixedClock) Now() time.Time      { return c.now }
func (c fixedClock) BlockHeight() uint32 { return c.height }

// NewGraphView is the gossip view of a graph alone, at a fixed moment: what
// a router sees of a network it did not simulate (a real node's graph, read
// by routesim_evolve/realnet). Its nodes are in file order and each node's
// channels in channel-id order, as in a simulated world's view.
func NewGraphView(g *scenario.Graph, now time.Time, height uint32) (routing.SimNetworkView, error) {
	net, err := newNetwork(g)
	if err != nil {
		return nil, err
	}
	return &gossipView{net: net, clock: fixedClock{now: now, height: height}}, nil
}

var _ routing.SimNetworkView = (*gossipView)(nil)

// ForEachNode calls cb for every node, in graph file order.
func (v *gossipView) ForEachNode(cb func(node route.Vertex) error) error {
	for _, n := range v.net.nodes {
		if err := cb(n); err != nil {
			return err
		}
	}
	return nil
}

// ForEachNodeDirectedChannel calls cb for each channel of node, by channel
// id, with InPolicy the policy the other end announced toward node.
func (v *gossipView) ForEachNodeDirectedChannel(node route.Vertex,
	cb func(channel *routing.DirectedChannel) error) error {

	net := v.net
	idx, ok := net.nodeIndex[node]
	if !ok {
		return fmt.Errorf("unknown node %x", node[:])
	}
	for _, ci := range net.adjacent[idx] {
		c := &net.channels[ci]
		d := c.direction(idx)
		dc := &routing.DirectedChannel{
			ChannelID:    c.id,
			IsNode1:      d == 0,
			OtherNode:    net.nodes[c.nodes[1-d]],
			Capacity:     int64(c.capacity / 1000),
			OutPolicySet: c.announced[d] != nil,
		}
		if in := c.announced[1-d]; in != nil {
			policy := *in
			dc.InPolicy = &policy
		}
		if own := c.announced[d]; own != nil {
			dc.InboundFeeBaseMSat, dc.InboundFeeRate = own.InboundFeeBaseMSat, own.InboundFeeRate
		}
		if err := cb(dc); err != nil {
			return err
		}
	}
	return nil
}

// FetchNodeFeatures returns the node's announced features (empty for an
// unknown node).
func (v *gossipView) FetchNodeFeatures(node route.Vertex) *lnwire.FeatureVector {
	idx, ok := v.net.nodeIndex[node]
	if !ok {
		return lnwire.EmptyFeatureVector()
	}
	return v.net.features[idx].Clone()
}

// Now is the virtual time.
func (v *gossipView) Now() time.Time { return v.clock.Now() }

// BlockHeight is the current block height.
func (v *gossipView) BlockHeight() uint32 { return v.clock.BlockHeight() }
