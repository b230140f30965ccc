package sim

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
	"github.com/routesim-evolve/routesim/scenario"
)

// Replaying real attempts: the simulator's forwarding rules (forward), run
// on the channel state real nodes showed just before an attempt, so that
// each real outcome can be set beside what the simulator predicts from the
// same state (routesim_evolve/realnet's agreement table, docs/realnet.md).

// Errors of an observation the rules cannot replay.
var (
	// ErrObservedState is an observed channel whose numbers cannot be a
	// channel's state: funds that exceed the capacity, a funder that is
	// neither end.
	ErrObservedState = errors.New("observed channel state is inconsistent")

	// ErrUnobservedHop is a route over a channel nobody observed, or one
	// that does not connect the hops.
	ErrUnobservedHop = errors.New("route crosses a channel that was not observed")
)

// ObservedChannel is one channel as a node on the route showed it (lnd's
// ListChannels and each end's own policy). Index d of each pair is the end
// Nodes[d], in any order.
type ObservedChannel struct {
	ChannelID uint64
	Nodes     [2]route.Vertex
	Capacity  lnwire.MilliSatoshi

	// Balance[d] is end d's balance on the commitment as lnd shows it:
	// after the commitment fee and the anchors on the funder's side,
	// before its reserve, without the HTLCs in flight.
	Balance [2]lnwire.MilliSatoshi

	// Reserve[d] is what end d must keep (its channel reserve).
	Reserve [2]lnwire.MilliSatoshi

	// Funder is the end that opened the channel and pays its fees.
	Funder int

	CommitFee lnwire.MilliSatoshi
	FeePerKw  uint64
	DustLimit lnwire.MilliSatoshi

	// InFlight[d] and InFlightAmount[d] are the HTLCs end d offered that
	// are still in flight: how many, and their sum.
	InFlight       [2]int
	InFlightAmount [2]lnwire.MilliSatoshi

	// MaxHTLCs[d] is how many HTLCs end d may have in flight (the other
	// end's max_accepted_htlcs).
	MaxHTLCs [2]int

	// Policy[d] is end d's own policy; nil when it has none.
	Policy [2]*routing.CachedEdgePolicy
}

// Observation is the state of the network before one real round: the
// chain height, every channel of the routes' forwarding nodes, and the
// peers one of them had no active link to.
type Observation struct {
	Height   uint32
	Source   route.Vertex
	Channels []ObservedChannel
	Offline  []route.Vertex
}

// Prediction is what the simulator's rules say of an attempt: the failing
// node's position (0 the sender, i+1 hop i; -1 when the shard arrives and
// the receiver accepts it) and the failure, with whether it carries a
// channel update.
type Prediction struct {
	FailIndex int
	Failure   lnwire.FailureMessage
	HasUpdate bool
}

// replayStart is the virtual time a replay runs at: any time will do, since
// a replay reads no schedule and only stamps channel updates with it.
var replayStart = time.Unix(1_700_000_000, 0).UTC()

// PredictRound runs the simulator's forwarding rules on the observed state
// for the routes of one round, sent in this order, whose receiver's invoice
// asks for finalCltvDelta, and returns what they predict for each. The
// shards go through together, as in a simulated round (forwardRound).
func PredictRound(obs Observation, routes []*route.Route, finalCltvDelta uint16) ([]Prediction, error) {
	w, err := replayWorld(obs)
	if err != nil {
		return nil, err
	}
	for _, rt := range routes {
		if err := w.checkObservedRoute(rt); err != nil {
			return nil, err
		}
	}
	out := make([]Prediction, 0, len(routes))
	for _, f := range w.forwardRound(routes, finalCltvDelta) {
		out = append(out, Prediction{FailIndex: f.failIdx, Failure: f.failure, HasUpdate: f.update != nil})
	}
	return out, nil
}

// replayWorld is a world holding just the observed channels, in the state
// observed, at the observed height.
func replayWorld(obs Observation) (*World, error) {
	net := &Network{nodeIndex: map[route.Vertex]int{}, chanIndex: map[uint64]int{}}
	addNode := func(v route.Vertex) int {
		if i, ok := net.nodeIndex[v]; ok {
			return i
		}
		net.nodeIndex[v] = len(net.nodes)
		net.nodes = append(net.nodes, v)
		net.adjacent = append(net.adjacent, nil)
		return len(net.nodes) - 1
	}
	addNode(obs.Source)
	for _, o := range obs.Channels {
		if _, dup := net.chanIndex[o.ChannelID]; dup {
			return nil, fmt.Errorf("%w: channel %s observed twice", ErrObservedState,
				scenario.FormatSCID(o.ChannelID))
		}
		c, err := observedChannel(o)
		if err != nil {
			return nil, err
		}
		c.nodes = [2]int{addNode(o.Nodes[0]), addNode(o.Nodes[1])}
		if bytes.Compare(o.Nodes[0][:], o.Nodes[1][:]) > 0 {
			c.flip()
		}
		idx := len(net.channels)
		net.channels = append(net.channels, c)
		net.chanIndex[c.id] = idx
		for _, n := range c.nodes {
			net.adjacent[n] = append(net.adjacent[n], idx)
		}
	}
	net.sortAdjacent()
	w := &World{
		sc:     &scenario.Scenario{BlockHeight: obs.Height, StartTime: replayStart},
		net:    net,
		source: net.nodeIndex[obs.Source],
		now:    replayStart,
	}
	for _, v := range obs.Offline {
		if i, ok := net.nodeIndex[v]; ok {
			if w.peers == nil {
				w.peers = make([]*peerSchedule, len(net.nodes))
			}
			w.peers[i] = offlineThroughout(replayStart)
		}
	}
	return w, nil
}

// observedChannel is the simulator's channel for what lnd showed. lnd's
// balances are net of the commitment fee and, on the funder's side, of the
// anchors; the simulator's include both, and keep the anchors back as it
// keeps the reserve (rules.go), so that what each end may spend comes out
// as lnd's availableCommitmentBalance computes it. The anchors are what the
// capacity holds beyond the balances, the fee and the HTLCs in flight.
func observedChannel(o ObservedChannel) (channel, error) {
	c := channel{id: o.ChannelID, capacity: o.Capacity, dust: o.DustLimit}
	if o.Funder != 0 && o.Funder != 1 {
		return c, fmt.Errorf("%w: channel %s: funder %d is neither end", ErrObservedState,
			scenario.FormatSCID(o.ChannelID), o.Funder)
	}
	accounted := o.Balance[0] + o.Balance[1] + o.CommitFee + o.InFlightAmount[0] + o.InFlightAmount[1]
	if accounted > o.Capacity {
		return c, fmt.Errorf("%w: channel %s: balances, fee and HTLCs (%d msat) exceed the capacity (%d msat)",
			ErrObservedState, scenario.FormatSCID(o.ChannelID), accounted, o.Capacity)
	}
	anchors := o.Capacity - accounted
	for d := 0; d < 2; d++ {
		c.local[d] = o.Balance[d]
		c.held[d] = o.InFlightAmount[d]
		c.keep[d] = o.Reserve[d]
		c.slotLimit[d] = o.MaxHTLCs[d]
		c.slotsUsed[d] = o.InFlight[d]
		if p := o.Policy[d]; p != nil {
			pol := *p
			pol.ChannelID = o.ChannelID
			c.actual[d] = &pol
			c.announced[d] = &pol
		}
	}
	f := o.Funder
	c.local[f] += o.CommitFee + anchors
	c.keep[f] += anchors
	c.feeRate[f] = o.FeePerKw
	return c, nil
}

// flip swaps a channel's ends, so that end 0 is node 1 (the smaller key),
// the convention forward and channelUpdate keep.
func (c *channel) flip() {
	c.nodes[0], c.nodes[1] = c.nodes[1], c.nodes[0]
	c.announced[0], c.announced[1] = c.announced[1], c.announced[0]
	c.actual[0], c.actual[1] = c.actual[1], c.actual[0]
	c.local[0], c.local[1] = c.local[1], c.local[0]
	c.held[0], c.held[1] = c.held[1], c.held[0]
	c.keep[0], c.keep[1] = c.keep[1], c.keep[0]
	c.feeRate[0], c.feeRate[1] = c.feeRate[1], c.feeRate[0]
	c.slotLimit[0], c.slotLimit[1] = c.slotLimit[1], c.slotLimit[0]
	c.slotsUsed[0], c.slotsUsed[1] = c.slotsUsed[1], c.slotsUsed[0]
	for d := 0; d < 2; d++ {
		if c.actual[d] != nil {
			c.actual[d].IsNode1 = d == 0
		}
	}
}

// checkObservedRoute checks that every hop of rt crosses an observed
// channel from the node before it.
func (w *World) checkObservedRoute(rt *route.Route) error {
	if len(rt.Hops) == 0 {
		return fmt.Errorf("%w: the route has no hops", ErrUnobservedHop)
	}
	from := w.source
	for i, hop := range rt.Hops {
		next, ok := w.net.nextNode(hop.ChannelID, from, hop.PubKeyBytes)
		if !ok {
			return fmt.Errorf("%w: hop %d, channel %s", ErrUnobservedHop, i,
				scenario.FormatSCID(hop.ChannelID))
		}
		from = next
	}
	return nil
}
