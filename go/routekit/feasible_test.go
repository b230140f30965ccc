package routekit

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lightningnetwork/lnd/lnwire"
)

func TestPriorSample(t *testing.T) {
	const c = 2_000_000_000.0
	tests := []struct {
		name   string
		lo, hi float64
	}{
		{"whole channel", 0, c},
		{"a failure bounds it", 0, 0.3 * c},
		{"both bounds", 0.2 * c, 0.7 * c},
		{"narrow", 0.5 * c, 0.5*c + 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			const n = 20_000
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = testPrior.sample(c, tc.lo, tc.hi, rng)
				if xs[i] < tc.lo || xs[i] > tc.hi {
					t.Fatalf("drew %.0f outside [%.0f, %.0f]", xs[i], tc.lo, tc.hi)
				}
			}
			// The share drawn below x is the conditioned prior's CDF.
			for _, q := range []float64{0.1, 0.25, 0.5, 0.75, 0.9} {
				x := tc.lo + q*(tc.hi-tc.lo)
				below := 0
				for _, v := range xs {
					if v <= x {
						below++
					}
				}
				want := (testPrior.CDF(x, c) - testPrior.CDF(tc.lo, c)) /
					(testPrior.CDF(tc.hi, c) - testPrior.CDF(tc.lo, c))
				if got := float64(below) / n; math.Abs(got-want) > 0.015 {
					t.Errorf("share below %.0f is %.3f, want %.3f", x, got, want)
				}
			}
		})
	}
}

func TestWorthStarting(t *testing.T) {
	const sat = lnwire.MilliSatoshi(1000)
	tests := []struct {
		name      string
		amt       lnwire.MilliSatoshi
		atomic    bool
		startProb float64
		sent      bool // an attempt went out already
		learn     func(p *Payment)
		want      bool
	}{
		{"small: fits nearly every world", 10_000 * sat, false, 0.2, false, nil, true},
		// 3M of the 3.5M sat the three corridors hold at most: every
		// remote channel must lean the payment's way, as the bimodal
		// prior makes unlikely.
		{"nearly all the corridors hold", 3_000_000 * sat, false, 0.2, false, nil, false},
		{"atomic: nothing is lost by trying", 3_000_000 * sat, true, 0.2, false, nil, true},
		{"started already", 3_000_000 * sat, false, 0.2, true, nil, true},
		{"gate off", 3_000_000 * sat, false, 0, false, nil, true},
		{"known to fit", 3_000_000 * sat, false, 0.2, false, func(p *Payment) {
			for _, in := range []struct {
				to   NodeID
				scid uint64
			}{{3, 2}, {3, 4}, {5, 6}, {3, 7}} {
				e := p.Graph.EdgeInto(in.to, in.scid)
				p.Beliefs.Carried(e, float64(e.Capacity)-1000, p.Now())
			}
		}, true},
		{"known not to fit", 10_000 * sat, false, 0.2, false, func(p *Payment) {
			for _, scid := range []uint64{2, 4, 7} { // every channel into the target
				p.Beliefs.Failed(p.Graph.EdgeInto(3, scid), 1000, 1, p.Now())
			}
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSettings()
			s.StartProb = tc.startProb
			p := beginDiamond(t, NewMemoryWith(s), tc.amt)
			p.Spec.Atomic = tc.atomic
			if tc.sent {
				p.Attempts = 1
			}
			if tc.learn != nil {
				tc.learn(p)
			}
			if got := p.WorthStarting(tc.amt); got != tc.want {
				t.Fatalf("WorthStarting = %v, want %v", got, tc.want)
			}
		})
	}
}
