package scenario

import (
	"testing"

	"github.com/routesim-evolve/routesim/routing"
)

// limitsExample is docs/examples/limits.json: the limits Go enforces, as
// Go computes them, for the Python side's parity test
// (tests/test_limits_parity.py): one definition of each, checked from both.
type limitsExample struct {
	Comment            string         `json:"comment"`
	MaxRouteHops       int            `json:"max_route_hops"`
	MaxRouteLabelBytes int            `json:"max_route_label_bytes"`
	MaxAcceptedHTLCs   int            `json:"max_accepted_htlcs"`
	MPPTimeoutSec      int            `json:"mpp_timeout_s"`
	FeeLimits          []feeLimitCase `json:"fee_limits"`
}

// feeLimitCase is one payment: its amount, its own fee limit if any, the
// defaults' ppm and base, and the fee limit Go gives it.
type feeLimitCase struct {
	AmountMsat   uint64  `json:"amount_msat"`
	OwnMsat      *uint64 `json:"fee_limit_msat,omitempty"`
	PPM          float64 `json:"fee_limit_ppm"`
	BaseMsat     uint64  `json:"fee_limit_base_msat"`
	FeeLimitMsat uint64  `json:"want_msat"`
}

// TestLimitsExample checks that docs/examples/limits.json is what Go
// computes today; ROUTESIM_UPDATE_EXAMPLE=1 writes it anew.
func TestLimitsExample(t *testing.T) {
	own := uint64(5_000)
	cases := []feeLimitCase{
		{AmountMsat: 1_000_000, PPM: 10_000, BaseMsat: 10_000},
		{AmountMsat: 191_038_000, PPM: 10_000, BaseMsat: 10_000},
		{AmountMsat: 1_999_999_999, PPM: 5_000.5, BaseMsat: 1},
		{AmountMsat: 123_457, PPM: 333.3, BaseMsat: 0},
		{AmountMsat: 10_000_000_000_000, PPM: 7.77, BaseMsat: 3},
		{AmountMsat: 7, PPM: 1_000_000, BaseMsat: 0},
		{AmountMsat: 500_000_000, OwnMsat: &own, PPM: 10_000, BaseMsat: 10_000},
	}
	doc := limitsExample{
		Comment: "Written by go/scenario/limits_test.go (ROUTESIM_UPDATE_EXAMPLE=1 go test " +
			"./scenario -run LimitsExample); read by tests/test_limits_parity.py.",
		MaxRouteHops:       routing.MaxRouteHops,
		MaxRouteLabelBytes: routing.MaxRouteLabelBytes,
		MaxAcceptedHTLCs:   MaxAcceptedHTLCs,
		MPPTimeoutSec:      MPPTimeoutSec,
	}
	for _, c := range cases {
		p := Payment{AmountMsat: c.AmountMsat, FeeLimitMsat: c.OwnMsat}
		c.FeeLimitMsat = p.FeeLimit(PaymentDefaults{FeeLimitPPM: c.PPM, FeeLimitBase: c.BaseMsat})
		doc.FeeLimits = append(doc.FeeLimits, c)
	}
	checkDocExample(t, "limits.json", "LimitsExample", doc)
}
