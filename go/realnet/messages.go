package realnet

import (
	"github.com/routesim-evolve/routesim/scenario"
)

// Request is one line the driver sends: exactly one field is set.
type Request struct {
	Begin  *Begin  `json:"begin,omitempty"`
	Ask    *Ask    `json:"request,omitempty"`
	Report *Report `json:"report,omitempty"`
	End    *End    `json:"end,omitempty"`
}

// Begin starts a payment: the sender's view of the real graph now, its own
// channels' balances, and the payment.
type Begin struct {
	// Graph is the sender's graph (lnd's DescribeGraph), in the scenario
	// graph format (docs/scenario-format.md).
	Graph scenario.Graph `json:"graph"`

	// UnixTime and BlockHeight are the real clock and chain height.
	UnixTime    int64  `json:"unix_time"`
	BlockHeight uint32 `json:"block_height"`

	// Source is the sender's public key (hex).
	Source string `json:"source"`

	// LocalBalancesMsat is what the sender can send on each of its
	// channels now, by short channel id ("BLOCKxTXxOUT").
	LocalBalancesMsat map[string]uint64 `json:"local_balances_msat"`

	Payment Payment `json:"payment"`
}

// Payment is the payment a router is asked to make (routing.SimPaymentSpec).
type Payment struct {
	Index          int    `json:"index"`
	Target         string `json:"target"`
	AmountMsat     uint64 `json:"amount_msat"`
	FeeLimitMsat   uint64 `json:"fee_limit_msat"`
	MaxParts       uint32 `json:"max_parts"`
	MaxAttempts    int    `json:"max_attempts"`
	FinalCLTVDelta uint16 `json:"final_cltv_delta"`
	CltvLimit      uint32 `json:"cltv_limit"`
	Atomic         bool   `json:"atomic"`
	PaymentAddr    string `json:"payment_addr"` // hex, 32 bytes
}

// Ask asks for a route delivering at most AmountMsat.
type Ask struct {
	AmountMsat uint64 `json:"amount_msat"`
	InFlight   uint32 `json:"in_flight"`
}

// Route is a route as the router chose it: every amount is what the hop's
// node receives, in msat, and every time lock the expiry it receives.
type Route struct {
	TotalTimeLock   uint32 `json:"total_time_lock"`
	TotalAmountMsat uint64 `json:"total_amount_msat"`
	Source          string `json:"source"`
	Hops            []Hop  `json:"hops"`
	Label           string `json:"label,omitempty"`
}

// Hop is one hop of a route: the channel taken to reach the hop's node.
type Hop struct {
	PubKey           string `json:"pub_key"`
	SCID             string `json:"scid"`
	AmtToForwardMsat uint64 `json:"amt_to_forward_msat"`
	OutgoingTimeLock uint32 `json:"outgoing_time_lock"`
}

// Report is the real outcome of an attempt the router made.
type Report struct {
	AttemptID uint64 `json:"attempt_id"`
	Route     Route  `json:"route"`

	// Failure is nil when the shard settled (or is held by the receiver).
	Failure *Failure `json:"failure,omitempty"`
}

// Failure is a real failure as lnd reports it (lnrpc.Failure).
type Failure struct {
	// Code is lnrpc.Failure.FailureCode's name, e.g.
	// "TEMPORARY_CHANNEL_FAILURE"; "UNREADABLE_FAILURE" for an error
	// that could not be decrypted.
	Code string `json:"code"`

	// SourceIndex is the failing node's position on the route (0 the
	// sender, i+1 hop i).
	SourceIndex int `json:"source_index"`

	HtlcMsat   uint64         `json:"htlc_msat"`
	CltvExpiry uint32         `json:"cltv_expiry"`
	Flags      uint32         `json:"flags"`
	Height     uint32         `json:"height"`
	Update     *ChannelUpdate `json:"channel_update,omitempty"`
}

// ChannelUpdate is the update a failure carries (lnrpc.ChannelUpdate).
type ChannelUpdate struct {
	ChainHash       string `json:"chain_hash"` // hex
	SCID            string `json:"scid"`
	Timestamp       uint32 `json:"timestamp"`
	MessageFlags    uint8  `json:"message_flags"`
	ChannelFlags    uint8  `json:"channel_flags"`
	TimeLockDelta   uint16 `json:"time_lock_delta"`
	HtlcMinimumMsat uint64 `json:"htlc_minimum_msat"`
	BaseFee         uint32 `json:"base_fee"`
	FeeRate         uint32 `json:"fee_rate"`
	HtlcMaximumMsat uint64 `json:"htlc_maximum_msat"`
}

// End tells the router how its payment ended.
type End struct {
	Success       bool   `json:"success"`
	DeliveredMsat uint64 `json:"delivered_msat"`
	FeesMsat      uint64 `json:"fees_msat"`
	Released      bool   `json:"released"`
}

// Answer is one line the server writes: an error, a route, or ok.
type Answer struct {
	OK    bool   `json:"ok,omitempty"`
	Route *Route `json:"route,omitempty"`
	Error string `json:"error,omitempty"`
}
