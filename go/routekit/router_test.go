package routekit

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// beginDiamond begins a payment of amt across the diamond (node 0 to node
// 3) on m, the sender's channels 1, 3 and 5 holding their capacity.
func beginDiamond(t *testing.T, m *Memory, amt lnwire.MilliSatoshi) *Payment {
	t.Helper()
	spec := &routing.SimPaymentSpec{Target: vertex(3), Amount: amt, FeeLimit: amt / 10,
		MaxParts: 4, FinalCLTVDelta: 40, CltvLimit: 900_000}
	local := map[uint64]lnwire.MilliSatoshi{1: 1_000_000_000, 3: 2_000_000_000, 5: 500_000_000}
	p, err := m.Begin(diamond(), vertex(0), local, spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSettingsReachPayments(t *testing.T) {
	s := DefaultSettings()
	s.HalfLife, s.CltvPadding = time.Hour, 7
	m := NewMemoryWith(s)
	if m.Beliefs.Prior != s.Prior || m.Beliefs.HalfLife != time.Hour {
		t.Fatalf("beliefs %+v, %v do not follow the settings", m.Beliefs.Prior, m.Beliefs.HalfLife)
	}
	if p := beginDiamond(t, m, 1000); p.Settings != s {
		t.Fatalf("payment settings %+v, want the memory's %+v", p.Settings, s)
	}
	// A memory on beliefs of its own keeps their prior and half-life and
	// takes the defaults for the rest.
	old := NewMemory(NewBeliefs(testPrior, 0))
	if old.Settings.HalfLife != 0 || old.Settings.CltvPadding != DefaultSettings().CltvPadding {
		t.Fatalf("NewMemory settings %+v", old.Settings)
	}
}

func TestHalvings(t *testing.T) {
	tests := []struct {
		amt, least lnwire.MilliSatoshi
		want       []lnwire.MilliSatoshi
	}{
		{1000, 200, []lnwire.MilliSatoshi{1000, 500, 250}},
		{1000, 250, []lnwire.MilliSatoshi{1000, 500, 250}},
		{100, 1000, []lnwire.MilliSatoshi{100}}, // the rest itself, whatever least
		{7, 0, []lnwire.MilliSatoshi{7, 3, 1}},  // never 0
	}
	for _, tc := range tests {
		if got := Halvings(tc.amt, tc.least); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Halvings(%d, %d) = %v, want %v", tc.amt, tc.least, got, tc.want)
		}
	}
}

func TestWholeFirst(t *testing.T) {
	tests := []struct {
		name         string
		atomic       bool
		rounds       int
		carriesWhole bool // a route carries the whole rest
		carriesSplit bool // a route carries a split
		asked        []bool
		found        bool
	}{
		{"the first round sends the whole rest", false, 1, true, true, []bool{true}, true},
		{"no route carries it all", false, 1, false, true, []bool{true, false}, true},
		{"after the first round", false, 2, true, true, []bool{false}, true},
		{"an atomic payment splits at once", true, 1, true, true, []bool{false}, true},
		{"nothing carries a split", true, 1, true, false, []bool{false}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &Payment{Spec: &routing.SimPaymentSpec{Atomic: tc.atomic}, Rounds: tc.rounds}
			var asked []bool
			path := p.WholeFirst(1, func(whole bool) *Path {
				asked = append(asked, whole)
				if (whole && !tc.carriesWhole) || (!whole && !tc.carriesSplit) {
					return nil
				}
				return &Path{Amount: 1}
			})
			if (path != nil) != tc.found || !reflect.DeepEqual(asked, tc.asked) {
				t.Fatalf("asked %v (path %v), want %v", asked, path, tc.asked)
			}
		})
	}
}

func TestBestAndSend(t *testing.T) {
	p := beginDiamond(t, NewMemoryWith(DefaultSettings()), 1_000_000)
	path := p.Best(1_000_000, 0.1)
	if path == nil || path.Prob < p.Settings.MinRouteProb {
		t.Fatalf("best path %+v", path)
	}
	if _, err := p.Send(nil); !errors.Is(err, ErrNoRoute) {
		t.Fatalf("sending no path: %v", err)
	}
	rt, err := p.Send(path)
	if err != nil {
		t.Fatal(err)
	}
	last := rt.Hops[len(rt.Hops)-1].OutgoingTimeLock
	if last != p.FinalLock(p.Settings.CltvPadding) || p.InFlight != 1_000_000 ||
		p.FeesCommitted != rt.TotalFees() {
		t.Fatalf("sent route: final lock %d, in flight %d, fees %d", last, p.InFlight, p.FeesCommitted)
	}
	p.Settings.MinRouteProb = 1.1
	if got := p.Best(1_000_000, 0.1); got != nil {
		t.Fatalf("a route below the least probability: %+v", got)
	}
}

func TestPlanner(t *testing.T) {
	const amt = 1_000_000
	plans := 0
	r := &Planner{Payment: beginDiamond(t, NewMemoryWith(DefaultSettings()), amt),
		Plan: func(p *Payment, rest lnwire.MilliSatoshi) []*Path {
			plans++
			// The first path is larger than the rest: it is passed over.
			return []*Path{p.Best(2*rest, 0.1), p.Best(rest, 0.1)}
		}}
	request := func(rest lnwire.MilliSatoshi, inFlight uint32) *route.Route {
		t.Helper()
		rt, err := r.RequestRoute(rest, inFlight)
		if (rt == nil) != errors.Is(err, ErrNoRoute) {
			t.Fatalf("route %v with error %v", rt, err)
		}
		return rt
	}
	if rt := request(amt, 0); rt == nil || rt.ReceiverAmt() != amt || plans != 1 {
		t.Fatalf("first request: route %v after %d plans", rt, plans)
	}
	if got := r.RouteLabel(nil); got != LabelPlan {
		t.Fatalf("a planned route labelled %q", got)
	}
	if rt := request(amt, 1); rt != nil || plans != 1 || r.Rounds != 1 {
		t.Fatalf("the plan is out: route %v, %d plans, %d rounds", rt, plans, r.Rounds)
	}
	if rt := request(amt, 0); rt == nil || plans != 2 || r.Rounds != 2 {
		t.Fatalf("a new round: route %v, %d plans, %d rounds", rt, plans, r.Rounds)
	}
	// More than the network can surely carry: no plan, the payment stops.
	if rt := request(100_000_000_000, 0); rt != nil || plans != 2 {
		t.Fatalf("an impossible rest: route %v after %d plans", rt, plans)
	}
}

func TestFirstBest(t *testing.T) {
	p := beginDiamond(t, NewMemoryWith(DefaultSettings()), 1_000_000)
	// No route carries 80, 40 or 20 M sat (the sender holds 20 M at most)
	// nor 10 M sat within the fee limit; 5 M sat takes the upper corridor.
	sizes := Halvings(8_000_000_000, 1_000_000)
	plan := p.FirstBest(sizes, 0.1)
	if len(plan) != 1 || plan[0].Amount != sizes[4] || plan[0].Edges[0].ChannelID != 1 {
		t.Fatalf("first best %+v, want one path of %d msat over channel 1", plan, sizes[4])
	}
	if plan := p.FirstBest(sizes[:4], 0.1); plan != nil {
		t.Fatalf("a route for sizes no channel carries: %+v", plan)
	}
}

func TestReportAttemptAttribution(t *testing.T) {
	m := NewMemoryWith(DefaultSettings())
	p := beginDiamond(t, m, 1_000_000)
	if a := p.Attribution(); !a.Trusted || a.ShiftShare != m.Settings.ShiftShare {
		t.Fatalf("attribution before any unreadable failure: %+v", a)
	}
	rt, err := p.Send(p.Best(1_000_000, 0.1))
	if err != nil {
		t.Fatal(err)
	}
	res := &routing.SimAttemptResult{Failure: routing.UnreadableFailure{}, FailureSourceIdx: -1}
	if err := p.ReportAttempt(1, rt, res); err != nil {
		t.Fatal(err)
	}
	if m.Unreadable != 1 || p.InFlight != 0 || p.Attribution().Trusted {
		t.Fatalf("after an unreadable failure: %d unreadable, %d in flight, attribution %+v",
			m.Unreadable, p.InFlight, p.Attribution())
	}
	e, amt := p.Graph.Hop(rt, 1)
	if _, hi := p.Beliefs.Sendable(e, p.Now(), 0); hi != float64(e.Capacity) {
		t.Fatalf("soft blame moved the sure bound of a %d msat hop to %.0f", amt, hi)
	}
	if p.Beliefs.Of(e, p.Now()).SoftWeight == 0 {
		t.Fatal("the unreadable failure blamed nothing")
	}
}

// TestRoundParts checks the parts a round may plan: a share of MaxParts,
// and no more than the attempts left over the rounds to keep.
func TestRoundParts(t *testing.T) {
	tests := []struct {
		name        string
		used        int // attempts dispatched of 40
		share, kept float64
		want        int
	}{
		{"all parts, no rounds kept", 0, 1, 0, 16},
		{"a share of MaxParts", 0, 0.5, 0, 8},
		{"attempts kept for three rounds", 0, 1, 3, 13},
		{"few attempts left", 31, 1, 3, 3},
		{"the share binds first", 10, 0.25, 2, 4},
		{"at least one part", 40, 1, 3, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := beginDiamond(t, NewMemoryWith(DefaultSettings()), 1000)
			p.Spec.MaxParts, p.Spec.MaxAttempts, p.Attempts = 16, 40, tc.used
			if got := p.RoundParts(tc.share, tc.kept); got != tc.want {
				t.Fatalf("RoundParts(%v, %v) = %d, want %d", tc.share, tc.kept, got, tc.want)
			}
		})
	}
}

// learntOut is a diamond payment of amt whose three corridors each failed
// for sure at a quarter of amt: what was learnt rules the payment out, while
// the prior alone does not.
func learntOut(t *testing.T, s Settings, amt lnwire.MilliSatoshi) *Payment {
	t.Helper()
	p := beginDiamond(t, NewMemoryWith(s), amt)
	g := p.Graph
	for _, e := range []*Edge{g.EdgeInto(3, 2), g.EdgeInto(3, 4), g.EdgeInto(5, 6)} {
		p.Beliefs.Failed(e, float64(amt/4), 1, p.Now())
	}
	if p.CanComplete(amt, s.SureHalfLife) || p.Best(amt, 0.1) != nil {
		t.Fatal("what was learnt should rule the payment out")
	}
	return p
}

func TestLastTry(t *testing.T) {
	const amt = lnwire.MilliSatoshi(300_000_000)
	off := DefaultSettings()
	off.LastTries = 0
	tests := []struct {
		name     string
		settings Settings
		amt      lnwire.MilliSatoshi
		want     bool // a route for the whole amt
	}{
		{"on the prior alone", DefaultSettings(), amt, true},
		{"turned off", off, amt, false},
		{"more than any channel holds", DefaultSettings(), 3_000_000_000, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := learntOut(t, tc.settings, amt)
			path := p.LastTry(tc.amt, 0.1)
			if (path != nil) != tc.want {
				t.Fatalf("last try %+v, want a route %v", path, tc.want)
			}
			if path != nil && (path.Amount != tc.amt || path.Prob < p.Settings.MinRouteProb) {
				t.Fatalf("last try of %d msat at P = %g", path.Amount, path.Prob)
			}
			// What was learnt stays: the failed channels still cannot carry it.
			if prob := p.Prob(p.Graph.EdgeInto(3, 2), amt); prob != 0 {
				t.Fatalf("channel 2 carries the payment with P = %g after the last try", prob)
			}
		})
	}
}

// failSecondHop reports rt failed by its second channel for lack of
// liquidity, the failure's position read at its word.
func failSecondHop(t *testing.T, p *Payment, rt *route.Route) uint64 {
	t.Helper()
	res := &routing.SimAttemptResult{Failure: &lnwire.FailTemporaryChannelFailure{}, FailureSourceIdx: 1}
	if err := p.ReportAttempt(0, rt, res); err != nil {
		t.Fatal(err)
	}
	return rt.Hops[1].ChannelID
}

// TestLastTriesGoAnotherWay fails each last try at its second channel: the
// next avoids every channel failed so far, until the diamond's three
// corridors are spent or the settings' LastTries are.
func TestLastTriesGoAnotherWay(t *testing.T) {
	const amt = lnwire.MilliSatoshi(300_000_000)
	for _, tc := range []struct{ lastTries, want int }{{6, 3}, {2, 2}, {1, 1}} {
		t.Run(fmt.Sprint(tc.lastTries), func(t *testing.T) {
			s := DefaultSettings()
			s.LastTries = tc.lastTries
			p := learntOut(t, s, amt)
			failed := map[uint64]bool{}
			for p.lastTries < tc.lastTries {
				rt, err := p.Send(p.LastTry(amt, 0.1))
				if err != nil {
					break
				}
				for _, hop := range rt.Hops {
					if failed[hop.ChannelID] {
						t.Fatalf("last try %d goes through channel %d, which failed", p.lastTries, hop.ChannelID)
					}
				}
				failed[failSecondHop(t, p, rt)] = true
			}
			if len(failed) != tc.want || p.LastTry(amt, 0.1) != nil {
				t.Fatalf("%d last tries failed (channels %v), want %d and no more", len(failed), failed, tc.want)
			}
		})
	}
}

// TestLastTryAvoidsOnlyWhatFailed: a channel that failed a larger amount
// may still carry a smaller one.
func TestLastTryAvoidsOnlyWhatFailed(t *testing.T) {
	const amt = lnwire.MilliSatoshi(300_000_000)
	p := learntOut(t, DefaultSettings(), amt)
	e := p.Graph.EdgeInto(3, 2)
	p.lastFailed = map[uint64]float64{dirKey(e): float64(amt)}
	if got := p.lastTryProb(e, amt); got != 0 {
		t.Fatalf("P = %g for the amount that failed", got)
	}
	if got, want := p.lastTryProb(e, amt/2), p.PriorProb(e, amt/2); got != want || got == 0 {
		t.Fatalf("P = %g for half the amount that failed, want the prior's %g", got, want)
	}
}

func TestPlannerMakesItsLastTries(t *testing.T) {
	const amt = lnwire.MilliSatoshi(300_000_000)
	s := DefaultSettings()
	s.LastTries = 2
	plans := 0
	r := &Planner{Payment: learntOut(t, s, amt), LastTryFeeWeight: 0.1,
		Plan: func(*Payment, lnwire.MilliSatoshi) []*Path { plans++; return nil }}
	for try := 1; try <= s.LastTries; try++ {
		rt, err := r.RequestRoute(amt, 0)
		if err != nil || rt.ReceiverAmt() != amt || plans != 0 {
			t.Fatalf("last try %d: route %v, error %v, %d plans", try, rt, err, plans)
		}
		if got := r.RouteLabel(rt); got != LabelLastTry {
			t.Fatalf("last try %d labelled %q", try, got)
		}
		failSecondHop(t, r.Payment, rt)
	}
	if rt, err := r.RequestRoute(amt, 0); rt != nil || !errors.Is(err, ErrNoRoute) || plans != 0 {
		t.Fatalf("after the last tries: route %v, error %v, %d plans", rt, err, plans)
	}
}

func TestPriorProbOverTheCapacity(t *testing.T) {
	p := beginDiamond(t, NewMemoryWith(DefaultSettings()), 1000)
	e := p.Graph.EdgeInto(3, 2) // 1,000,000 sat
	for _, tc := range []struct {
		amt  lnwire.MilliSatoshi
		zero bool
	}{{999_999_000, false}, {1_000_000_001, true}} {
		if got := p.PriorProb(e, tc.amt); (got == 0) != tc.zero || got < 0 || got > 1 {
			t.Errorf("PriorProb(%d) = %g, want zero %v", tc.amt, got, tc.zero)
		}
	}
}
