package sim

import (
	"math"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/lightningnetwork/lnd/input"
	"github.com/lightningnetwork/lnd/lntypes"
	"github.com/lightningnetwork/lnd/lnwallet"
	"github.com/lightningnetwork/lnd/lnwallet/chainfee"
	"github.com/lightningnetwork/lnd/lnwire"
)

// The rules real nodes enforce on a channel's state (scenario.Rules): what
// a side may spend, and how many HTLCs may be in flight. A node checks
// them as lnd's channel state machine does when its link adds an HTLC:
//
//   - the balance it may spend is lnwallet's availableCommitmentBalance:
//     its balance less its reserve and, on the side that funded the
//     channel, the anchors and lnwallet.CalcFeeBuffer (the commitment fee
//     at twice the rate, with two more HTLCs: the new one and the buffer's
//     own); on the other side, just under
//     the dust limit when the funder cannot pay for one more HTLC; the
//     link's canSendHtlc refuses a larger HTLC with
//     temporary_channel_failure and the channel's update;
//   - the HTLCs in flight one way may not exceed the receiving node's
//     max_accepted_htlcs (lnwallet's validateCommitmentSanity,
//     ErrMaxHTLCNumber); the link's handleDownstreamUpdateAdd turns that
//     into temporary_channel_failure without an update.

// drawRules gives every channel its reserves, its funder and its HTLC
// slots, and every node its slot limit, from the scenario's seed (its own
// stream, so the balances drawn before do not move). Without a rules block
// nothing is drawn and nothing is limited.
func (w *World) drawRules() {
	r := w.sc.Rules
	if r == nil {
		return
	}
	rng := newStream(w.sc.Seed, streamRules)
	limit := make([]int, len(w.net.nodes))
	for i := range limit {
		limit[i] = int(r.HTLCSlots.LargeLimit)
		if rng.Float64() < r.HTLCSlots.SmallShare {
			limit[i] = int(r.HTLCSlots.SmallLimit)
		}
	}
	anchors := lnwire.MilliSatoshi(r.AnchorsSat) * 1000
	dust := lnwire.NewMSatFromSatoshis(btcutil.Amount(r.DustLimitSat))
	for i := range w.net.channels {
		c := &w.net.channels[i]
		reserve := lnwire.MilliSatoshi(max(
			uint64(math.Floor(float64(c.capacity/1000)*r.ReserveShare)), r.DustLimitSat) * 1000)
		if r.ReserveShare == 0 {
			reserve = 0
		}
		funder := rng.IntN(2)
		if !c.couldFund(funder, reserve+anchors, r.CommitFeerateSatPerKw) &&
			c.couldFund(1-funder, reserve+anchors, r.CommitFeerateSatPerKw) {
			funder = 1 - funder
		}
		c.dust = dust
		for d := 0; d < 2; d++ {
			c.keep[d] = reserve
			if d == funder {
				c.keep[d] += anchors
				c.feeRate[d] = r.CommitFeerateSatPerKw
			}
			// Direction d offers HTLCs to the node at end 1-d, whose
			// max_accepted_htlcs bounds them.
			c.slotLimit[d] = limit[c.nodes[1-d]]
			busy, fill := rng.Float64(), rng.Float64()
			if busy < r.HTLCSlots.BusyShare {
				lo, hi := int(r.HTLCSlots.BusyHTLCsMin), int(r.HTLCSlots.BusyHTLCsMax)
				c.slotsUsed[d] = lo + int(fill*float64(hi-lo+1))
				if c.slotLimit[d] > 0 {
					c.slotsUsed[d] = min(c.slotsUsed[d], c.slotLimit[d])
				}
			}
		}
	}
}

// couldFund reports whether end d of c holds what a funder always holds:
// keep (its reserve and the anchors) and the commitment's fee. lnd never
// lets a funder spend below that (lnwallet's availableCommitmentBalance
// and validateCommitmentSanity; BOLT 2, update_add_htlc: the funder must
// still afford the reserve and the commitment's fee), so a world whose
// funder starts under it could not be reached; drawRules gives such a
// channel to the other end (as realnet's world opens it).
func (c *channel) couldFund(d int, keep lnwire.MilliSatoshi, rate uint64) bool {
	fee := chainfee.SatPerKWeight(rate).FeeForWeight(input.AnchorCommitWeight)
	return c.local[d] >= keep+lnwire.NewMSatFromSatoshis(fee)
}

// spendable is what end d of c may offer in a new HTLC now: its balance
// less what the rules keep back (lnwallet's availableCommitmentBalance
// with the FeeBuffer). It is the balance itself where no rule is on.
func (c *channel) spendable(d int) lnwire.MilliSatoshi {
	ours := c.spendableInAll(d)
	// The side that did not fund: when the funder cannot pay the fee of
	// one more HTLC on the commitment, lnd reports just under the dust
	// limit, so that only an HTLC left off the commitment can go. That
	// caps one HTLC, not the total: a dust HTLC adds nothing to the fee,
	// and another may follow it.
	if rate := c.feeRate[1-d]; rate > 0 && c.dust > 0 && ours >= c.dust {
		// lnd rounds the commitment's fee and the HTLC's apart.
		feeRate := chainfee.SatPerKWeight(rate)
		withHTLC := feeRate.FeeForWeight(c.commitWeight()) + feeRate.FeeForWeight(input.HTLCWeight)
		theirs := c.local[1-d] - min(c.local[1-d], c.keep[1-d])
		if theirs < lnwire.NewMSatFromSatoshis(withHTLC) {
			ours = c.dust - 1
		}
	}
	return ours
}

// spendableInAll is what end d of c could spend over any number of HTLCs
// from now: its balance less its reserve and, on the funder's side, the
// anchors and the fee buffer at the HTLCs in flight now (more HTLCs only
// raise it). The feasible bound caps a direction by it.
func (c *channel) spendableInAll(d int) lnwire.MilliSatoshi {
	keep := c.keep[d]
	if rate := c.feeRate[d]; rate > 0 {
		// Every HTLC in flight either way is an output of the commitment
		// whose fee the funder pays. lnd's availableCommitmentBalance
		// hands CalcFeeBuffer the weight with the new HTLC on it, and the
		// buffer adds one more HTLC again: two in all.
		keep += lnwallet.CalcFeeBuffer(chainfee.SatPerKWeight(rate), c.commitWeight()+input.HTLCWeight)
	}
	if c.local[d] <= keep {
		return 0
	}
	return c.local[d] - keep
}

// htlcCost is what one more HTLC in flight on c, either way, takes from
// what end d may spend: the growth of the funder's fee buffer.
func (c *channel) htlcCost(d int) lnwire.MilliSatoshi {
	rate := chainfee.SatPerKWeight(c.feeRate[d])
	if rate == 0 {
		return 0
	}
	w := c.commitWeight() + input.HTLCWeight
	return lnwallet.CalcFeeBuffer(rate, w+input.HTLCWeight) - lnwallet.CalcFeeBuffer(rate, w)
}

// commitWeight is the weight of the channel's anchor commitment with every
// HTLC in flight either way on it. lnd leaves trimmed (dust) HTLCs off the
// commitment; counting them too makes the simulator a little stricter for
// tiny shards on a funder near its edge, never looser.
func (c *channel) commitWeight() lntypes.WeightUnit {
	return lntypes.WeightUnit(input.AnchorCommitWeight + (c.slotsUsed[0]+c.slotsUsed[1])*input.HTLCWeight)
}

// freeSlots is how many more HTLCs direction d of c may carry now;
// math.MaxInt without a slot limit.
func (c *channel) freeSlots(d int) int {
	if c.slotLimit[d] == 0 {
		return math.MaxInt
	}
	return max(c.slotLimit[d]-c.slotsUsed[d], 0)
}

// bandwidth is what direction d of c can carry in one more HTLC now: what
// lnd's pathfinding takes for its own channels (routing's bandwidth
// manager: nothing when the link may add no HTLC).
func (c *channel) bandwidth(d int) lnwire.MilliSatoshi {
	if c.freeSlots(d) == 0 {
		return 0
	}
	return c.spendable(d)
}
