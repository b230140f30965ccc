package sim

import "github.com/routesim-evolve/routesim/scenario"

// FormatResult is the format tag of a result file.
const FormatResult = "routesim-result/1"

// Terminal failure reasons of a payment.
const (
	ReasonNone              = ""
	ReasonRouterGaveUp      = "router_gave_up"
	ReasonAttemptsExhausted = "attempts_exhausted"
	ReasonInvalidRoute      = "invalid_route"
	ReasonRouterInitFailed  = "router_init_failed"
	// ReasonIncorrectDetails: the receiver refused the payment's details
	// (incorrect_or_unknown_payment_details), which ends a payment in lnd
	// (routing's reasonIncorrectDetails) and in LDK (RecipientRejected).
	ReasonIncorrectDetails = "incorrect_payment_details"
	// ReasonPartsExhausted: with atomic MPP, the shards held at the
	// receiver fill the shard cap and the rest cannot be sent.
	ReasonPartsExhausted = "parts_exhausted"
)

// Result is what one router did on one scenario (docs/result-format.md).
type Result struct {
	Format   string         `json:"format"`
	Scenario string         `json:"scenario"`
	Arena    scenario.Arena `json:"arena"`
	Router   string         `json:"router"`
	Seed     uint64         `json:"seed"`

	// Rules are the rules real nodes enforce that the world played (the
	// scenario's block); absent when it played none.
	Rules *scenario.Rules `json:"rules,omitempty"`

	Totals   Totals          `json:"totals"`
	Payments []PaymentResult `json:"payments"`
}

// Totals sums the payments of a result.
type Totals struct {
	Payments  int `json:"payments"`
	Succeeded int `json:"succeeded"`

	// Feasible counts the payments the feasible bound allows: no router
	// could have delivered more of them in this world.
	Feasible int `json:"feasible"`

	SuccessRate        float64 `json:"success_rate"`
	Attempts           int     `json:"attempts"`
	AttemptsPerPayment float64 `json:"attempts_per_payment"`
	AmountMsat         uint64  `json:"amount_msat"`
	DeliveredMsat      uint64  `json:"delivered_msat"`
	FeeMsat            uint64  `json:"fee_msat"`

	// FeePPM is fees over delivered amount of the successful payments.
	FeePPM float64 `json:"fee_ppm"`

	// RouterNanos is the wall time spent inside the router; SimNanos
	// the rest of the run. Zero when timing is off.
	RouterNanos int64 `json:"router_ns"`
	SimNanos    int64 `json:"sim_ns"`

	// Degraded counts the failure reports by degradation kind applied.
	Degraded map[string]int `json:"degraded,omitempty"`
}

// PaymentResult is the outcome of one payment.
type PaymentResult struct {
	Index         int    `json:"index"`
	Target        string `json:"target"`
	AmountMsat    uint64 `json:"amount_msat"`
	DeliveredMsat uint64 `json:"delivered_msat"`
	Success       bool   `json:"success"`

	// Feasible is false when no router could have delivered the payment
	// in the world it met; BoundMsat is how much of the amount the
	// bound allows (docs/scoring.md, "The feasible bound").
	Feasible  bool   `json:"feasible"`
	BoundMsat uint64 `json:"bound_msat"`

	Attempts     int    `json:"attempts"`
	Parts        int    `json:"parts"`
	FeeMsat      uint64 `json:"fee_msat"`
	FeeLimitMsat uint64 `json:"fee_limit_msat"`

	// CheapestFeeMsat is, for a delivered payment, a lower bound on the
	// fee any router could have paid for it (docs/scoring.md, "The
	// cheapest plan"); 0 when it was not delivered.
	CheapestFeeMsat uint64 `json:"cheapest_fee_msat"`

	// ElapsedSec is the virtual time from the first attempt to the
	// payment's end: its rounds times the scenario's attempt latency.
	ElapsedSec float64 `json:"elapsed_s"`

	FailureReason string `json:"failure_reason"`
	Error         string `json:"error,omitempty"`
	RouterNanos   int64  `json:"router_ns"`

	// Failures counts the failure codes the sender saw.
	Failures map[string]int `json:"failures,omitempty"`

	AttemptLog []AttemptRecord `json:"attempt_log"`
}

// AttemptRecord is one attempt of a payment: what was sent, what really
// happened and what the sender was told.
type AttemptRecord struct {
	AmountMsat uint64 `json:"amount_msat"`
	FeeMsat    uint64 `json:"fee_msat"`
	Hops       int    `json:"hops"`

	// TimeLock is the route's total time lock (the HTLC's expiry on the
	// sender's channel).
	TimeLock uint32 `json:"time_lock"`

	// Outcome is "settled", "held" (atomic, arrived and held), or the
	// snake_case failure code that really happened.
	Outcome string `json:"outcome"`

	// FailIdx is the true failing position (0 the sender, i+1 Hops[i]);
	// ReportedIdx the position the sender was told (-1 off the route).
	FailIdx     int `json:"fail_idx"`
	ReportedIdx int `json:"reported_idx"`

	// Reported is the code the sender was told ("unreadable" when
	// stripped); Degraded how the report was degraded.
	Reported string `json:"reported,omitempty"`
	Degraded string `json:"degraded,omitempty"`

	// Round is the dispatch round (shards of one round were in flight
	// together).
	Round int `json:"round"`

	// Label is the router's name for the branch that chose the route
	// (routing.RouteLabeler); empty when it gives none.
	Label string `json:"label,omitempty"`
}

// RoundingAllowance is how far below CheapestFeeMsat a payment's fee may
// lie: lnd rounds each hop's proportional fee down to the msat, so each hop
// after the sender's own of each arrived part may pay under 1 msat less than
// the cheapest plan counts.
func (p PaymentResult) RoundingAllowance() uint64 {
	var hops uint64
	for _, a := range p.AttemptLog {
		if a.FailIdx < 0 && a.Hops > 1 {
			hops += uint64(a.Hops - 1)
		}
	}
	return hops
}
