// Package routing holds the contract between the payment simulator and the
// routers it scores: the gossip view a router sees, the payment it is asked
// to make, the router interface, and the result of each attempt.
//
// The names mirror lnd's routing package on purpose, so that a router written
// against lnd's types reads the same here. The package depends only on lnd's
// small wire-level packages (lnwire, route), never on lnd's graph database, so
// that a candidate router links quickly.
package routing

import (
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
)

// CachedEdgePolicy is one direction of a channel as announced in gossip. Its
// field names are those of lnd's models.CachedEdgePolicy.
type CachedEdgePolicy struct {
	// ChannelID is the short channel id of the channel.
	ChannelID uint64

	// HasMaxHTLC is true when MaxHTLC was announced.
	HasMaxHTLC bool

	// IsNode1 is true when the policy was announced by the channel's
	// node 1 (the smaller public key).
	IsNode1 bool

	// IsDisabled is true when the announcing node disabled forwarding.
	IsDisabled bool

	// TimeLockDelta is the cltv delta the announcing node subtracts.
	TimeLockDelta uint16

	// MinHTLC is the smallest HTLC the announcing node forwards.
	MinHTLC lnwire.MilliSatoshi

	// MaxHTLC is the largest HTLC the announcing node forwards.
	MaxHTLC lnwire.MilliSatoshi

	// FeeBaseMSat is the base fee charged per forwarded HTLC.
	FeeBaseMSat lnwire.MilliSatoshi

	// FeeProportionalMillionths is the proportional fee rate in ppm.
	FeeProportionalMillionths lnwire.MilliSatoshi

	// InboundFeeBaseMSat and InboundFeeRate are the announcing node's
	// inbound fee on this channel (lnd 0.18+, a TLV of channel_update):
	// what it adds to its fee for an HTLC that comes in to it over this
	// channel, almost always a discount (negative). Zero when it
	// announces none.
	InboundFeeBaseMSat int32
	InboundFeeRate     int32
}

// ComputeFee returns the fee the announcing node charges to forward amt over
// this channel (BOLT 7), its inbound fee aside (see HopFee).
func (p *CachedEdgePolicy) ComputeFee(amt lnwire.MilliSatoshi) lnwire.MilliSatoshi {
	return p.FeeBaseMSat + amt*p.FeeProportionalMillionths/1_000_000
}

// InboundFee is what the announcing node adds to its fee for an HTLC that
// came in over this channel and leaves with amt plus its outbound fee, as
// lnd computes it (models.InboundFee.CalcFee: a negative rate rounds up).
func (p *CachedEdgePolicy) InboundFee(amt lnwire.MilliSatoshi) int64 {
	const maxRate = 10 * 1_000_000 // lnd caps the rate at ten times the amount
	rate := min(max(int64(p.InboundFeeRate), -maxRate), maxRate)
	return int64(p.InboundFeeBaseMSat) + rate*int64(amt)/1_000_000
}

// HopFee is the fee a node charges to forward amt over the channel whose
// policy it announced as out, for an HTLC that came in over the channel
// whose policy it announced as in (nil for none, as for the sender): the
// outbound fee plus in's inbound fee on amt plus that fee, never below 0
// (lnd's CheckHtlcForward accepts any fee over a negative sum; its
// pathfinding clamps the sum so).
func HopFee(out, in *CachedEdgePolicy, amt lnwire.MilliSatoshi) lnwire.MilliSatoshi {
	fee := int64(out.ComputeFee(amt))
	if in != nil {
		fee += in.InboundFee(amt + out.ComputeFee(amt))
	}
	return lnwire.MilliSatoshi(max(fee, 0))
}

// DirectedChannel is a channel seen from one of its nodes. Its field names are
// those of lnd's graphdb.DirectedChannel.
type DirectedChannel struct {
	// ChannelID is the short channel id.
	ChannelID uint64

	// IsNode1 is true when the node the channel is listed for is node 1.
	IsNode1 bool

	// OtherNode is the peer at the other end.
	OtherNode route.Vertex

	// Capacity is the announced capacity in satoshis.
	Capacity int64

	// OutPolicySet is true when the listed node announced a policy for
	// forwarding toward OtherNode.
	OutPolicySet bool

	// InPolicy is the policy OtherNode announced for forwarding toward
	// the listed node; nil when OtherNode announced none. Pathfinding that
	// walks backward from the target, as lnd's does, reads this one.
	InPolicy *CachedEdgePolicy

	// InboundFeeBaseMSat and InboundFeeRate are the listed node's inbound
	// fee on this channel (from its own policy of it, as lnd's graph cache
	// keeps it): what it adds to its fee for an HTLC from OtherNode.
	InboundFeeBaseMSat int32
	InboundFeeRate     int32
}

// SimNetworkView is a router's view of the network: public gossip (possibly
// stale), node features and the virtual clock. It never reveals the hidden
// liquidity of remote channels.
type SimNetworkView interface {
	// ForEachNode calls cb for every node of the graph, in a fixed order.
	ForEachNode(cb func(node route.Vertex) error) error

	// ForEachNodeDirectedChannel calls cb for every channel of node, in
	// a fixed order. The callback receives a copy it may keep.
	ForEachNodeDirectedChannel(node route.Vertex,
		cb func(channel *DirectedChannel) error) error

	// FetchNodeFeatures returns the features node announced.
	FetchNodeFeatures(node route.Vertex) *lnwire.FeatureVector

	// Now is the scenario's virtual time.
	Now() time.Time

	// BlockHeight is the current block height.
	BlockHeight() uint32
}

// SimPaymentSpec is the payment a router is asked to make.
type SimPaymentSpec struct {
	// Index is the payment's position in the scenario, from 0.
	Index int

	// Target is the receiving node.
	Target route.Vertex

	// Amount is the total amount to deliver to the target.
	Amount lnwire.MilliSatoshi

	// FeeLimit is the most the payment may pay in fees over all parts.
	FeeLimit lnwire.MilliSatoshi

	// MaxParts caps the number of shards in flight at once.
	MaxParts uint32

	// MaxAttempts caps the number of attempts the payment may make.
	MaxAttempts int

	// FinalCLTVDelta is the cltv delta the receiver requires.
	FinalCLTVDelta uint16

	// CltvLimit is the largest total time lock a route may carry.
	CltvLimit uint32

	// Atomic is true when shards are held at the receiver until the whole
	// amount has arrived (the atomic_mpp arena).
	Atomic bool

	// PaymentAddr is the payment address (MPP payment secret).
	PaymentAddr [32]byte
}

// SimAttemptResult is the outcome of one attempt, as the sender learns it.
type SimAttemptResult struct {
	// Failure is nil when the shard settled (or, with Atomic, arrived and
	// is held by the receiver). Otherwise it is the lnwire failure the
	// failing node returned; UnreadableFailure when the failure could not
	// be decrypted.
	Failure lnwire.FailureMessage

	// FailureSource is the node the failure is attributed to. In the
	// attribution arena it may be wrong: shifted one hop along the route,
	// or a node that is not on the route at all when the failure is
	// unreadable.
	FailureSource route.Vertex

	// FailureSourceIdx is FailureSource's position in the route (0 for
	// the sender, i+1 for Hops[i]), or -1 when it is not on the route.
	FailureSourceIdx int
}

// UnreadableFailure is the failure reported when an error onion could not be
// attributed: it carries no code and no channel update.
type UnreadableFailure struct{}

// Code returns 0: an unreadable failure has no code.
func (UnreadableFailure) Code() lnwire.FailCode { return 0 }

// Error describes the failure.
func (UnreadableFailure) Error() string { return "unreadable failure" }

// SimRouter chooses routes for one payment and learns from their outcome.
// The simulator creates one router per payment; state that should outlive a
// payment lives at package level in the router's own file.
type SimRouter interface {
	// RequestRoute returns a route that delivers at most amt to the
	// target. inFlightHtlcs is the number of this round's shards already in
	// flight (0 opens a round); with Atomic, shards held at the receiver
	// from earlier rounds are not in it, though they count toward
	// MaxParts. An error gives up the payment.
	RequestRoute(amt lnwire.MilliSatoshi, inFlightHtlcs uint32) (*route.Route, error)

	// ReportAttempt tells the router the outcome of an attempt it made.
	ReportAttempt(attemptID uint64, rt *route.Route, result *SimAttemptResult) error
}

// SimPaymentOutcome is how a payment ended, as the sender learns it.
type SimPaymentOutcome struct {
	// Success is true when the whole amount was delivered.
	Success bool

	// Delivered is the amount that reached the target: all of it on
	// success; for a failed atomic payment 0, its held shards released.
	Delivered lnwire.MilliSatoshi

	// Fees is what the delivered shards paid.
	Fees lnwire.MilliSatoshi

	// Released is true when the receiver released the shards it held (a
	// failed atomic payment): the liquidity they locked is back where it
	// was, and no fee was paid.
	Released bool
}

// PaymentEndObserver is an optional interface of a SimRouter. The simulator
// calls PaymentEnded once, after the payment's last ReportAttempt, when it
// has settled or released what the payment held; a router that does not
// implement it is never told. It lets a router book what settled shards
// moved at the moment they moved, instead of at its next payment.
type PaymentEndObserver interface {
	// PaymentEnded tells the router how its payment ended.
	PaymentEnded(outcome *SimPaymentOutcome)
}

// MaxRouteLabelBytes is the longest route label the simulator keeps.
const MaxRouteLabelBytes = 32

// RouteLabeler is an optional interface of a SimRouter. Right after
// RequestRoute returns a route, the simulator asks for a short label naming
// the branch of the router that chose it ("flow", "retry-cheapest"); the
// label is kept with the attempt in the result (at most MaxRouteLabelBytes
// bytes of letters, digits and ._:/-), and the feedback counts each label's
// attempts and failures, so that a router learns which of its branches
// sends the routes that fail.
type RouteLabeler interface {
	// RouteLabel names the branch that chose rt, the route just returned.
	RouteLabel(rt *route.Route) string
}

// RouterFactory makes the router for one payment. It has the signature of a
// candidate's newCandidateRouter. The view, the source and the local
// balances are those of the scenario at the moment the payment starts.
type RouterFactory func(view SimNetworkView, source route.Vertex,
	localBalances map[uint64]lnwire.MilliSatoshi, spec *SimPaymentSpec) (SimRouter, error)
