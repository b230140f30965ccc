package routing

import (
	"testing"

	"github.com/lightningnetwork/lnd/graph/db/models"
	"github.com/lightningnetwork/lnd/lnwire"
)

// TestInboundFeeIsLnds checks InboundFee against lnd's own
// models.InboundFee.CalcFee (rounding, the rate's cap), and HopFee's sum,
// clamped at 0 as lnd's pathfinding clamps it.
func TestInboundFeeIsLnds(t *testing.T) {
	tests := []struct {
		name       string
		base, rate int32
		amt        lnwire.MilliSatoshi
	}{
		{"none", 0, 0, 1_000_000},
		{"discount rounds up", -1000, -100, 1_001_099},
		{"surcharge rounds down", 10, 7, 1_234_567},
		{"capped rate", 0, -20_000_000, 5_000},
		{"huge amount", -1, -1, 1 << 50},
	}
	out := &CachedEdgePolicy{FeeBaseMSat: 1000, FeeProportionalMillionths: 100}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := &CachedEdgePolicy{InboundFeeBaseMSat: tc.base, InboundFeeRate: tc.rate}
			lnd := models.InboundFee{Base: tc.base, Rate: tc.rate}
			if got, want := in.InboundFee(tc.amt), lnd.CalcFee(tc.amt); got != want {
				t.Fatalf("InboundFee %d, lnd's %d", got, want)
			}
			sum := int64(out.ComputeFee(tc.amt)) + lnd.CalcFee(tc.amt+out.ComputeFee(tc.amt))
			if got := HopFee(out, in, tc.amt); int64(got) != max(sum, 0) {
				t.Fatalf("HopFee %d, want max(%d, 0)", got, sum)
			}
		})
	}
	if got := HopFee(out, nil, 1_000_000); got != 1100 {
		t.Fatalf("HopFee without an inbound policy %d, want 1100", got)
	}
}
