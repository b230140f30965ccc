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

// pathHop is one channel of a test route and the node it leads to.
type pathHop struct {
	to   route.Vertex
	scid uint64
}

// replayPath sends amt from S over hops, paying each forwarding node the
// fee of replayChannel's policy, with its time-lock delta.
func replayPath(amt lnwire.MilliSatoshi, hops ...pathHop) *route.Route {
	n := len(hops)
	// over[i] and lock[i] are the HTLC's amount and time lock over hop i.
	over, lock := make([]lnwire.MilliSatoshi, n), make([]uint32, n)
	over[n-1], lock[n-1] = amt, replayHeight+replayFinal
	for i := n - 2; i >= 0; i-- {
		over[i] = over[i+1] + lnwire.MilliSatoshi(replayAFeeBase) + over[i+1]/1000
		lock[i] = lock[i+1] + 40
	}
	rt := &route.Route{SourcePubKey: replayS, TotalAmount: over[0], TotalTimeLock: lock[0]}
	for i, h := range hops {
		next := min(i+1, n-1)
		rt.Hops = append(rt.Hops, &route.Hop{PubKeyBytes: h.to, ChannelID: h.scid,
			AmtToForward: over[next], OutgoingTimeLock: lock[next]})
	}
	return rt
}

// TestPredictRoundAdvancesShardsTogether checks that a round's shards take a
// channel in the order they reach it, hop by hop, not in the order sent, and
// that a failed shard's liquidity comes back only as its failure travels
// back, one hop per step.
func TestPredictRoundAdvancesShardsTogether(t *testing.T) {
	var (
		b, c, d, e = route.Vertex{0x02, 4}, route.Vertex{0x02, 5}, route.Vertex{0x02, 6}, route.Vertex{0x02, 7}
		plenty     = int64(1_000_000)
		// oneShard leaves the funder room for one shard of replayAmt (plus
		// the fees of a few hops), not two.
		oneShard = int64(replayAmt/1000)*3/2 + replayReserve + replayBuffer - replayCommit
	)
	channel := func(id uint64, x, y route.Vertex, balX int64) ObservedChannel {
		return replayChannel(id<<40|1<<16, x, y, balX, plenty)
	}
	scid := func(id uint64) uint64 { return id<<40 | 1<<16 }
	t.Run("the shard nearer the channel takes it", func(t *testing.T) {
		obs := Observation{Height: replayHeight, Source: replayS, Channels: []ObservedChannel{
			channel(1, replayS, replayA, plenty), channel(2, replayS, b, plenty),
			channel(3, b, replayA, plenty), channel(4, replayA, replayR, oneShard),
		}}
		routes := []*route.Route{
			// Sent first, it reaches A–R at its third hop...
			replayPath(replayAmt, pathHop{b, scid(2)}, pathHop{replayA, scid(3)}, pathHop{replayR, scid(4)}),
			// ...after this one took it at its second.
			replayPath(replayAmt, pathHop{replayA, scid(1)}, pathHop{replayR, scid(4)}),
		}
		ps, err := PredictRound(obs, routes, replayFinal)
		if err != nil {
			t.Fatal(err)
		}
		if ps[0].FailIndex != 2 || ps[0].Failure.Code() != lnwire.CodeTemporaryChannelFailure {
			t.Errorf("the farther shard: %d %v, want temporary_channel_failure at A (2)", ps[0].FailIndex, ps[0].Failure)
		}
		if ps[1].FailIndex != -1 {
			t.Errorf("the nearer shard fails at %d (%v)", ps[1].FailIndex, ps[1].Failure)
		}
	})
	t.Run("a failure frees its channels as it travels back", func(t *testing.T) {
		obs := Observation{Height: replayHeight, Source: replayS, Channels: []ObservedChannel{
			channel(1, replayS, replayA, plenty), channel(2, replayA, b, oneShard),
			channel(3, b, replayR, plenty), channel(4, replayS, c, plenty),
			channel(5, c, d, plenty), channel(6, d, replayA, plenty),
			channel(7, d, e, plenty), channel(8, e, replayA, plenty),
		}}
		// The first shard takes A–B at step 1 and fails at B at step 2: it
		// pays B too little. B's failure reaches A at step 3, so A–B is free
		// from step 4.
		first := replayPath(replayAmt, pathHop{replayA, scid(1)}, pathHop{b, scid(2)}, pathHop{replayR, scid(3)})
		first.Hops[1].AmtToForward++
		routes := []*route.Route{first,
			// A–B at step 3: still held.
			replayPath(replayAmt, pathHop{c, scid(4)}, pathHop{d, scid(5)}, pathHop{replayA, scid(6)},
				pathHop{b, scid(2)}, pathHop{replayR, scid(3)}),
			// A–B at step 4: free again.
			replayPath(replayAmt, pathHop{c, scid(4)}, pathHop{d, scid(5)}, pathHop{e, scid(7)},
				pathHop{replayA, scid(8)}, pathHop{b, scid(2)}, pathHop{replayR, scid(3)}),
		}
		ps, err := PredictRound(obs, routes, replayFinal)
		if err != nil {
			t.Fatal(err)
		}
		want := []struct {
			idx  int
			code lnwire.FailCode
		}{{2, lnwire.CodeFeeInsufficient}, {3, lnwire.CodeTemporaryChannelFailure}, {-1, 0}}
		for k, w := range want {
			if ps[k].FailIndex != w.idx || (w.idx >= 0 && ps[k].Failure.Code() != w.code) {
				t.Errorf("shard %d: %d %v, want %d %v", k, ps[k].FailIndex, ps[k].Failure, w.idx, w.code)
			}
		}
	})
}
