package sim

import (
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// TrueEdge is one channel direction as it really is at this moment: its
// spendable balance (HTLCs in flight, the reserve and the funder's fee
// buffer already deducted), its free HTLC slots and the policy its
// node really applies. Only trusted reference routers see it (the oracle);
// candidates cannot import this package.
type TrueEdge struct {
	ChannelID uint64
	From, To  route.Vertex

	// Balance is what From can send over the channel now, in one HTLC.
	Balance lnwire.MilliSatoshi

	// HTLCCost is what each further HTLC in flight on the channel, either
	// way, takes from Balance: on the funder's side the fee buffer grows
	// with the commitment's weight; nothing on the other.
	HTLCCost lnwire.MilliSatoshi

	// FreeSlots is how many more HTLCs the direction may carry now
	// (math.MaxInt without a slot limit).
	FreeSlots int

	// Online is whether To is online now: From has a link to forward over.
	Online bool

	// Policy is From's actual policy (a copy); nil when it has none.
	Policy *routing.CachedEdgePolicy
}

// TrueEdges returns every channel direction with its true balance and
// policy, in channel order, direction 0 then 1 (an edge's reverse is at its
// index xor 1): the clairvoyant's view of the network.
func (w *World) TrueEdges() []TrueEdge {
	net := w.net
	out := make([]TrueEdge, 0, 2*len(net.channels))
	for i := range net.channels {
		c := &net.channels[i]
		for d := 0; d < 2; d++ {
			e := TrueEdge{
				ChannelID: c.id,
				From:      net.nodes[c.nodes[d]],
				To:        net.nodes[c.nodes[1-d]],
				Balance:   c.spendable(d),
				HTLCCost:  c.htlcCost(d),
				FreeSlots: c.freeSlots(d),
				Online:    w.online(c.nodes[1-d], w.now),
			}
			if p := c.actual[d]; p != nil {
				policy := *p
				e.Policy = &policy
			}
			out = append(out, e)
		}
	}
	return out
}

// Source is the sending node.
func (w *World) Source() route.Vertex { return w.sourceVertex() }

// ChannelStart is one channel as the world begins, before its first
// payment: what a network of real nodes must be built with to play the same
// world (routesim_evolve/realnet). Only trusted tools see it.
type ChannelStart struct {
	ChannelID uint64
	Nodes     [2]route.Vertex
	Capacity  lnwire.MilliSatoshi

	// Local[d] is end d's balance on the channel: its reserve, and on
	// the funder's side the anchors and the commitment fee, included.
	Local [2]lnwire.MilliSatoshi

	// Funder is the end that opened the channel and pays its commitment
	// fee; -1 when the scenario plays no rules or charges no commitment
	// fee (no funder is drawn, or none pays).
	Funder int

	// SlotLimit[d] is how many HTLCs direction d may carry at once (the
	// max_accepted_htlcs of the node at end 1-d); 0 when unlimited.
	// BusySlots[d] of them others' HTLCs hold for the whole scenario.
	SlotLimit [2]int
	BusySlots [2]int

	// Policy[d] is the policy end d applies (a copy); nil when it has none.
	Policy [2]*routing.CachedEdgePolicy
}

// ChannelStarts returns every channel as the world begins, in channel
// order. Call it before the first payment: it reads the current state.
func (w *World) ChannelStarts() []ChannelStart {
	out := make([]ChannelStart, 0, len(w.net.channels))
	for i := range w.net.channels {
		c := &w.net.channels[i]
		s := ChannelStart{
			ChannelID: c.id,
			Nodes:     [2]route.Vertex{w.net.nodes[c.nodes[0]], w.net.nodes[c.nodes[1]]},
			Capacity:  c.capacity,
			Local:     c.local,
			Funder:    -1,
			SlotLimit: c.slotLimit,
			BusySlots: c.slotsUsed,
		}
		for d := 0; d < 2; d++ {
			if c.feeRate[d] > 0 {
				s.Funder = d
			}
			if p := c.actual[d]; p != nil {
				policy := *p
				s.Policy[d] = &policy
			}
		}
		out = append(out, s)
	}
	return out
}

// FlakyNodes returns the nodes whose peers see them come and go (the
// scenario's rules.peers), in graph order.
func (w *World) FlakyNodes() []route.Vertex {
	var out []route.Vertex
	for i, s := range w.peers {
		if s != nil {
			out = append(out, w.net.nodes[i])
		}
	}
	return out
}

// TrafficEvent is one background shift as the world's stream draws it: up
// to Amount from From to To over the channel, At after the scenario's
// start. What moves is no more than From may spend then.
type TrafficEvent struct {
	At        time.Duration
	ChannelID uint64
	From, To  route.Vertex
	Amount    lnwire.MilliSatoshi
}

// TrafficUntil plays the background traffic up to span after the
// scenario's start and returns its events, in order: what a network of real
// nodes must pay between other nodes to play the same world. It moves this
// world's balances as the simulator does, so call it on a world of its own,
// after ChannelStarts.
func (w *World) TrafficUntil(span time.Duration) []TrafficEvent {
	var out []TrafficEvent
	t := w.traffic
	t.observe = func(ev trafficEvent) {
		c := &w.net.channels[ev.channel]
		out = append(out, TrafficEvent{
			At: ev.at.Sub(w.sc.StartTime), ChannelID: c.id, Amount: ev.amt,
			From: w.net.nodes[c.nodes[ev.dir]], To: w.net.nodes[c.nodes[1-ev.dir]],
		})
	}
	defer func() { t.observe = nil }()
	w.advanceTo(w.sc.StartTime.Add(span))
	return out
}
