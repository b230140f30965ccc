// Package sim is the payment simulator: a network of channels with hidden
// liquidity, hop-by-hop HTLC forwarding with policy checks, background
// traffic on a virtual clock, atomic multi-part holds, a degraded failure
// channel, and the runner that plays a scenario's payments through a router.
package sim

import (
	"bytes"
	"fmt"
	"math"
	"sort"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/lightningnetwork/lnd/tlv"
	"github.com/routesim-evolve/routesim/internal/flownet"
	"github.com/routesim-evolve/routesim/routing"
	"github.com/routesim-evolve/routesim/scenario"
)

// defaultFeatures are the features of a node whose graph entry lists none:
// what every current implementation announces for payments (TLV onion,
// payment address, basic MPP).
var defaultFeatures = []lnwire.FeatureBit{
	lnwire.TLVOnionPayloadRequired,
	lnwire.PaymentAddrRequired,
	lnwire.MPPOptional,
}

// channel is one channel with both its announced (gossip) and actual
// policies and its hidden balance. Direction 0 is node1 → node2.
//
// Invariant: local[0] + local[1] + held[0] + held[1] == capacity.
type channel struct {
	id       uint64
	nodes    [2]int
	capacity lnwire.MilliSatoshi

	// announced is what the sender's gossip says; a channel update that
	// comes back with a failure overwrites it with the actual policy.
	announced [2]*routing.CachedEdgePolicy

	// actual is what the forwarding node enforces.
	actual [2]*routing.CachedEdgePolicy

	// local[d] is what the node at end d can send over the channel now.
	local [2]lnwire.MilliSatoshi

	// held[d] is what is locked in HTLCs sent in direction d.
	held [2]lnwire.MilliSatoshi

	// The rules' state (rules.go), all zero when the scenario plays no
	// rules: keep[d] is what end d can never spend (its reserve, and the
	// anchors on the funder's side), dust the dust limit, feeRate[d] the
	// commitment fee rate
	// end d pays (the funder's only), slotLimit[d] how many HTLCs
	// direction d may have in flight (0: no limit) and slotsUsed[d] how
	// many it has, others' and the payments'.
	keep      [2]lnwire.MilliSatoshi
	dust      lnwire.MilliSatoshi // the dust limit (rules on), else 0
	feeRate   [2]uint64
	slotLimit [2]int
	slotsUsed [2]int
}

// Network is the simulated network.
type Network struct {
	nodes     []route.Vertex
	nodeIndex map[route.Vertex]int
	features  []*lnwire.FeatureVector
	adjacent  [][]int // channel indices of each node, by channel id
	channels  []channel
	chanIndex map[uint64]int
	flow      *flownet.Net // the feasible bound's arcs, built on first use (flow.go)
	bg        *boundGraph  // the bound's searches' graph, built on first use (flow.go)
}

// newNetwork builds the network of a graph file, with announced policies as
// actual policies and empty balances; the world draws the rest.
func newNetwork(g *scenario.Graph) (*Network, error) {
	n := &Network{
		nodeIndex: make(map[route.Vertex]int, len(g.Nodes)),
		chanIndex: make(map[uint64]int, len(g.Channels)),
	}
	for _, node := range g.Nodes {
		v, err := scenario.ParseNodeID(node.ID)
		if err != nil {
			return nil, err
		}
		n.nodeIndex[v] = len(n.nodes)
		n.nodes = append(n.nodes, v)
		n.features = append(n.features, featureVector(node.Features))
	}
	n.adjacent = make([][]int, len(n.nodes))
	for _, c := range g.Channels {
		if err := n.addChannel(c); err != nil {
			return nil, err
		}
	}
	n.sortAdjacent()
	return n, nil
}

// sortAdjacent orders each node's channels by channel id, the order every
// search over a node's channels (and non-strict forwarding) relies on.
func (n *Network) sortAdjacent() {
	for _, adj := range n.adjacent {
		sort.Slice(adj, func(i, j int) bool {
			return n.channels[adj[i]].id < n.channels[adj[j]].id
		})
	}
}

func (n *Network) addChannel(c scenario.Channel) error {
	id, err := scenario.ParseSCID(c.SCID)
	if err != nil {
		return err
	}
	v1, _ := scenario.ParseNodeID(c.Node1)
	v2, _ := scenario.ParseNodeID(c.Node2)
	p1, p2 := c.Policy1, c.Policy2
	// lnd's node 1 is the smaller public key; keep its convention.
	if bytes.Compare(v1[:], v2[:]) > 0 {
		v1, v2, p1, p2 = v2, v1, p2, p1
	}
	ch := channel{
		id:       id,
		nodes:    [2]int{n.nodeIndex[v1], n.nodeIndex[v2]},
		capacity: lnwire.MilliSatoshi(c.CapacitySat) * 1000,
	}
	for d, p := range []*scenario.Policy{p1, p2} {
		if p == nil {
			continue
		}
		ch.announced[d] = policyOf(id, d == 0, p, ch.capacity)
		actual := *ch.announced[d]
		ch.actual[d] = &actual
	}
	idx := len(n.channels)
	n.channels = append(n.channels, ch)
	n.chanIndex[id] = idx
	for _, node := range ch.nodes {
		n.adjacent[node] = append(n.adjacent[node], idx)
	}
	return nil
}

func policyOf(id uint64, isNode1 bool, p *scenario.Policy,
	capacity lnwire.MilliSatoshi) *routing.CachedEdgePolicy {

	pol := &routing.CachedEdgePolicy{
		ChannelID:                 id,
		IsNode1:                   isNode1,
		IsDisabled:                p.Disabled,
		TimeLockDelta:             p.CltvDelta,
		MinHTLC:                   lnwire.MilliSatoshi(p.HtlcMinMsat),
		FeeBaseMSat:               lnwire.MilliSatoshi(p.FeeBaseMsat),
		FeeProportionalMillionths: lnwire.MilliSatoshi(p.FeeRatePPM),
		MaxHTLC:                   capacity,
		InboundFeeBaseMSat:        p.InboundFeeBaseMsat,
		InboundFeeRate:            p.InboundFeeRatePPM,
	}
	if p.HtlcMaxMsat != nil {
		pol.HasMaxHTLC = true
		pol.MaxHTLC = lnwire.MilliSatoshi(*p.HtlcMaxMsat)
	}
	return pol
}

func featureVector(bits []int) *lnwire.FeatureVector {
	raw := lnwire.NewRawFeatureVector()
	if len(bits) == 0 {
		for _, b := range defaultFeatures {
			raw.Set(b)
		}
	}
	for _, b := range bits {
		raw.Set(lnwire.FeatureBit(b))
	}
	return lnwire.NewFeatureVector(raw, lnwire.Features)
}

// direction returns the direction of channel c when sent from node, or -1
// when node is not an end of c.
func (c *channel) direction(node int) int {
	switch node {
	case c.nodes[0]:
		return 0
	case c.nodes[1]:
		return 1
	}
	return -1
}

// nextNode is the node channel id leads to from node from, when it is the
// node want; ok is false when the channel is unknown, does not touch from, or
// leads elsewhere.
func (n *Network) nextNode(id uint64, from int, want route.Vertex) (int, bool) {
	ci, ok := n.chanIndex[id]
	if !ok {
		return 0, false
	}
	c := &n.channels[ci]
	d := c.direction(from)
	if d < 0 || n.nodes[c.nodes[1-d]] != want {
		return 0, false
	}
	return c.nodes[1-d], true
}

// totalFunds is what the channel holds in all; it must always equal the
// capacity.
func (c *channel) totalFunds() lnwire.MilliSatoshi {
	return c.local[0] + c.local[1] + c.held[0] + c.held[1]
}

// setBalance puts amt on end 0 and the rest of the capacity on end 1.
func (c *channel) setBalance(amt lnwire.MilliSatoshi) {
	amt = min(amt, c.capacity)
	c.local = [2]lnwire.MilliSatoshi{amt, c.capacity - amt}
	c.held = [2]lnwire.MilliSatoshi{}
}

// shift moves up to amt from end d to the other end, as a settled payment
// of someone else over this channel would: no more than end d may spend in
// one HTLC (its reserve and the funder's buffer stay: spendable) nor than
// its policy's maximum, and nothing under its minimum, as lnd's link
// allows (htlcswitch's canSendHtlc and its validateHtlcAmount); it returns
// what moved.
func (c *channel) shift(d int, amt lnwire.MilliSatoshi) lnwire.MilliSatoshi {
	amt = min(amt, c.spendable(d))
	if pol := c.actual[d]; pol != nil {
		if pol.MaxHTLC != 0 {
			amt = min(amt, pol.MaxHTLC)
		}
		if amt < pol.MinHTLC {
			return 0
		}
	}
	c.local[d] -= amt
	c.local[1-d] += amt
	return amt
}

// hold locks amt sent in direction d in one HTLC; the caller checked
// spendable(d) >= amt and a free slot.
func (c *channel) hold(d int, amt lnwire.MilliSatoshi) {
	c.local[d] -= amt
	c.held[d] += amt
	c.slotsUsed[d]++
}

// settle pays out a hold to the receiving end.
func (c *channel) settle(d int, amt lnwire.MilliSatoshi) {
	c.held[d] -= amt
	c.local[1-d] += amt
	c.slotsUsed[d]--
}

// release returns a hold to the sending end.
func (c *channel) release(d int, amt lnwire.MilliSatoshi) {
	c.held[d] -= amt
	c.local[d] += amt
	c.slotsUsed[d]--
}

// checkConservation verifies that no channel created or lost funds.
func (n *Network) checkConservation() error {
	for i := range n.channels {
		c := &n.channels[i]
		if got := c.totalFunds(); got != c.capacity {
			return fmt.Errorf("channel %s holds %d msat, capacity %d",
				scenario.FormatSCID(c.id), got, c.capacity)
		}
	}
	return nil
}

// channelUpdate is the channel update a failing node attaches: its actual
// policy for direction d of c.
func (c *channel) channelUpdate(d int, timestamp uint32) *lnwire.ChannelUpdate1 {
	p := c.actual[d]
	upd := &lnwire.ChannelUpdate1{
		ShortChannelID: lnwire.NewShortChanIDFromInt(c.id),
		Timestamp:      timestamp,
		MessageFlags:   lnwire.ChanUpdateRequiredMaxHtlc,
		ChannelFlags:   lnwire.ChanUpdateChanFlags(d),
	}
	if p == nil {
		upd.ChannelFlags |= lnwire.ChanUpdateDisabled
		return upd
	}
	if p.IsDisabled {
		upd.ChannelFlags |= lnwire.ChanUpdateDisabled
	}
	upd.TimeLockDelta = p.TimeLockDelta
	upd.HtlcMinimumMsat = p.MinHTLC
	upd.HtlcMaximumMsat = p.MaxHTLC
	upd.BaseFee = uint32(min(p.FeeBaseMSat, math.MaxUint32))
	upd.FeeRate = uint32(min(p.FeeProportionalMillionths, math.MaxUint32))
	if p.InboundFeeBaseMSat != 0 || p.InboundFeeRate != 0 {
		upd.InboundFee = tlv.SomeRecordT(tlv.NewRecordT[tlv.TlvType55555](
			lnwire.Fee{BaseFee: p.InboundFeeBaseMSat, FeeRate: p.InboundFeeRate}))
	}
	return upd
}

// applyUpdate makes the gossip view of direction d of c what upd says, as
// lnd's payment lifecycle does with the update a failure carries.
func (c *channel) applyUpdate(d int, upd *lnwire.ChannelUpdate1) {
	pol := &routing.CachedEdgePolicy{
		ChannelID:                 c.id,
		IsNode1:                   d == 0,
		IsDisabled:                upd.ChannelFlags.IsDisabled(),
		TimeLockDelta:             upd.TimeLockDelta,
		MinHTLC:                   upd.HtlcMinimumMsat,
		MaxHTLC:                   upd.HtlcMaximumMsat,
		HasMaxHTLC:                upd.MessageFlags.HasMaxHtlc(),
		FeeBaseMSat:               lnwire.MilliSatoshi(upd.BaseFee),
		FeeProportionalMillionths: lnwire.MilliSatoshi(upd.FeeRate),
	}
	upd.InboundFee.WhenSome(func(fee tlv.RecordT[tlv.TlvType55555, lnwire.Fee]) {
		pol.InboundFeeBaseMSat, pol.InboundFeeRate = fee.Val.BaseFee, fee.Val.FeeRate
	})
	c.announced[d] = pol
}
