package sim

import (
	"testing"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/scenario"
)

// forward sends one shard along rt, alone in its round (see forwardRound).
func (w *World) forward(rt *route.Route, finalCltvDelta uint16) forwardOutcome {
	return w.forwardRound([]*route.Route{rt}, finalCltvDelta)[0]
}

// TestForwardFailureCodes checks that each check of the forwarding path
// fails with the right code at the right node, and that a failed shard
// leaves every balance as it was.
func TestForwardFailureCodes(t *testing.T) {
	const amt = lnwire.MilliSatoshi(100_000_000)
	tests := []struct {
		name    string
		world   func(w *World)        // change the world after the route is built
		mangle  func(rt *route.Route) // change the route
		wantIdx int                   // failing position, -1 for success
		want    string                // failure code name
		update  bool                  // failure carries a channel update
	}{
		{name: "settles", wantIdx: -1},
		{
			name:    "sender balance",
			world:   func(w *World) { w.net.channels[0].setBalance(0) },
			wantIdx: 0, want: "temporary_channel_failure",
		},
		{
			name:    "remote liquidity",
			world:   func(w *World) { w.net.channels[1].setBalance(amt - 1) },
			wantIdx: 1, want: "temporary_channel_failure", update: true,
		},
		{
			name:    "disabled",
			world:   func(w *World) { w.net.channels[1].actual[0].IsDisabled = true },
			wantIdx: 1, want: "channel_disabled", update: true,
		},
		{
			name:    "below minimum",
			world:   func(w *World) { w.net.channels[2].actual[0].MinHTLC = amt + 1 },
			wantIdx: 2, want: "amount_below_minimum", update: true,
		},
		{
			name:    "above maximum",
			world:   func(w *World) { w.net.channels[1].actual[0].MaxHTLC = amt },
			wantIdx: 1, want: "temporary_channel_failure", update: true,
		},
		{
			// The sender's own link checks its own policy's maximum
			// (canSendHtlc's validateHtlcAmount); the old simulator
			// checked only the expiry and the balance at the sender.
			name:    "above the sender's own maximum",
			world:   func(w *World) { w.net.channels[0].actual[0].MaxHTLC = amt },
			wantIdx: 0, want: "temporary_channel_failure",
		},
		{
			name:    "below the sender's own minimum",
			world:   func(w *World) { w.net.channels[0].actual[0].MinHTLC = amt + 1_000_000 },
			wantIdx: 0, want: "amount_below_minimum",
		},
		{
			name:    "stale fee",
			world:   func(w *World) { w.net.channels[1].actual[0].FeeProportionalMillionths += 10 },
			wantIdx: 1, want: "fee_insufficient", update: true,
		},
		{
			name:    "stale cltv",
			world:   func(w *World) { w.net.channels[2].actual[0].TimeLockDelta += 1 },
			wantIdx: 2, want: "incorrect_cltv_expiry", update: true,
		},
		{
			name:    "final amount",
			mangle:  func(rt *route.Route) { rt.Hops[1].AmtToForward-- },
			wantIdx: 3, want: "final_incorrect_htlc_amount",
		},
		{
			name:    "final cltv mismatch",
			mangle:  func(rt *route.Route) { rt.Hops[1].OutgoingTimeLock-- },
			wantIdx: 3, want: "final_incorrect_cltv_expiry",
		},
		{
			// The old simulator judged the payload's outgoing_cltv_value
			// against the height: a final payload of 0 was refused after
			// every hop had forwarded it, a free probe. lnd's receiver
			// judges the HTLC's own expiry (invoices' updateMpp).
			name:    "final payload of 0 settles",
			mangle:  func(rt *route.Route) { rt.Hops[2].OutgoingTimeLock = 0 },
			wantIdx: -1,
		},
		{
			name:    "final cltv too soon",
			mangle:  func(rt *route.Route) { shiftLocks(rt, -1) },
			wantIdx: 3, want: "incorrect_or_unknown_payment_details",
		},
		{
			// lnd's FinalCltvRejectDelta holds whatever the invoice asks.
			name:    "final cltv within the reject delta",
			mangle:  func(rt *route.Route) { shiftLocks(rt, -(40 - FinalCltvRejectDelta + 1)) },
			wantIdx: 3, want: "incorrect_or_unknown_payment_details",
		},
		{
			// canSendHtlc: the old simulator forwarded any expiry.
			name: "expiry too soon at a hop",
			mangle: func(rt *route.Route) {
				shiftLocks(rt, -int(rt.Hops[1].OutgoingTimeLock-w0Height(rt)-OutgoingCltvRejectDelta))
			},
			wantIdx: 2, want: "expiry_too_soon", update: true,
		},
		{
			// canSendHtlc: an HTLC offered more than 2016 blocks ahead.
			name:    "expiry too far",
			mangle:  func(rt *route.Route) { shiftLocks(rt, MaxOutgoingCltvExpiry) },
			wantIdx: 0, want: "expiry_too_far",
		},
		{
			// CheckHtlcForward checks the fee before the minimum: the old
			// simulator said amount_below_minimum.
			name: "fee before minimum",
			world: func(w *World) {
				w.net.channels[1].actual[0].FeeProportionalMillionths += 10
				w.net.channels[1].actual[0].MinHTLC = amt + 1
			},
			wantIdx: 1, want: "fee_insufficient", update: true,
		},
		{
			// canSendHtlc checks the balance before CheckHtlcForward checks
			// the time-lock delta: the old simulator said
			// incorrect_cltv_expiry.
			name: "balance before cltv delta",
			world: func(w *World) {
				w.net.channels[2].actual[0].TimeLockDelta += 1
				w.net.channels[2].setBalance(amt - 1)
			},
			wantIdx: 2, want: "temporary_channel_failure", update: true,
		},
		// The rules real nodes enforce (rules.go); in each the old
		// simulator forwarded, the balance covering the shard.
		{
			// lnwallet's availableCommitmentBalance: the reserve is not
			// spendable; canSendHtlc refuses with the update.
			name:    "reserve",
			world:   keepBack(1, amt+5_000_000, 10_000_000, 0, 0),
			wantIdx: 1, want: "temporary_channel_failure", update: true,
		},
		{
			// The sender's own link: its reserve binds it too, and it
			// learns nothing from its own update.
			name:    "sender's reserve",
			world:   keepBack(0, amt+5_000_000, 10_000_000, 0, 0),
			wantIdx: 0, want: "temporary_channel_failure",
		},
		{
			// The funder keeps lnwallet.CalcFeeBuffer: at 2,500 sat/kw,
			// 2 × 2.5 × (1,124 + 172) = 6,480 sat of a 5,000-sat margin.
			name:    "funder's fee buffer",
			world:   keepBack(1, amt+5_000_000, 0, 2500, 0),
			wantIdx: 1, want: "temporary_channel_failure", update: true,
		},
		{
			// The fee buffer grows with the HTLCs on the commitment:
			// 6,480 sat fits a 7,000-sat margin, 7,340 with one more
			// HTLC (either way) does not.
			name:    "fee buffer counts the HTLCs in flight",
			world:   keepBack(1, amt+7_000_000, 0, 2500, 1),
			wantIdx: 1, want: "temporary_channel_failure", update: true,
		},
		{
			// The receiving node's max_accepted_htlcs: lnwallet's
			// validateCommitmentSanity, which handleDownstreamUpdateAdd
			// turns into temporary_channel_failure without an update.
			name: "no free HTLC slot",
			world: func(w *World) {
				w.net.channels[1].slotLimit[0] = 30
				w.net.channels[1].slotsUsed[0] = 30
			},
			wantIdx: 1, want: "temporary_channel_failure",
		},
		{
			// Slots are checked when the link adds the HTLC, after every
			// check of CheckHtlcForward.
			name: "cltv delta before slots",
			world: func(w *World) {
				w.net.channels[2].actual[0].TimeLockDelta += 1
				w.net.channels[2].slotLimit[0] = 30
				w.net.channels[2].slotsUsed[0] = 30
			},
			wantIdx: 2, want: "incorrect_cltv_expiry", update: true,
		},
		{
			// CheckHtlcForward adds the node's inbound fee on the channel
			// the HTLC came in over (lnd 0.18+): node 2's discount on
			// channel 1 cancels its fee on channel 2, so a route that pays
			// node 2 nothing passes. The old simulator said
			// fee_insufficient.
			name: "inbound discount",
			world: func(w *World) {
				in := w.net.channels[1].actual[1] // node 2's own policy of channel 1
				in.InboundFeeBaseMSat, in.InboundFeeRate = -1000, -100
			},
			mangle:  func(rt *route.Route) { dropFeeAt(rt, 2) },
			wantIdx: -1,
		},
		{
			// A positive inbound fee is a surcharge the route did not pay.
			name: "inbound surcharge",
			world: func(w *World) {
				w.net.channels[1].actual[1].InboundFeeBaseMSat = 1
			},
			wantIdx: 2, want: "fee_insufficient", update: true,
		},
		{
			// htlcswitch's handlePacketAdd finds no link to an offline
			// peer: unknown_next_peer, no update, before CheckHtlcForward.
			name:    "next peer offline",
			world:   func(w *World) { setOffline(w, 2) },
			wantIdx: 1, want: "unknown_next_peer",
		},
		{
			name:    "the sender's peer offline",
			world:   func(w *World) { setOffline(w, 1) },
			wantIdx: 0, want: "unknown_next_peer",
		},
		{
			name:    "the receiver offline",
			world:   func(w *World) { setOffline(w, 3) },
			wantIdx: 2, want: "unknown_next_peer",
		},
		{
			name: "an offline peer before a disabled channel",
			world: func(w *World) {
				setOffline(w, 2)
				w.net.channels[1].actual[0].IsDisabled = true
			},
			wantIdx: 1, want: "unknown_next_peer",
		},
		{
			name: "a free slot is enough",
			world: func(w *World) {
				w.net.channels[1].slotLimit[0] = 30
				w.net.channels[1].slotsUsed[0] = 29
			},
			wantIdx: -1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := balancedLine(t, 4, amt)
			rt := lineRoute(t, w, 3, amt)
			if tc.world != nil {
				tc.world(w)
			}
			if tc.mangle != nil {
				tc.mangle(rt)
			}
			before, slots := balances(w), slotsInUse(w)
			out := w.forward(rt, 40)
			if out.failIdx != tc.wantIdx {
				t.Fatalf("failing position %d (%v), want %d", out.failIdx, out.failure, tc.wantIdx)
			}
			if got := failureName(out.failure); got != tc.want {
				t.Fatalf("failure %q, want %q", got, tc.want)
			}
			if (out.update != nil) != tc.update {
				t.Fatalf("channel update present %v, want %v", out.update != nil, tc.update)
			}
			if err := w.net.checkConservation(); err != nil {
				t.Fatal(err)
			}
			if tc.wantIdx >= 0 {
				if got := balances(w); got != before {
					t.Fatalf("failed shard changed balances: %v -> %v", before, got)
				}
				if got := slotsInUse(w); got != slots {
					t.Fatalf("failed shard changed the slots in use: %v -> %v", slots, got)
				}
				return
			}
			if len(out.holds) != 3 {
				t.Fatalf("%d holds, want 3", len(out.holds))
			}
			for _, h := range out.holds {
				if got, want := w.net.channels[h.channel].slotsUsed[h.dir], slots[h.channel][h.dir]+1; got != want {
					t.Fatalf("channel %d holds %d HTLCs, want %d", h.channel, got, want)
				}
			}
			w.settle(out.holds)
			if got := slotsInUse(w); got != slots {
				t.Fatalf("settled shard left slots in use: %v -> %v", slots, got)
			}
			if got := w.net.channels[2].local[1]; got != 500_000_000+amt {
				t.Fatalf("receiver side after settle %d, want %d", got, 500_000_000+amt)
			}
		})
	}
}

// shiftLocks moves every time lock of rt by delta blocks: each hop's delta
// stays, what the receiver gets moves.
func shiftLocks(rt *route.Route, delta int) {
	rt.TotalTimeLock = uint32(int(rt.TotalTimeLock) + delta)
	for _, h := range rt.Hops {
		h.OutgoingTimeLock = uint32(int(h.OutgoingTimeLock) + delta)
	}
}

// w0Height is the block height the test worlds start at: the receiver's
// lock less the final delta lineRoute gives it.
func w0Height(rt *route.Route) uint32 {
	return rt.Hops[len(rt.Hops)-1].OutgoingTimeLock - 40
}

// balances is a comparable snapshot of every channel's two sides.
func balances(w *World) [8][2]lnwire.MilliSatoshi {
	var out [8][2]lnwire.MilliSatoshi
	for i := range w.net.channels {
		out[i] = w.net.channels[i].local
	}
	return out
}

// keepBack gives channel ch's sending side a balance of which it keeps keep
// back (and, at a fee rate, lnd's fee buffer over the HTLCs others have in
// flight the other way).
func keepBack(ch int, balance, keep lnwire.MilliSatoshi, rate uint64, others int) func(*World) {
	return func(w *World) {
		c := &w.net.channels[ch]
		c.setBalance(balance)
		c.keep[0], c.feeRate[0], c.slotsUsed[1] = keep, rate, others
	}
}

// dropFeeAt takes the fee node hop keeps off the route: every amount before
// it falls by what it keeps.
func dropFeeAt(rt *route.Route, hop int) {
	fee := rt.Hops[hop-2].AmtToForward - rt.Hops[hop-1].AmtToForward
	rt.TotalAmount -= fee
	for i := 0; i < hop-2; i++ {
		rt.Hops[i].AmtToForward -= fee
	}
	rt.Hops[hop-2].AmtToForward -= fee
}

// setOffline takes node offline from now until long after any test's end.
func setOffline(w *World, node int) {
	if w.peers == nil {
		w.peers = make([]*peerSchedule, len(w.net.nodes))
	}
	// Whatever it draws after the flip lasts a billion seconds on average.
	w.peers[node] = &peerSchedule{start: w.now, flips: []time.Time{w.now.Add(1000 * time.Hour)},
		rng: newStream(1, "test-peers"), onMean: 1e9, offMean: 1e9}
}

// slotsInUse is a comparable snapshot of every channel's HTLCs in flight.
func slotsInUse(w *World) [8][2]int {
	var out [8][2]int
	for i := range w.net.channels {
		out[i] = w.net.channels[i].slotsUsed
	}
	return out
}

// TestFailureUpdateCarriesActualPolicy checks that the channel update of a
// fee failure tells the real fee, and that booking it corrects the gossip.
func TestFailureUpdateCarriesActualPolicy(t *testing.T) {
	const amt = lnwire.MilliSatoshi(50_000_000)
	w := balancedLine(t, 4, amt)
	rt := lineRoute(t, w, 3, amt)
	w.net.channels[1].actual[0].FeeProportionalMillionths = 900
	out := w.forward(rt, 40)
	fee, ok := out.failure.(*lnwire.FailFeeInsufficient)
	if !ok {
		t.Fatalf("failure %T, want fee insufficient", out.failure)
	}
	if fee.Update.FeeRate != 900 || fee.Update.ShortChannelID.ToUint64() != w.net.channels[1].id {
		t.Fatalf("update %+v does not carry the actual policy", fee.Update)
	}
	w.net.channels[out.updateCh].applyUpdate(out.updateDir, out.update)
	if got := w.net.channels[1].announced[0].FeeProportionalMillionths; got != 900 {
		t.Fatalf("gossip fee rate %d after the update, want 900", got)
	}
	// A route built from the corrected gossip now passes.
	if out := w.forward(lineRoute(t, w, 3, amt), 40); out.failIdx != -1 {
		t.Fatalf("route after the update failed at %d: %v", out.failIdx, out.failure)
	}
}

// TestNonStrictForwarding checks lnd's switch picking another channel to
// the same peer when the one the route names fails its checks
// (htlcswitch's handlePacketAdd): the shard goes over the parallel channel
// when that one passes under its own policy, and fails with the named
// channel's own failure when it does not; the sender's first hop stays
// strict. The old simulator failed every such shard.
func TestNonStrictForwarding(t *testing.T) {
	const amt = lnwire.MilliSatoshi(100_000_000)
	tests := []struct {
		name     string
		parallel int // the parallel channel's ends: 0 for 0-1, 1 for 1-2
		fee      uint32
		wantIdx  int
		onAlt    bool // the hold sits on the parallel channel
	}{
		{"a parallel channel carries it", 1, 100, -1, true},
		{"a dearer parallel channel does not", 1, 200, 1, false},
		{"the sender's own hop is strict", 0, 100, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := lineScenario(4, 1_000_000, testPolicy(1000, 100, 40), uint64(amt))
			p1, p2 := *testPolicy(1000, tc.fee, 40), *testPolicy(1000, tc.fee, 40)
			sc.Graph.Channels = append(sc.Graph.Channels, scenario.Channel{SCID: testSCID(10),
				Node1: testNode(tc.parallel), Node2: testNode(tc.parallel + 1),
				CapacitySat: 1_000_000, Policy1: &p1, Policy2: &p2})
			w := mustWorld(t, sc)
			setAllBalances(w, 500_000_000)
			rt := lineRoute(t, w, 3, amt)
			w.net.channels[tc.parallel].setBalance(amt - 1) // the named channel falls short
			out := w.forward(rt, 40)
			if out.failIdx != tc.wantIdx {
				t.Fatalf("failing position %d (%v), want %d", out.failIdx, out.failure, tc.wantIdx)
			}
			if tc.wantIdx >= 0 {
				if _, ok := out.failure.(*lnwire.FailTemporaryChannelFailure); !ok {
					t.Fatalf("failure %v, want the named channel's temporary_channel_failure", out.failure)
				}
				return
			}
			alt := w.net.chanIndex[mustSCID(t, testSCID(10))]
			if got := out.holds[tc.parallel].channel; (got == alt) != tc.onAlt {
				t.Fatalf("hold on channel %d, parallel is %d", got, alt)
			}
			w.settle(out.holds)
			if err := w.net.checkConservation(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
