package lndref

import (
	"context"
	"fmt"

	"github.com/btcsuite/btcd/btcutil"
	graphdb "github.com/lightningnetwork/lnd/graph/db"
	"github.com/lightningnetwork/lnd/graph/db/models"
	"github.com/lightningnetwork/lnd/htlcswitch"
	"github.com/lightningnetwork/lnd/lnwire"
	lndrouting "github.com/lightningnetwork/lnd/routing"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// viewGraph is lnd's graph, read from the simulator's gossip view. It
// converts on every call, so a channel update the runner applied to the
// view is seen by the next pathfinding at once. It serves both as lnd's
// GraphSessionFactory and as the graphdb.NodeTraverser of the session.
type viewGraph struct {
	view routing.SimNetworkView

	// features caches node features, which no channel update changes.
	features map[route.Vertex]*lnwire.FeatureVector
}

func newViewGraph(view routing.SimNetworkView) *viewGraph {
	return &viewGraph{view: view, features: make(map[route.Vertex]*lnwire.FeatureVector)}
}

// nodeFeatures returns node's announced features (empty if none).
func (g *viewGraph) nodeFeatures(node route.Vertex) *lnwire.FeatureVector {
	if f, ok := g.features[node]; ok {
		return f
	}
	f := g.view.FetchNodeFeatures(node)
	if f == nil {
		f = lnwire.EmptyFeatureVector()
	}
	g.features[node] = f
	return f
}

var (
	_ lndrouting.GraphSessionFactory = (*viewGraph)(nil)
	_ graphdb.NodeTraverser          = (*viewGraph)(nil)
)

// GraphSession runs cb on the graph. The view needs no transaction.
func (g *viewGraph) GraphSession(_ context.Context,
	cb func(graph graphdb.NodeTraverser) error, reset func()) error {

	reset()
	return cb(g)
}

// ForEachNodeDirectedChannel calls cb with each channel of node, as lnd's
// graph cache does: fresh copies whose InPolicy has ToNodePubKey (node)
// and ToNodeFeatures (node's features) set, since pathfinding calls the
// former unguarded and overwrites the latter on the route's last edge.
func (g *viewGraph) ForEachNodeDirectedChannel(_ context.Context,
	node route.Vertex, cb func(channel *graphdb.DirectedChannel) error,
	reset func()) error {

	reset()
	features := g.nodeFeatures(node)
	toNode := func() route.Vertex { return node }
	return g.view.ForEachNodeDirectedChannel(node, func(c *routing.DirectedChannel) error {
		dc := &graphdb.DirectedChannel{
			ChannelID:    c.ChannelID,
			IsNode1:      c.IsNode1,
			OtherNode:    c.OtherNode,
			Capacity:     btcutil.Amount(c.Capacity),
			OutPolicySet: c.OutPolicySet,
			// node's own inbound fee on the channel, which lnd's
			// pathfinding adds to node's fee (unified edges).
			InboundFee: lnwire.Fee{BaseFee: c.InboundFeeBaseMSat, FeeRate: c.InboundFeeRate},
		}
		if p := c.InPolicy; p != nil {
			dc.InPolicy = &models.CachedEdgePolicy{
				ChannelID:                 p.ChannelID,
				HasMaxHTLC:                p.HasMaxHTLC,
				IsNode1:                   p.IsNode1,
				IsDisabled:                p.IsDisabled,
				TimeLockDelta:             p.TimeLockDelta,
				MinHTLC:                   p.MinHTLC,
				MaxHTLC:                   p.MaxHTLC,
				FeeBaseMSat:               p.FeeBaseMSat,
				FeeProportionalMillionths: p.FeeProportionalMillionths,
				ToNodePubKey:              toNode,
				ToNodeFeatures:            features,
			}
		}
		return cb(dc)
	})
}

// FetchNodeFeatures returns node's announced features.
func (g *viewGraph) FetchNodeFeatures(_ context.Context,
	node route.Vertex) (*lnwire.FeatureVector, error) {

	return g.nodeFeatures(node), nil
}

// localLinks are the sender's channels as lnd's switch would show them to
// the bandwidth manager: what the sender could send over each at the
// payment's start, minus what this payment has sent over it since and not
// got back (shards in flight, held or settled).
type localLinks struct {
	links map[uint64]*localLink
}

func newLocalLinks(balances map[uint64]lnwire.MilliSatoshi) *localLinks {
	l := &localLinks{links: make(map[uint64]*localLink, len(balances))}
	for id, bal := range balances {
		l.links[id] = &localLink{
			scid:    lnwire.NewShortChanIDFromInt(id),
			balance: bal,
		}
	}
	return l
}

// getLink is lnd's link lookup (SessionSource.GetLink).
func (l *localLinks) getLink(scid lnwire.ShortChannelID) (htlcswitch.ChannelLink, error) {
	link, ok := l.links[scid.ToUint64()]
	if !ok {
		return nil, fmt.Errorf("lndref: no link for channel %v", scid)
	}
	return link, nil
}

// send books amt leaving over channel id.
func (l *localLinks) send(id uint64, amt lnwire.MilliSatoshi) {
	if link, ok := l.links[id]; ok {
		link.used += amt
	}
}

// giveBack returns amt of a failed shard to channel id.
func (l *localLinks) giveBack(id uint64, amt lnwire.MilliSatoshi) {
	if link, ok := l.links[id]; ok {
		link.used -= min(amt, link.used)
	}
}

// localLink is the link stub of one of the sender's channels. It embeds
// htlcswitch.ChannelLink (nil) for the methods lnd's bandwidth manager
// never calls; those would panic. The bandwidth manager calls
// EligibleToForward, Bandwidth and MayAddOutgoingHtlc (and AuxBandwidth
// only with a traffic shaper, which the reference does not set).
type localLink struct {
	htlcswitch.ChannelLink

	scid    lnwire.ShortChannelID
	balance lnwire.MilliSatoshi
	used    lnwire.MilliSatoshi
}

// EligibleToForward is true: every channel of the sender is online.
func (l *localLink) EligibleToForward() bool { return true }

// Bandwidth is what the sender can still send over the channel.
func (l *localLink) Bandwidth() lnwire.MilliSatoshi {
	if l.used >= l.balance {
		return 0
	}
	return l.balance - l.used
}

// MayAddOutgoingHtlc fails when the channel cannot carry amt (for 0, any
// HTLC at all), as a real link's balance check would.
func (l *localLink) MayAddOutgoingHtlc(amt lnwire.MilliSatoshi) error {
	bw := l.Bandwidth()
	if bw == 0 || amt > bw {
		return fmt.Errorf("lndref: channel %v: %v exceeds bandwidth %v", l.scid, amt, bw)
	}
	return nil
}

// ShortChanID is the channel's short channel id.
func (l *localLink) ShortChanID() lnwire.ShortChannelID { return l.scid }
