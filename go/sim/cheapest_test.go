package sim

import (
	"testing"

	"github.com/lightningnetwork/lnd/lnwire"

	"github.com/routesim-evolve/routesim/scenario"
)

// TestCheapestPlan checks the cheapest plan on the diamond: the cheap
// corridor 1 → 3 (100 ppm, base 7) fills first at its balance, the dear
// one 2 → 3 (1000 ppm, base 5) takes the rest, and the least base fee of a
// route is added. A plan whose parts crossed a channel both ways, or a
// world with background traffic, lets the cheap corridor carry it all.
func TestCheapestPlan(t *testing.T) {
	tests := []struct {
		name    string
		traffic bool
		arrived [][]legHold
		want    uint64
	}{
		{name: "balances bind", arrived: [][]legHold{{{channel: 2, dir: 0}}},
			want: 5 + (300_000_000*100+200_000_000*1000)/1_000_000},
		{name: "parts crossed back", arrived: [][]legHold{{{channel: 2, dir: 0}}, {{channel: 2, dir: 1}}},
			want: 5 + 500_000_000*100/1_000_000},
		{name: "background traffic", traffic: true, arrived: [][]legHold{{{channel: 2, dir: 0}}},
			want: 5 + 500_000_000*100/1_000_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := diamondScenario(500_000_000)
			if tt.traffic {
				sc.Traffic = scenario.Traffic{EventsPerHour: 1, MedianShiftSat: 1}
			}
			w := mustWorld(t, sc)
			setAllBalances(w, 300_000_000) // toward the higher node: 0 → 1, 2 → 3
			for scid, fee := range map[int][2]lnwire.MilliSatoshi{2: {7, 100}, 3: {5, 1000}} {
				p := w.net.channels[w.net.chanIndex[mustSCID(t, testSCID(scid))]].actual[0]
				p.FeeBaseMSat, p.FeeProportionalMillionths = fee[0], fee[1]
			}
			b := w.newBound(w.newSpec(0, sc.Payments[0]))
			if !b.feasible {
				t.Fatalf("not feasible: reached %d", b.reached)
			}
			if got := b.cheapestFee(tt.arrived); got != tt.want {
				t.Errorf("cheapest fee %d msat, want %d", got, tt.want)
			}
		})
	}
}

// TestNoRouterPaysBelowTheCheapestPlan plays the example scenarios through
// the test router: every delivered payment pays at least the cheapest plan
// less its rounding allowance, and only delivered payments have one.
func TestNoRouterPaysBelowTheCheapestPlan(t *testing.T) {
	forEachHopRun(t, func(name string, res *Result) {
		priced := 0
		for _, p := range res.Payments {
			if !p.Success {
				if p.CheapestFeeMsat != 0 {
					t.Errorf("%s: undelivered payment %d has a cheapest plan", name, p.Index)
				}
				continue
			}
			if p.FeeMsat+p.RoundingAllowance() < p.CheapestFeeMsat {
				t.Errorf("%s: payment %d paid %d msat, below the cheapest plan's %d",
					name, p.Index, p.FeeMsat, p.CheapestFeeMsat)
			}
			if p.CheapestFeeMsat > 0 {
				priced++
			}
		}
		if priced == 0 {
			t.Errorf("%s: no delivered payment has a cheapest plan above 0", name)
		}
	})
}
