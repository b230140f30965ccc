package sim

import (
	"math"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// legHold is the liquidity one shard locks on one channel.
type legHold struct {
	channel int
	dir     int
	amt     lnwire.MilliSatoshi
}

// forwardOutcome is what happened to one shard. failIdx is the position of
// the failing node (0 for the sender, i+1 for Hops[i]); -1 when it arrived.
type forwardOutcome struct {
	failIdx int
	failure lnwire.FailureMessage

	// update is the channel update the failure carries, with the channel
	// and direction it is about.
	update    *lnwire.ChannelUpdate1
	updateCh  int
	updateDir int

	// holds is the liquidity the shard locks while it is held; empty on
	// failure, when every hold was already released.
	holds []legHold
}

// lnd's defaults for the time-lock checks of forward (lnd v0.21).
const (
	// OutgoingCltvRejectDelta: a node refuses to offer an HTLC that
	// expires within this many blocks (lncfg.DefaultOutgoingCltvRejectDelta).
	OutgoingCltvRejectDelta = 3
	// MaxOutgoingCltvExpiry: the furthest ahead a node lets an HTLC it
	// offers expire (htlcswitch.DefaultMaxOutgoingCltvExpiry). lnd also
	// caps a node's own delta and the receiver's range with it and with
	// invoices.MaxFinalCltvDelta: no HTLC a node offered within this range
	// can break either, so those checks are not played.
	MaxOutgoingCltvExpiry = 2016
	// FinalCltvRejectDelta: the receiver refuses an HTLC that expires
	// within this many blocks, whatever its invoice asks
	// (lncfg.DefaultFinalCltvRejectDelta).
	FinalCltvRejectDelta = 19
)

// forwardRound sends the shards of one round, whose routes are in the order
// sent, hop by hop as the nodes on the routes would (see forwardCheck and
// receiverCheck for what each checks, in lnd's order), and returns each
// one's outcome in the same order. The shards advance together: at step k
// every shard still on its way is offered over its k-th channel, in the
// order sent. On real nodes a hop takes one commitment exchange whatever
// the route: a node offers an HTLC onward only once the incoming one is
// irrevocably committed (BOLT 2, "Forwarding HTLCs"; lnd's channelLink
// hands remote adds to the switch after its revocation, processRemoteAdds).
// So a shard meets, on a channel, the shards that got there in fewer hops,
// not the ones sent before it (TestPredictRoundAdvancesShardsTogether). A
// shard that arrives holds its liquidity on every channel. A shard that
// fails at position i frees what it held as its failure travels back, one
// hop per step (update_fail_htlc, committed hop by hop the same way): the
// channel it left node j over is free again from step 2i-j+1, when node j
// has the failure; until then the shards behind it meet that liquidity
// held. The routes' structure (hops that exist and connect) was checked by
// the runner.
func (w *World) forwardRound(routes []*route.Route, finalCltvDelta uint16) []forwardOutcome {
	round := newFlights(w, routes, finalCltvDelta)
	// Every shard on its way is at the same step: f.at == step.
	for step := 0; round.onTheirWay(); step++ {
		round.releaseDue(step)
		for _, f := range round.flights {
			if !f.done {
				round.advance(f)
			}
		}
	}
	round.releaseDue(math.MaxInt)
	out := make([]forwardOutcome, len(round.flights))
	for k, f := range round.flights {
		out[k] = f.out
	}
	return out
}

// flight is one shard of a round on its way.
type flight struct {
	rt   *route.Route
	at   int // the hop it is offered over next; its position on the route
	from int // the node at that position
	// inbound is the forwarding node's own policy of the channel the HTLC
	// came in over, whose inbound fee it adds (none for the sender).
	inbound *routing.CachedEdgePolicy
	holds   []legHold
	out     forwardOutcome
	done    bool
}

// dueRelease is a hold a failed shard frees at a later step.
type dueRelease struct {
	step int
	hold legHold
}

// roundFlights is a round being forwarded: its shards and the holds their
// failures free later.
type roundFlights struct {
	w              *World
	flights        []*flight
	due            []dueRelease
	finalCltvDelta uint16
	height         uint32
	timestamp      uint32
}

func newFlights(w *World, routes []*route.Route, finalCltvDelta uint16) *roundFlights {
	r := &roundFlights{w: w, finalCltvDelta: finalCltvDelta,
		height: w.BlockHeight(), timestamp: uint32(w.now.Unix())}
	for _, rt := range routes {
		r.flights = append(r.flights, &flight{rt: rt, from: w.source})
	}
	return r
}

// onTheirWay tells whether a shard is still on its way.
func (r *roundFlights) onTheirWay() bool {
	for _, f := range r.flights {
		if !f.done {
			return true
		}
	}
	return false
}

// releaseDue frees the holds due by step.
func (r *roundFlights) releaseDue(step int) {
	kept := r.due[:0]
	for _, d := range r.due {
		if d.step <= step {
			r.w.net.channels[d.hold.channel].release(d.hold.dir, d.hold.amt)
		} else {
			kept = append(kept, d)
		}
	}
	r.due = kept
}

// advance offers f over its next channel, or to the receiver after its last.
func (r *roundFlights) advance(f *flight) {
	i := f.at
	if i == len(f.rt.Hops) {
		f.done = true
		if msg := receiverCheck(f.rt, r.height, r.finalCltvDelta); msg != nil {
			r.fail(f, forwardOutcome{failIdx: i, failure: msg})
			return
		}
		f.out = forwardOutcome{failIdx: -1, holds: f.holds}
		return
	}
	if out, failed := r.w.offer(f, r.height, r.timestamp); failed {
		f.done = true
		r.fail(f, out)
		return
	}
	f.at++
}

// fail ends f with out and schedules the release of what it held.
func (r *roundFlights) fail(f *flight, out forwardOutcome) {
	f.out = out
	for j, h := range f.holds {
		r.due = append(r.due, dueRelease{step: 2*out.failIdx - j + 1, hold: h})
	}
	f.holds = nil
}

// offer is the node at f's position offering f over its next channel. It
// holds the liquidity and moves f on, or returns the failure.
func (w *World) offer(f *flight, height, timestamp uint32) (forwardOutcome, bool) {
	net, rt, i := w.net, f.rt, f.at
	ci := net.chanIndex[rt.Hops[i].ChannelID]
	c := &net.channels[ci]
	d := c.direction(f.from)
	if !w.online(c.nodes[1-d], w.now) {
		// No link to an offline peer: lnd's switch fails the HTLC
		// before it checks anything of the channel (peers.go).
		return forwardOutcome{failIdx: i, failure: &lnwire.FailUnknownNextPeer{}}, true
	}
	msg, upd := forwardCheck(c, d, f.inbound, rt, i, height, timestamp)
	if msg != nil && i > 0 {
		// Non-strict forwarding: lnd's switch offers the HTLC over any
		// channel to the same peer that passes the checks.
		if alt, ok := w.parallelChannel(ci, d, f.inbound, rt, i, height, timestamp); ok {
			ci, c = alt, &net.channels[alt]
			d = c.direction(f.from)
			msg, upd = nil, nil
		}
	}
	if msg == nil {
		msg = addHTLC(c, d)
	}
	if msg != nil {
		out := forwardOutcome{failIdx: i, failure: msg, update: upd}
		if upd != nil {
			out.updateCh, out.updateDir = ci, d
		}
		return out, true
	}
	amt := amountOver(rt, i)
	c.hold(d, amt)
	f.holds = append(f.holds, legHold{channel: ci, dir: d, amt: amt})
	f.from = c.nodes[1-d]
	f.inbound = c.actual[1-d]
	return forwardOutcome{}, false
}

// forwardCheck is what the node at position i of rt (the sender at 0)
// checks before it offers the HTLC over channel c in direction d, in the
// order lnd checks it: the switch's refusal of a disabled channel, then
// htlcswitch.(*channelLink).CheckHtlcForward: the fee (the outbound fee
// of c plus the node's inbound fee on the channel it came in over, the
// sum never below 0: routing.HopFee), canSendHtlc (the
// policy's minimum and maximum, an expiry too soon or too far, the
// balance), the time-lock delta. The sender checks only
// what its own link's canSendHtlc checks of the route (CheckHtlcTransit):
// the amount against its own policy's minimum and maximum, the expiry and
// its balance. It returns the failure and the channel update it carries,
// or nil when the node forwards (addHTLC then checks the slots).
func forwardCheck(c *channel, d int, inbound *routing.CachedEdgePolicy, rt *route.Route, i int,
	height, timestamp uint32) (lnwire.FailureMessage, *lnwire.ChannelUpdate1) {

	amt, lock := amountOver(rt, i), timeLockOver(rt, i)
	upd := c.channelUpdate(d, timestamp)
	pol := c.actual[d]
	if i == 0 {
		// The sender's own update goes with its link's failure (but not
		// with a lack of balance), yet it knows its own channel: there is
		// nothing for it to learn.
		if fail := ownAmountCheck(pol, amt, upd); fail != nil {
			return fail, nil
		}
		fail, _ := canSend(c, d, amt, lock, height, upd, nil)
		return fail, nil
	}
	inAmt, inLock := amountOver(rt, i-1), timeLockOver(rt, i-1)
	switch {
	case pol == nil || pol.IsDisabled:
		return lnwire.NewChannelDisabled(uint16(upd.ChannelFlags), *upd), upd
	case inAmt < amt || inAmt-amt < routing.HopFee(pol, inbound, amt):
		return lnwire.NewFeeInsufficient(amt, *upd), upd
	case amt < pol.MinHTLC:
		return lnwire.NewAmountBelowMinimum(amt, *upd), upd
	case amt > pol.MaxHTLC:
		return lnwire.NewTemporaryChannelFailure(upd), upd
	}
	if fail, carried := canSend(c, d, amt, lock, height, upd, upd); fail != nil {
		return fail, carried
	}
	if inLock < lock || inLock-lock < uint32(pol.TimeLockDelta) {
		return lnwire.NewIncorrectCltvExpiry(inLock, *upd), upd
	}
	return nil, nil
}

// parallelChannel is the channel the node at position i of rt forwards over
// instead of channel ci (direction d), which failed its checks: another
// channel of the node to the same peer that passes every check of
// forwardCheck under its own policy, as lnd's switch picks among the links
// to the peer (handlePacketAdd). lnd picks at random among all that pass,
// the requested one included; the simulator keeps the requested one when
// it passes, else takes the first by channel id, so that a run stays
// deterministic. The sender's own first hop is strict in lnd too.
func (w *World) parallelChannel(ci, d int, inbound *routing.CachedEdgePolicy, rt *route.Route,
	i int, height, timestamp uint32) (int, bool) {

	net := w.net
	from, to := net.channels[ci].nodes[d], net.channels[ci].nodes[1-d]
	for _, alt := range net.adjacent[from] {
		c := &net.channels[alt]
		ad := c.direction(from)
		if alt == ci || c.nodes[1-ad] != to {
			continue
		}
		if msg, _ := forwardCheck(c, ad, inbound, rt, i, height, timestamp); msg == nil {
			return alt, true
		}
	}
	return 0, false
}

// ownAmountCheck is the first check of the sender's own link
// (canSendHtlc's validateHtlcAmount): the amount against the minimum and
// the maximum of its own policy on the channel. Without a policy of its
// own, the sender's link has none to check.
func ownAmountCheck(pol *routing.CachedEdgePolicy, amt lnwire.MilliSatoshi,
	upd *lnwire.ChannelUpdate1) lnwire.FailureMessage {

	switch {
	case pol == nil:
		return nil
	case amt < pol.MinHTLC:
		return lnwire.NewAmountBelowMinimum(amt, *upd)
	case pol.MaxHTLC != 0 && amt > pol.MaxHTLC:
		return lnwire.NewTemporaryChannelFailure(upd)
	}
	return nil
}

// canSend is the part of lnd's canSendHtlc that the sender's own link and
// a forwarding node both check, in its order: an expiry too soon or too
// far, then the balance of direction d of c. It returns the failure and
// the channel update it carries, or nil when the HTLC may be offered; upd
// goes with an expiry too soon, balanceUpd (nil for none) with too little
// balance.
func canSend(c *channel, d int, amt lnwire.MilliSatoshi, lock, height uint32,
	upd, balanceUpd *lnwire.ChannelUpdate1) (lnwire.FailureMessage, *lnwire.ChannelUpdate1) {

	switch {
	case lock <= height+OutgoingCltvRejectDelta:
		return lnwire.NewExpiryTooSoon(*upd), upd
	case lock > height+MaxOutgoingCltvExpiry:
		return &lnwire.FailExpiryTooFar{}, nil
	case c.spendable(d) < amt:
		return lnwire.NewTemporaryChannelFailure(balanceUpd), balanceUpd
	}
	return nil, nil
}

// addHTLC is the last check of a node offering an HTLC over direction d of
// c, when its link adds it to the channel (htlcswitch's
// handleDownstreamUpdateAdd): the receiving node's max_accepted_htlcs
// (lnwallet's validateCommitmentSanity). The failure carries no update.
func addHTLC(c *channel, d int) lnwire.FailureMessage {
	if c.freeSlots(d) == 0 {
		return lnwire.NewTemporaryChannelFailure(nil)
	}
	return nil
}

// receiverCheck is what the receiver checks of the HTLC it got, in lnd's
// order: against the final hop's payload (hop.ValidateFinalHtlc: the
// amount, the expiry), then as the invoice registry
// does, the HTLC's own expiry against the height (invoices' updateMpp:
// FinalCltvRejectDelta, then the invoice's final cltv delta). The payload's
// outgoing_cltv_value is only checked to be no more than the HTLC's expiry:
// a payload that says 0 settles, as on a real node.
func receiverCheck(rt *route.Route, height uint32, finalCltvDelta uint16) lnwire.FailureMessage {
	last := len(rt.Hops) - 1
	final := rt.Hops[last]
	gotAmt, gotLock := amountOver(rt, last), timeLockOver(rt, last)
	switch {
	case gotAmt < final.AmtToForward:
		return lnwire.NewFinalIncorrectHtlcAmount(gotAmt)
	case gotLock < final.OutgoingTimeLock:
		return lnwire.NewFinalIncorrectCltvExpiry(gotLock)
	case gotLock < height+FinalCltvRejectDelta, gotLock < height+uint32(finalCltvDelta):
		return lnwire.NewFailIncorrectDetails(gotAmt, height)
	}
	return nil
}

// amountOver is the amount of the HTLC over the route's i-th channel: lnd's
// route encoding puts TotalAmount on the first and each hop's AmtToForward
// on the channel after it.
func amountOver(rt *route.Route, i int) lnwire.MilliSatoshi {
	if i == 0 {
		return rt.TotalAmount
	}
	return rt.Hops[i-1].AmtToForward
}

// timeLockOver is the time lock of the HTLC over the route's i-th channel.
func timeLockOver(rt *route.Route, i int) uint32 {
	if i == 0 {
		return rt.TotalTimeLock
	}
	return rt.Hops[i-1].OutgoingTimeLock
}

// settle pays out every hold of a shard.
func (w *World) settle(holds []legHold) {
	for _, h := range holds {
		w.net.channels[h.channel].settle(h.dir, h.amt)
	}
}

// release returns every hold of a shard.
func (w *World) release(holds []legHold) {
	for _, h := range holds {
		w.net.channels[h.channel].release(h.dir, h.amt)
	}
}
