package sim

import (
	"errors"
	"testing"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// The replayed line: sender S, forwarder A, receiver R (keys in that
// order), channels S–A (100x1x0) and A–R (200x1x0), both funded by their
// first end at lnd's floor fee rate.
var (
	replayS = route.Vertex{0x02, 1}
	replayA = route.Vertex{0x02, 2}
	replayR = route.Vertex{0x02, 3}
)

const (
	replayHeight   = 800_000
	replayFinal    = 40
	replayAmt      = lnwire.MilliSatoshi(100_000_000) // 100,000 sat to R
	replayFeeRate  = 253                              // sat/kW, lnd's floor
	replayReserve  = 20_000                           // sat
	replayAnchors  = 660                              // sat, two anchors
	replayCommit   = 284                              // sat: 253 sat/kW × 1,124 WU
	replayAFeeBase = 1000                             // msat
	// replayBuffer is lnd's fee buffer on the funder's side with no HTLC
	// in flight: CalcFeeBuffer at 2 × 253 sat/kW, handed 1,124 + 172 WU
	// by availableCommitmentBalance, adding 172 more: 506 × 1,468 / 1,000.
	replayBuffer = 742 // sat
)

func sat(v int64) lnwire.MilliSatoshi { return lnwire.MilliSatoshi(v * 1000) }

// replayChannel is a channel between a and b funded by a, its capacity
// what lnd's numbers add up to with two anchors.
func replayChannel(id uint64, a, b route.Vertex, balA, balB int64) ObservedChannel {
	pol := func() *routing.CachedEdgePolicy {
		return &routing.CachedEdgePolicy{HasMaxHTLC: true, TimeLockDelta: 40, MinHTLC: 1000,
			MaxHTLC: sat(5_000_000), FeeBaseMSat: replayAFeeBase, FeeProportionalMillionths: 1000}
	}
	return ObservedChannel{
		ChannelID: id, Nodes: [2]route.Vertex{a, b},
		Capacity: sat(balA + balB + replayCommit + replayAnchors),
		Balance:  [2]lnwire.MilliSatoshi{sat(balA), sat(balB)},
		Reserve:  [2]lnwire.MilliSatoshi{sat(replayReserve), sat(replayReserve)},
		Funder:   0, CommitFee: sat(replayCommit), FeePerKw: replayFeeRate, DustLimit: sat(354),
		MaxHTLCs: [2]int{483, 483}, Policy: [2]*routing.CachedEdgePolicy{pol(), pol()},
	}
}

// replayObservation is the line with plenty on every side.
func replayObservation() Observation {
	return Observation{Height: replayHeight, Source: replayS, Channels: []ObservedChannel{
		replayChannel(100<<40|1<<16, replayS, replayA, 1_000_000, 1_000_000),
		replayChannel(200<<40|1<<16, replayA, replayR, 1_000_000, 1_000_000),
	}}
}

// replayRoute sends amt to R over the line, paying A's fee.
func replayRoute(amt lnwire.MilliSatoshi) *route.Route {
	fee := lnwire.MilliSatoshi(replayAFeeBase) + amt/1000
	return &route.Route{
		TotalTimeLock: replayHeight + replayFinal + 40, TotalAmount: amt + fee, SourcePubKey: replayS,
		Hops: []*route.Hop{
			{PubKeyBytes: replayA, ChannelID: 100<<40 | 1<<16, AmtToForward: amt,
				OutgoingTimeLock: replayHeight + replayFinal},
			{PubKeyBytes: replayR, ChannelID: 200<<40 | 1<<16, AmtToForward: amt,
				OutgoingTimeLock: replayHeight + replayFinal},
		},
	}
}

// TestPredict checks that the simulator's rules, run on observed state,
// give lnd's outcome: the funder's spendable to the msat as lnd's
// availableCommitmentBalance computes it, the slots, an offline peer, the
// non-funder's dust cap, and ends listed in either order.
func TestPredict(t *testing.T) {
	// A's balance on A–R that leaves exactly replayAmt spendable.
	edge := int64(replayAmt/1000) + replayReserve + replayBuffer - replayCommit
	tests := []struct {
		name    string
		obs     func(o *Observation)
		amt     lnwire.MilliSatoshi
		wantIdx int
		want    lnwire.FailCode
		update  bool
	}{
		{name: "arrives", wantIdx: -1},
		{name: "ends listed larger key first", wantIdx: -1, obs: func(o *Observation) {
			c := &o.Channels[1]
			c.Nodes[0], c.Nodes[1] = c.Nodes[1], c.Nodes[0]
			c.Balance[0], c.Balance[1] = c.Balance[1], c.Balance[0]
			c.Funder = 1
		}},
		{name: "funder spends to the msat", wantIdx: -1, obs: func(o *Observation) {
			o.Channels[1] = replayChannel(200<<40|1<<16, replayA, replayR, edge, 1_000_000)
		}},
		{name: "funder one msat over", amt: replayAmt + 1, wantIdx: 1,
			want: lnwire.CodeTemporaryChannelFailure, update: true, obs: func(o *Observation) {
				o.Channels[1] = replayChannel(200<<40|1<<16, replayA, replayR, edge, 1_000_000)
			}},
		{name: "sender short", wantIdx: 0, want: lnwire.CodeTemporaryChannelFailure,
			obs: func(o *Observation) { o.Channels[0].Balance[0] = sat(50_000) }},
		{name: "slots full", wantIdx: 1, want: lnwire.CodeTemporaryChannelFailure,
			obs: func(o *Observation) { o.Channels[1].InFlight[0] = 483 }},
		{name: "next peer offline", wantIdx: 1, want: lnwire.CodeUnknownNextPeer,
			obs: func(o *Observation) { o.Offline = []route.Vertex{replayR} }},
		{name: "fee raised", wantIdx: 1, want: lnwire.CodeFeeInsufficient, update: true,
			obs: func(o *Observation) { o.Channels[1].Policy[0].FeeBaseMSat = 5000 }},
		{name: "funder cannot pay for the HTLC", wantIdx: 1,
			want: lnwire.CodeTemporaryChannelFailure, update: true, obs: func(o *Observation) {
				// R funds A–R and, past its reserve, has 10 sat and the
				// commitment's fee back: 294 sat, under the 284 + 43 sat
				// of the commitment with one more HTLC. A may send only
				// what stays off the commitment.
				c := replayChannel(200<<40|1<<16, replayR, replayA, replayReserve+10, 1_000_000)
				o.Channels[1] = c
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := replayObservation()
			if tt.obs != nil {
				tt.obs(&obs)
			}
			amt := tt.amt
			if amt == 0 {
				amt = replayAmt
			}
			ps, err := PredictRound(obs, []*route.Route{replayRoute(amt)}, replayFinal)
			if err != nil {
				t.Fatal(err)
			}
			p := ps[0]
			if p.FailIndex != tt.wantIdx {
				t.Fatalf("fails at %d (%v), want %d", p.FailIndex, p.Failure, tt.wantIdx)
			}
			if tt.wantIdx < 0 {
				return
			}
			if p.Failure.Code() != tt.want || p.HasUpdate != tt.update {
				t.Errorf("got %v (update %v), want %v (update %v)", p.Failure.Code(), p.HasUpdate, tt.want, tt.update)
			}
		})
	}
}

// TestPredictRefuses checks that a state no channel can be in, and a route
// over a channel nobody observed, are errors, not predictions.
func TestPredictRefuses(t *testing.T) {
	over := replayObservation()
	over.Channels[0].Capacity = sat(1000)
	if _, err := PredictRound(over, []*route.Route{replayRoute(replayAmt)}, replayFinal); !errors.Is(err, ErrObservedState) {
		t.Errorf("funds over the capacity: got %v", err)
	}
	missing := replayObservation()
	missing.Channels = missing.Channels[:1]
	if _, err := PredictRound(missing, []*route.Route{replayRoute(replayAmt)}, replayFinal); !errors.Is(err, ErrUnobservedHop) {
		t.Errorf("unobserved hop: got %v", err)
	}
	twice := replayObservation()
	twice.Channels = append(twice.Channels, twice.Channels[0])
	if _, err := PredictRound(twice, []*route.Route{replayRoute(replayAmt)}, replayFinal); !errors.Is(err, ErrObservedState) {
		t.Errorf("a channel observed twice: got %v", err)
	}
}

// TestPredictRoundHoldsEarlierShards checks that the shards of one round
// meet what the earlier ones left, as in a simulated round: A can forward
// one shard of replayAmt, not two.
func TestPredictRoundHoldsEarlierShards(t *testing.T) {
	obs := replayObservation()
	edge := int64(replayAmt/1000) + replayReserve + replayBuffer + 50 - replayCommit
	obs.Channels[1] = replayChannel(200<<40|1<<16, replayA, replayR, edge, 1_000_000)
	ps, err := PredictRound(obs, []*route.Route{replayRoute(replayAmt), replayRoute(replayAmt)}, replayFinal)
	if err != nil {
		t.Fatal(err)
	}
	if ps[0].FailIndex != -1 {
		t.Fatalf("the first shard fails at %d (%v)", ps[0].FailIndex, ps[0].Failure)
	}
	if ps[1].FailIndex != 1 || ps[1].Failure.Code() != lnwire.CodeTemporaryChannelFailure {
		t.Fatalf("the second shard: %d %v, want temporary_channel_failure at A", ps[1].FailIndex, ps[1].Failure)
	}
}
