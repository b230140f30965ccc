// Package scenario reads and validates scenario and graph files, the format
// written down in docs/scenario-format.md. Every error names the file and the
// field it is about.
package scenario

import (
	"time"
)

// FormatScenario and FormatGraph are the format tags the files must carry.
const (
	FormatScenario = "routesim-scenario/1"
	FormatGraph    = "routesim-graph/1"
)

// Scenario is one scenario file.
type Scenario struct {
	Format      string            `json:"format"`
	Name        string            `json:"name"`
	Arena       Arena             `json:"arena"`
	Seed        uint64            `json:"seed"`
	GraphFile   string            `json:"graph"`
	Source      string            `json:"source"`
	BlockHeight uint32            `json:"block_height"`
	StartTime   time.Time         `json:"start_time"`
	Liquidity   Liquidity         `json:"liquidity"`
	Local       map[string]uint64 `json:"local_balances_msat,omitempty"`

	// SenderPolicies are the sender's own outgoing policies, by channel,
	// where the graph announces none (or a disabled one): a real node always
	// knows its own policies, and lnd's pathfinding needs them to use its
	// channels. Every router sees them in the gossip view.
	SenderPolicies map[string]Policy `json:"sender_policies,omitempty"`
	Gossip         Gossip            `json:"gossip"`
	Clock          Clock             `json:"clock"`
	Traffic        Traffic           `json:"traffic"`
	AtomicMPP      bool              `json:"atomic_mpp"`
	Attribution    Attribution       `json:"attribution"`

	// Rules switches on the checks real nodes make beyond the announced
	// policy. A file without the block plays none of them, as the
	// simulator did before they were added, so that earlier results can
	// be reproduced; the generator writes it.
	Rules *Rules `json:"rules,omitempty"`

	Defaults PaymentDefaults `json:"defaults"`
	Payments []Payment       `json:"payments"`

	// Graph is the graph GraphFile names, loaded by Load. GraphFile is a
	// path relative to the scenario file, so that one graph serves many
	// scenarios of a corpus.
	Graph *Graph `json:"-"`

	// Path is the file the scenario was read from.
	Path string `json:"-"`
}

// Liquidity configures the hidden balance of every remote channel.
type Liquidity struct {
	// BimodalScaleSat is s in lnd's bimodal model
	// P(x) ∝ exp(-x/s) + exp((x-c)/s).
	BimodalScaleSat float64 `json:"bimodal_scale_sat"`

	// UniformShare is the share of channels whose balance is uniform on
	// [0, capacity] instead of bimodal.
	UniformShare float64 `json:"uniform_share"`
}

// Gossip configures how stale the sender's gossip view is.
type Gossip struct {
	// StaleShare is the share of announced policies whose real fee or
	// cltv delta is higher than announced.
	StaleShare float64 `json:"stale_share"`

	// StaleFeeRateFactor multiplies the real fee rate of a stale policy.
	StaleFeeRateFactor float64 `json:"stale_fee_rate_factor"`

	// StaleBaseFeeAddMsat is added to the real base fee of a stale policy.
	StaleBaseFeeAddMsat uint32 `json:"stale_base_fee_add_msat"`

	// StaleCltvAdd is added to the real cltv delta of a stale policy.
	StaleCltvAdd uint16 `json:"stale_cltv_add"`
}

// Clock configures the virtual clock.
type Clock struct {
	// PaymentIntervalSec is the time between the starts of payments.
	PaymentIntervalSec float64 `json:"payment_interval_s"`

	// AttemptLatencySec is the time one round of attempts takes.
	AttemptLatencySec float64 `json:"attempt_latency_s"`
}

// Traffic configures the background payments of other participants.
type Traffic struct {
	// EventsPerHour is the rate of background liquidity shifts.
	EventsPerHour float64 `json:"events_per_hour"`

	// MedianShiftSat is the median size of one shift (log-normal).
	MedianShiftSat float64 `json:"median_shift_sat"`
}

// Attribution configures the degraded failure channel.
type Attribution struct {
	// StrippedRate is the share of failures that arrive unreadable,
	// attributed to a node off the route.
	StrippedRate float64 `json:"stripped_rate"`

	// ShiftBeforeRate is the share whose blame moves one hop toward the
	// sender, code intact.
	ShiftBeforeRate float64 `json:"shift_before_rate"`

	// ShiftAfterRate is the share whose blame moves one hop toward the
	// receiver, code intact.
	ShiftAfterRate float64 `json:"shift_after_rate"`
}

// Enabled reports whether any failure is degraded.
func (a Attribution) Enabled() bool {
	return a.StrippedRate+a.ShiftBeforeRate+a.ShiftAfterRate > 0
}

// Rules are the checks of a real node's channel state that the announced
// policy does not show (docs/scenario-format.md, "The rules real nodes
// enforce"). Each is off at its zero value. The state they act on (which
// side funded a channel, each node's HTLC slots, the slots others' HTLCs
// keep busy) is drawn from the scenario's seed, like the balances.
type Rules struct {
	// ReserveShare is each side's channel reserve as a share of the
	// capacity (BOLT 02 channel_reserve_satoshis; lnd and Core Lightning
	// ask 1 %), never below DustLimitSat: a side cannot spend it.
	ReserveShare float64 `json:"reserve_share"`

	// DustLimitSat is the floor of the reserve (lnd's 354 sat).
	DustLimitSat uint64 `json:"dust_limit_sat"`

	// CommitFeerateSatPerKw is the commitment transaction's fee rate. The
	// side that funded the channel pays that fee, and lnd keeps it able to
	// pay twice the rate with one more HTLC (lnwallet.CalcFeeBuffer).
	CommitFeerateSatPerKw uint64 `json:"commit_feerate_sat_per_kw"`

	// AnchorsSat is what the funder's two anchor outputs take from its
	// side (2 × 330 sat on anchor channels).
	AnchorsSat uint64 `json:"anchors_sat"`

	// HTLCSlots limits the HTLCs in flight on each channel direction.
	HTLCSlots HTLCSlots `json:"htlc_slots"`

	// Peers makes some nodes come and go over virtual time.
	Peers Peers `json:"peers"`
}

// Peers makes a FlakyShare of the nodes (never the sender) go offline and
// come back: online for OnlineMeanSec on average, then offline for
// OfflineMeanSec, each span drawn from an exponential. A node whose next
// peer is offline has no link to forward over (lnd's switch:
// unknown_next_peer). A FlakyShare of 0 switches the rule off.
type Peers struct {
	FlakyShare     float64 `json:"flaky_share"`
	OnlineMeanSec  float64 `json:"online_mean_s"`
	OfflineMeanSec float64 `json:"offline_mean_s"`
}

// HTLCSlots is how many HTLCs a node accepts in flight on one channel
// (BOLT 02 max_accepted_htlcs) and how many others' payments keep busy.
// Limits of 0 switch the rule off.
type HTLCSlots struct {
	// LargeLimit is most nodes' max_accepted_htlcs (lnd's 483).
	LargeLimit uint16 `json:"large_limit"`

	// SmallLimit is the limit of a SmallShare of the nodes (Core
	// Lightning's max-concurrent-htlcs and eclair's default, 30).
	SmallLimit uint16  `json:"small_limit"`
	SmallShare float64 `json:"small_share"`

	// BusyShare is the share of channel directions that others' payments
	// keep busy: between BusyHTLCsMin and BusyHTLCsMax of their HTLCs are
	// in flight there (no more than the limit), the others' none.
	BusyShare    float64 `json:"busy_share"`
	BusyHTLCsMin uint16  `json:"busy_htlcs_min"`
	BusyHTLCsMax uint16  `json:"busy_htlcs_max"`
}

// MaxAcceptedHTLCs is BOLT 02's ceiling on max_accepted_htlcs.
const MaxAcceptedHTLCs = 483

// MPPTimeoutSec is how long a real receiver holds the parts of a payment
// that has not arrived whole before it fails them all (lnd's
// invoices.DefaultHtlcHoldDuration). The simulator does not time parts
// out; validation keeps an atomic payment's rounds within it instead.
const MPPTimeoutSec = 120

// PaymentDefaults are the payment settings a payment does not override.
type PaymentDefaults struct {
	MaxParts       uint32  `json:"max_parts"`
	MaxAttempts    int     `json:"max_attempts"`
	FeeLimitPPM    float64 `json:"fee_limit_ppm"`
	FeeLimitBase   uint64  `json:"fee_limit_base_msat"`
	FinalCLTVDelta uint16  `json:"final_cltv_delta"`
	CltvLimitDelta uint32  `json:"cltv_limit_delta"`
}

// Payment is one payment of the scenario. Zero fields take the defaults.
type Payment struct {
	Target       string  `json:"target"`
	AmountMsat   uint64  `json:"amount_msat"`
	MaxParts     uint32  `json:"max_parts,omitempty"`
	MaxAttempts  int     `json:"max_attempts,omitempty"`
	FeeLimitMsat *uint64 `json:"fee_limit_msat,omitempty"`

	// AmountShare is the amount's share of the max flow from the sender
	// to the target at the scenario's start, as the generator sized it.
	// The harness sizes the payment again by it in a world drawn under a
	// secret (routesim_evolve/corpus/worlds.py); the simulator plays
	// AmountMsat and ignores it.
	AmountShare *float64 `json:"amount_share,omitempty"`
}

// Graph is one graph file: the public channel graph with announced policies.
type Graph struct {
	Format   string    `json:"format"`
	Nodes    []Node    `json:"nodes"`
	Channels []Channel `json:"channels"`

	// Path is the file the graph was read from ("" when inline).
	Path string `json:"-"`
}

// Node is a node of the graph.
type Node struct {
	ID       string `json:"id"`
	Alias    string `json:"alias,omitempty"`
	Features []int  `json:"features,omitempty"`
}

// Channel is a channel of the graph. Policy1 is announced by Node1 for
// forwarding toward Node2, Policy2 by Node2 toward Node1.
type Channel struct {
	SCID        string  `json:"scid"`
	Node1       string  `json:"node1"`
	Node2       string  `json:"node2"`
	CapacitySat int64   `json:"capacity_sat"`
	Policy1     *Policy `json:"policy1"`
	Policy2     *Policy `json:"policy2"`
}

// Policy is one announced direction of a channel.
type Policy struct {
	FeeBaseMsat uint32  `json:"fee_base_msat"`
	FeeRatePPM  uint32  `json:"fee_rate_ppm"`
	CltvDelta   uint16  `json:"cltv_delta"`
	HtlcMinMsat uint64  `json:"htlc_min_msat"`
	HtlcMaxMsat *uint64 `json:"htlc_max_msat,omitempty"`
	Disabled    bool    `json:"disabled,omitempty"`

	// InboundFeeBaseMsat and InboundFeeRatePPM are the announcing node's
	// inbound fee on this channel (lnd 0.18+): what it adds to its fee for
	// an HTLC that comes in to it over this channel, almost always a
	// discount (negative); absent, none.
	InboundFeeBaseMsat int32 `json:"inbound_fee_base_msat,omitempty"`
	InboundFeeRatePPM  int32 `json:"inbound_fee_rate_ppm,omitempty"`
}

// FeeLimit is the payment's fee limit: its own, or the defaults' base plus
// rate on the amount.
func (p Payment) FeeLimit(d PaymentDefaults) uint64 {
	if p.FeeLimitMsat != nil {
		return *p.FeeLimitMsat
	}
	return d.FeeLimitBase + uint64(float64(p.AmountMsat)*d.FeeLimitPPM/1e6)
}

// Parts is the payment's cap on shards in flight.
func (p Payment) Parts(d PaymentDefaults) uint32 {
	if p.MaxParts > 0 {
		return p.MaxParts
	}
	return d.MaxParts
}

// Attempts is the payment's cap on attempts.
func (p Payment) Attempts(d PaymentDefaults) int {
	if p.MaxAttempts > 0 {
		return p.MaxAttempts
	}
	return d.MaxAttempts
}
