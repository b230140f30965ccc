package sim

import (
	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
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

// forward sends a shard along rt hop by hop, as the nodes on the route would:
// each checks the channel, its actual policy, the fee and cltv the shard
// leaves it, and its balance, and the receiver checks the final amount and
// cltv. On success the shard's liquidity is held on every channel; on
// failure everything it held is released. The route's structure (hops that
// exist and connect) was checked by the runner.
func (w *World) forward(rt *route.Route, finalCltvDelta uint16) forwardOutcome {
	net := w.net
	height := w.BlockHeight()
	timestamp := uint32(w.now.Unix())
	prevNode := w.source
	var holds []legHold

	fail := func(idx int, msg lnwire.FailureMessage, ch, dir int,
		upd *lnwire.ChannelUpdate1) forwardOutcome {

		for _, h := range holds {
			net.channels[h.channel].release(h.dir, h.amt)
		}
		return forwardOutcome{failIdx: idx, failure: msg, update: upd,
			updateCh: ch, updateDir: dir}
	}

	for i, hop := range rt.Hops {
		ci := net.chanIndex[hop.ChannelID]
		c := &net.channels[ci]
		d := c.direction(prevNode)
		amt, lock := amountOver(rt, i), timeLockOver(rt, i)

		// The sender knows its own channels: it only checks its balance.
		if i > 0 {
			pol := c.actual[d]
			upd := c.channelUpdate(d, timestamp)
			inAmt, inLock := amountOver(rt, i-1), timeLockOver(rt, i-1)
			switch {
			case pol == nil || pol.IsDisabled:
				return fail(i, lnwire.NewChannelDisabled(uint16(upd.ChannelFlags), *upd), ci, d, upd)
			case amt < pol.MinHTLC:
				return fail(i, lnwire.NewAmountBelowMinimum(amt, *upd), ci, d, upd)
			case amt > pol.MaxHTLC:
				return fail(i, lnwire.NewTemporaryChannelFailure(upd), ci, d, upd)
			case inAmt < amt || inAmt-amt < pol.ComputeFee(amt):
				return fail(i, lnwire.NewFeeInsufficient(inAmt, *upd), ci, d, upd)
			case inLock < lock || inLock-lock < uint32(pol.TimeLockDelta):
				return fail(i, lnwire.NewIncorrectCltvExpiry(inLock, *upd), ci, d, upd)
			}
		}
		if c.local[d] < amt {
			var upd *lnwire.ChannelUpdate1
			if i > 0 {
				upd = c.channelUpdate(d, timestamp)
			}
			return fail(i, lnwire.NewTemporaryChannelFailure(upd), ci, d, upd)
		}
		c.hold(d, amt)
		holds = append(holds, legHold{channel: ci, dir: d, amt: amt})
		prevNode = c.nodes[1-d]
	}

	// The receiver checks what it got against the final hop's payload.
	last := len(rt.Hops) - 1
	final := rt.Hops[last]
	gotAmt, gotLock := amountOver(rt, last), timeLockOver(rt, last)
	switch {
	case gotAmt < final.AmtToForward:
		return fail(last+1, lnwire.NewFinalIncorrectHtlcAmount(gotAmt), -1, 0, nil)
	case gotLock < final.OutgoingTimeLock:
		return fail(last+1, lnwire.NewFinalIncorrectCltvExpiry(gotLock), -1, 0, nil)
	case final.OutgoingTimeLock < height+uint32(finalCltvDelta):
		return fail(last+1, lnwire.NewFailIncorrectDetails(final.AmtToForward, height), -1, 0, nil)
	}
	return forwardOutcome{failIdx: -1, holds: holds}
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
