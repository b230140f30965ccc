package ldkref

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// graph is the gossip view as the bridge takes it: nodes in the view's
// order, channels by id with node 1's policy first. It is read whole once,
// at the run's first payment; afterwards only the channels failures updated
// are sent again (gossip), and LDK removes what it removes itself.
func (r *Reference) graph(view routing.SimNetworkView) (*graphMsg, error) {
	msg := &graphMsg{Op: "graph", NowS: view.Now().Unix()}
	r.nodes = make(map[route.Vertex]int)
	err := view.ForEachNode(func(n route.Vertex) error {
		r.nodes[n] = len(r.ids)
		r.ids = append(r.ids, n)
		msg.Nodes = append(msg.Nodes, hex.EncodeToString(n[:]))
		return nil
	})
	if err != nil {
		return nil, err
	}
	channels := make(map[uint64]*channelMsg)
	r.ends = make(map[uint64][2]int)
	for i, n := range r.ids {
		err := view.ForEachNodeDirectedChannel(n, func(dc *routing.DirectedChannel) error {
			other, ok := r.nodes[dc.OtherNode]
			if !ok {
				return fmt.Errorf("channel %d: unknown node %x", dc.ChannelID, dc.OtherNode[:])
			}
			ch := channels[dc.ChannelID]
			if ch == nil {
				ch = &channelMsg{SCID: dc.ChannelID, Node1: i, Node2: other}
				if !dc.IsNode1 {
					ch.Node1, ch.Node2 = other, i
				}
				channels[dc.ChannelID] = ch
				r.ends[dc.ChannelID] = [2]int{ch.Node1, ch.Node2}
			}
			ch.learn(dc)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(channels)) {
		msg.Channels = append(msg.Channels, *channels[id])
	}
	return msg, nil
}

// learn takes what a listing of the channel for one of its ends shows: the
// capacity, and the other end's policy (InPolicy), which is node 2's when
// the listing is node 1's.
func (ch *channelMsg) learn(dc *routing.DirectedChannel) {
	ch.CapacitySat = dc.Capacity
	if dc.InPolicy == nil {
		return
	}
	side := 1
	if !dc.IsNode1 {
		side = 0
	}
	ch.Policies[side] = policy(dc.InPolicy)
}

// gossip hands LDK the current policies of the channels failures updated
// since the last payment. A real node learns them by gossip in the minutes
// between payments; LDK 0.2 itself never applies an update from a failure.
func (r *Reference) gossip(view routing.SimNetworkView) error {
	if len(r.changed) == 0 {
		return nil
	}
	ids := slices.Sorted(maps.Keys(r.changed))
	clear(r.changed)
	msg := &gossipMsg{Op: "gossip"}
	for _, id := range ids {
		ch, err := r.channelNow(view, id)
		if err != nil {
			return r.fail(err)
		}
		if ch != nil {
			msg.Channels = append(msg.Channels, *ch)
		}
	}
	_, err := r.call(msg)
	return err
}

// channelNow is a channel with the policies the view has now, or nil for
// a channel the graph did not have.
func (r *Reference) channelNow(view routing.SimNetworkView, id uint64) (*channelMsg, error) {
	ends, ok := r.ends[id]
	if !ok {
		return nil, nil
	}
	ch := &channelMsg{SCID: id, Node1: ends[0], Node2: ends[1]}
	for _, end := range ends {
		err := view.ForEachNodeDirectedChannel(r.ids[end], func(dc *routing.DirectedChannel) error {
			if dc.ChannelID == id {
				ch.learn(dc)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return ch, nil
}

func policy(p *routing.CachedEdgePolicy) *policyMsg {
	out := &policyMsg{
		Disabled:    p.IsDisabled,
		CltvDelta:   p.TimeLockDelta,
		HtlcMinMsat: uint64(p.MinHTLC),
		FeeBaseMsat: uint32(min(p.FeeBaseMSat, 1<<32-1)),
		FeePPM:      uint32(min(p.FeeProportionalMillionths, 1<<32-1)),
	}
	if p.HasMaxHTLC {
		most := uint64(p.MaxHTLC)
		out.HtlcMaxMsat = &most
	}
	return out
}

// payment describes a payment as LDK's channel manager would: the
// invoice's amount, limits and features, and the sender's usable channels
// with what each can send now.
func (r *Reference) payment(view routing.SimNetworkView, source route.Vertex,
	balances map[uint64]lnwire.MilliSatoshi, spec *routing.SimPaymentSpec) (*payMsg, error) {

	target, ok := r.nodes[spec.Target]
	if !ok {
		return nil, fmt.Errorf("target %x is not in the graph", spec.Target[:])
	}
	seed := sha256.Sum256(append([]byte("routesim-ldk payment"), spec.PaymentAddr[:]...))
	msg := &payMsg{
		Op:           "pay",
		NowS:         view.Now().Unix(),
		Height:       view.BlockHeight(),
		Source:       r.nodes[source],
		Target:       target,
		AmountMsat:   uint64(spec.Amount),
		FeeLimitMsat: uint64(spec.FeeLimit),
		MaxParts:     spec.MaxParts,
		CltvLimit:    spec.CltvLimit,
		FinalCltv:    spec.FinalCLTVDelta,
		MPP:          allowsMPP(view.FetchNodeFeatures(spec.Target)),
		Seed:         hex.EncodeToString(seed[:]),
	}
	err := view.ForEachNodeDirectedChannel(source, func(dc *routing.DirectedChannel) error {
		balance, ok := balances[dc.ChannelID]
		if !ok {
			return nil
		}
		msg.FirstHops = append(msg.FirstHops, firstHopMsg{
			SCID: dc.ChannelID, Peer: r.nodes[dc.OtherNode],
			CapacitySat: dc.Capacity, OutboundMsat: uint64(balance),
		})
		return nil
	})
	return msg, err
}

// allowsMPP reads the receiver's features as lndref does: a node that
// announced none is taken to allow MPP, as an invoice's features would.
func allowsMPP(f *lnwire.FeatureVector) bool {
	if f == nil || f.IsEmpty() {
		return true
	}
	return f.HasFeature(lnwire.MPPOptional)
}
