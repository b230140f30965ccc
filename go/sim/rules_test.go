package sim

import (
	"testing"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/routesim-evolve/routesim/routing"
	"github.com/routesim-evolve/routesim/scenario"
)

// testRules are the rules the generator writes by default, with every
// node's slots small and a third of the directions busy, so that a small
// world shows each draw.
func testRules() *scenario.Rules {
	return &scenario.Rules{
		ReserveShare: 0.01, DustLimitSat: 354, CommitFeerateSatPerKw: 1000, AnchorsSat: 660,
		HTLCSlots: scenario.HTLCSlots{LargeLimit: 483, SmallLimit: 30, SmallShare: 0.5,
			BusyShare: 0.3, BusyHTLCsMin: 20, BusyHTLCsMax: 40},
		Peers: scenario.Peers{FlakyShare: 0.2, OnlineMeanSec: 3600, OfflineMeanSec: 900},
	}
}

// TestDrawRules checks the state the rules draw: each side's reserve (1 %
// of the capacity, never below the dust limit), exactly one funder per
// channel holding the anchors and paying the fee, each direction's limit
// the receiving node's, busy directions' HTLCs within their range and the
// limit (a small node's busy direction often full), and the
// balances drawn as without rules.
func TestDrawRules(t *testing.T) {
	sc := lineScenario(40, 1_000_000, testPolicy(1000, 100, 40), 1)
	sc.Graph.Channels[3].CapacitySat = 20_000 // 1 % is 200 sat: the dust limit wins
	plain := mustWorld(t, sc)
	sc.Rules = testRules()
	w := mustWorld(t, sc)

	limits := map[int]int{} // node → its limit, as every direction into it says
	small, busy := 0, 0
	for i := range w.net.channels {
		c := &w.net.channels[i]
		if c.local != plain.net.channels[i].local {
			t.Fatalf("channel %d: rules moved the balances %v -> %v", i, plain.net.channels[i].local, c.local)
		}
		reserve := lnwire.MilliSatoshi(10_000_000)
		if i == 3 {
			reserve = 354_000
		}
		funders := 0
		for d := 0; d < 2; d++ {
			switch c.keep[d] {
			case reserve:
				if c.feeRate[d] != 0 {
					t.Fatalf("channel %d side %d pays the fee without the anchors", i, d)
				}
			case reserve + 660_000:
				funders++
				if c.feeRate[d] != 1000 {
					t.Fatalf("channel %d side %d: funder's fee rate %d", i, d, c.feeRate[d])
				}
			default:
				t.Fatalf("channel %d side %d keeps %d msat", i, d, c.keep[d])
			}
			node, limit := c.nodes[1-d], c.slotLimit[d]
			if prev, ok := limits[node]; ok && prev != limit {
				t.Fatalf("node %d accepts %d HTLCs on one channel and %d on another", node, prev, limit)
			}
			limits[node] = limit
			if limit != 30 && limit != 483 {
				t.Fatalf("channel %d direction %d: limit %d", i, d, limit)
			}
			if used := c.slotsUsed[d]; used > 0 {
				busy++
				if used < 20 || used > min(40, limit) {
					t.Fatalf("channel %d direction %d: %d of %d in use", i, d, used, limit)
				}
			}
		}
		if funders != 1 {
			t.Fatalf("channel %d has %d funders", i, funders)
		}
		// A funder always holds its reserve, the anchors and the
		// commitment's fee (1000 sat/kw × 1,124 WU), where either end can.
		f := 0
		if c.feeRate[1] > 0 {
			f = 1
		}
		if need := c.keep[f] + 1_124_000; c.local[f] < need && c.local[1-f] >= c.keep[1-f]+660_000+1_124_000 {
			t.Fatalf("channel %d: funder %d holds %d, under the %d a funder always holds", i, f, c.local[f], need)
		}
	}
	for _, limit := range limits {
		if limit == 30 {
			small++
		}
	}
	if small == 0 || small == len(limits) || busy == 0 || busy == 2*len(w.net.channels) {
		t.Fatalf("%d of %d nodes small, %d of %d directions busy: the draws do not vary",
			small, len(limits), busy, 2*len(w.net.channels))
	}
}

// TestSpendable checks what a side may offer: its balance less its reserve,
// and on the funder's side less the anchors and lnd's fee buffer, which
// grows with the HTLCs in flight either way; never below 0.
func TestSpendable(t *testing.T) {
	tests := []struct {
		name    string
		local   lnwire.MilliSatoshi
		keep    lnwire.MilliSatoshi
		rate    uint64
		inUse   [2]int
		want    lnwire.MilliSatoshi
		bandwth lnwire.MilliSatoshi
	}{
		{"no rules", 5_000, 0, 0, [2]int{}, 5_000, 5_000},
		{"reserve", 50_000_000, 10_000_000, 0, [2]int{}, 40_000_000, 40_000_000},
		{"below the reserve", 9_000_000, 10_000_000, 0, [2]int{}, 0, 0},
		// 2 × 1000 sat/kw × (1124 + 2 × 172) WU = 2,936 sat: lnd's
		// availableCommitmentBalance hands CalcFeeBuffer the weight with
		// the new HTLC, and the buffer adds one more.
		{"fee buffer", 50_000_000, 10_660_000, 1000, [2]int{}, 50_000_000 - 10_660_000 - 2_936_000, 36_404_000},
		// Three HTLCs more: 2 × (1124 + 5 × 172) = 3,968 sat.
		{"fee buffer with HTLCs", 50_000_000, 10_660_000, 1000, [2]int{1, 2}, 50_000_000 - 10_660_000 - 3_968_000, 35_372_000},
		// Every slot of direction 0 in use: spendable, but no bandwidth.
		{"no free slot", 50_000_000, 10_000_000, 0, [2]int{30, 0}, 40_000_000, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := channel{local: [2]lnwire.MilliSatoshi{tc.local, 0}, keep: [2]lnwire.MilliSatoshi{tc.keep, 0},
				feeRate: [2]uint64{tc.rate, 0}, slotLimit: [2]int{30, 30}, slotsUsed: tc.inUse}
			if got := c.spendable(0); got != tc.want {
				t.Fatalf("spendable %d, want %d", got, tc.want)
			}
			if got := c.bandwidth(0); got != tc.bandwth {
				t.Fatalf("bandwidth %d, want %d", got, tc.bandwth)
			}
		})
	}
}

// TestSpendableWhenTheFunderCannotPay checks lnd's non-initiator case of
// availableCommitmentBalance: when the funder's side, less what it keeps,
// cannot pay the commitment's fee with one more HTLC (1,296 sat at
// 1,000 sat/kw), the other side may send just under the dust limit.
func TestSpendableWhenTheFunderCannotPay(t *testing.T) {
	for _, tc := range []struct {
		name   string
		theirs lnwire.MilliSatoshi // the funder's balance over what it keeps
		want   lnwire.MilliSatoshi
	}{
		{"the funder can pay", 1_296_000, 40_000_000},
		{"the funder cannot pay", 1_295_999, 354_000 - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := channel{local: [2]lnwire.MilliSatoshi{50_000_000, 10_660_000 + tc.theirs},
				keep: [2]lnwire.MilliSatoshi{10_000_000, 10_660_000}, feeRate: [2]uint64{0, 1000},
				dust: 354_000}
			if got := c.spendable(0); got != tc.want {
				t.Fatalf("spendable %d, want %d", got, tc.want)
			}
		})
	}
}

// TestShiftIsWhatARealPaymentMoves checks that background traffic moves
// only what a real payment over the channel could: no more than the payer
// may spend nor than its policy's maximum, nothing under its minimum.
func TestShiftIsWhatARealPaymentMoves(t *testing.T) {
	pol := func(minHTLC, maxHTLC lnwire.MilliSatoshi) *routing.CachedEdgePolicy {
		return &routing.CachedEdgePolicy{MinHTLC: minHTLC, MaxHTLC: maxHTLC}
	}
	tests := []struct {
		name   string
		keep   lnwire.MilliSatoshi
		policy *routing.CachedEdgePolicy
		amt    lnwire.MilliSatoshi
		want   lnwire.MilliSatoshi
	}{
		{"all of it", 0, nil, 30_000_000, 30_000_000},
		{"up to the balance", 0, nil, 80_000_000, 50_000_000},
		{"never the reserve", 10_000_000, nil, 80_000_000, 40_000_000},
		{"up to the maximum", 0, pol(1_000, 20_000_000), 30_000_000, 20_000_000},
		{"nothing under the minimum", 0, pol(40_000_000, 0), 30_000_000, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := channel{capacity: 100_000_000, local: [2]lnwire.MilliSatoshi{50_000_000, 50_000_000},
				keep: [2]lnwire.MilliSatoshi{tc.keep, 0}}
			c.actual[0] = tc.policy
			if got := c.shift(0, tc.amt); got != tc.want {
				t.Fatalf("moved %d, want %d", got, tc.want)
			}
			if c.local[0]+c.local[1] != c.capacity {
				t.Fatalf("the shift lost funds: %v", c.local)
			}
		})
	}
}
