package sim

import (
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

	// Balance is what From can send over the channel now.
	Balance lnwire.MilliSatoshi

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
