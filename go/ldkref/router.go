package ldkref

import (
	"errors"
	"fmt"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// paymentRouter is one payment played through LDK: the bridge holds the
// payment's state (LDK's pending outbound payment); this side turns its
// paths into routes and reports their outcomes.
type paymentRouter struct {
	ref    *Reference
	view   routing.SimNetworkView
	spec   *routing.SimPaymentSpec
	height uint32

	// sent are the routes handed to the simulator and not yet reported,
	// with the bridge's id of each.
	sent []sentRoute
}

type sentRoute struct {
	id uint64
	rt *route.Route
}

var _ routing.PaymentEndObserver = (*paymentRouter)(nil)

// RequestRoute returns the next path of LDK's route for what is left. The
// first request of a round (nothing in flight) has LDK route the whole
// rest, as its retries do; the round's later requests take that route's
// other paths.
func (p *paymentRouter) RequestRoute(amt lnwire.MilliSatoshi,
	inFlightHtlcs uint32) (*route.Route, error) {

	rep, err := p.ref.call(&routeMsg{Op: "route", AmountMsat: uint64(amt), NewRound: inFlightHtlcs == 0})
	if err != nil {
		return nil, err
	}
	if rep.Path == nil {
		if rep.NoRoute == "" {
			return nil, p.ref.fail(errors.New("the bridge gave neither a path nor a reason"))
		}
		return nil, errors.New(rep.NoRoute)
	}
	rt, err := p.route(rep.Path)
	if err != nil {
		return nil, p.ref.fail(err)
	}
	p.sent = append(p.sent, sentRoute{id: rep.Path.ID, rt: rt})
	return rt, nil
}

// route is LDK's path in lnd's encoding. An LDK hop names the channel into
// its node, the fee that node takes for the next channel and the cltv
// delta it adds (the last hop: the amount delivered and the final delta);
// LDK's HTLCs are built on the next block, height + 1.
func (p *paymentRouter) route(path *pathMsg) (*route.Route, error) {
	n := len(path.Hops)
	if n == 0 {
		return nil, errors.New("the bridge gave an empty path")
	}
	amount := make([]lnwire.MilliSatoshi, n)
	lock := make([]uint32, n)
	var sumFee lnwire.MilliSatoshi
	sumLock := p.height + 1
	for k := n - 1; k >= 0; k-- {
		sumFee += lnwire.MilliSatoshi(path.Hops[k].FeeMsat)
		sumLock += path.Hops[k].CltvDelta
		amount[k], lock[k] = sumFee, sumLock
	}
	hops := make([]*route.Hop, n)
	for k, h := range path.Hops {
		if h.Node < 0 || h.Node >= len(p.ref.ids) {
			return nil, fmt.Errorf("the bridge named node %d", h.Node)
		}
		fwd, out := lnwire.MilliSatoshi(path.Hops[n-1].FeeMsat), lock[n-1]
		if k+1 < n {
			fwd, out = amount[k+1], lock[k+1]
		}
		hops[k] = &route.Hop{
			PubKeyBytes: p.ref.ids[h.Node], ChannelID: h.SCID,
			AmtToForward: fwd, OutgoingTimeLock: out,
		}
	}
	return route.NewRouteFromHops(amount[0], lock[0], p.ref.self, hops)
}

// ReportAttempt tells LDK how a path it chose ended.
func (p *paymentRouter) ReportAttempt(_ uint64, rt *route.Route,
	result *routing.SimAttemptResult) error {

	id, ok := p.takeSent(rt)
	if !ok {
		return p.ref.fail(errors.New("a report of a route LDK did not choose"))
	}
	msg := &resultMsg{Op: "result", ID: id, NowS: p.view.Now().Unix(), Outcome: "settled"}
	switch {
	case result.Failure != nil:
		msg.Outcome = "failed"
		msg.Code = uint16(result.Failure.Code())
		msg.HasUpdate = hasUpdateField(result.Failure)
		if upd := updateOf(result.Failure); upd != nil {
			p.ref.changed[upd.ShortChannelID.ToUint64()] = true
		}
		msg.SourceIdx = result.FailureSourceIdx
		if _, unreadable := result.Failure.(routing.UnreadableFailure); unreadable {
			msg.SourceIdx = -1
		}
	case p.spec.Atomic:
		msg.Outcome = "held"
	}
	_, err := p.ref.call(msg)
	return err
}

// takeSent finds and forgets the route reported: the first one sent with
// the same channels and amount.
func (p *paymentRouter) takeSent(rt *route.Route) (uint64, bool) {
	for i, s := range p.sent {
		if sameRoute(s.rt, rt) {
			p.sent = append(p.sent[:i], p.sent[i+1:]...)
			return s.id, true
		}
	}
	return 0, false
}

func sameRoute(a, b *route.Route) bool {
	if a.TotalAmount != b.TotalAmount || len(a.Hops) != len(b.Hops) {
		return false
	}
	for i := range a.Hops {
		if a.Hops[i].ChannelID != b.Hops[i].ChannelID || a.Hops[i].AmtToForward != b.Hops[i].AmtToForward {
			return false
		}
	}
	return true
}

// hasUpdateField is whether a failure's encoding carries a channel_update
// field, as LDK's decoding checks it: lnwire writes one (of length 0 when
// nil) for every failure with the UPDATE flag, and for no other.
func hasUpdateField(f lnwire.FailureMessage) bool {
	return f.Code()&lnwire.FlagUpdate != 0
}

// updateOf is the channel_update a failure message carries, or nil.
func updateOf(f lnwire.FailureMessage) *lnwire.ChannelUpdate1 {
	switch m := f.(type) {
	case *lnwire.FailTemporaryChannelFailure:
		return m.Update
	case *lnwire.FailAmountBelowMinimum:
		return &m.Update
	case *lnwire.FailFeeInsufficient:
		return &m.Update
	case *lnwire.FailIncorrectCltvExpiry:
		return &m.Update
	case *lnwire.FailExpiryTooSoon:
		return &m.Update
	case *lnwire.FailChannelDisabled:
		return &m.Update
	}
	return nil
}

// PaymentEnded tells LDK the payment is over; the held paths of an atomic
// payment settle or are released with it.
func (p *paymentRouter) PaymentEnded(outcome *routing.SimPaymentOutcome) {
	// A failure here is recorded as the run's fault.
	_, _ = p.ref.call(&endMsg{Op: "end", NowS: p.view.Now().Unix(), Success: outcome.Success})
}
