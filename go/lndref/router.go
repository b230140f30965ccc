package lndref

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/lightningnetwork/lnd/fn/v2"
	"github.com/lightningnetwork/lnd/graph/db/models"
	"github.com/lightningnetwork/lnd/htlcswitch"
	"github.com/lightningnetwork/lnd/lntypes"
	"github.com/lightningnetwork/lnd/lnwire"
	paymentsdb "github.com/lightningnetwork/lnd/payments/db"
	lndrouting "github.com/lightningnetwork/lnd/routing"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/lightningnetwork/lnd/tlv"
	"github.com/routesim-evolve/routesim/routing"
)

// NewRouter makes the router of one payment: a fresh lnd payment session
// over the run's shared mission control. It is the run's
// routing.RouterFactory.
func (r *Reference) NewRouter(view routing.SimNetworkView, source route.Vertex,
	localBalances map[uint64]lnwire.MilliSatoshi,
	spec *routing.SimPaymentSpec) (routing.SimRouter, error) {

	if source != r.cfg.Self {
		return nil, fmt.Errorf("lndref: mission control is for %x, the payment is from %x",
			r.cfg.Self[:], source[:])
	}
	if r.mc == nil {
		return nil, errors.New("lndref: reference is closed")
	}
	r.clock.setView(view)

	// lnd's CltvLimit is a delta over the height at the start (its
	// router RPC rejects one not above the final delta plus padding).
	height := view.BlockHeight()
	if spec.CltvLimit <= height {
		return nil, fmt.Errorf("lndref: cltv limit %d is not above the height %d",
			spec.CltvLimit, height)
	}
	err := lndrouting.ValidateCLTVLimit(spec.CltvLimit-height, spec.FinalCLTVDelta, true)
	if err != nil {
		return nil, fmt.Errorf("lndref: %w", err)
	}
	links := newLocalLinks(localBalances)
	src := &lndrouting.SessionSource{
		GraphSessionFactory: newViewGraph(view),
		SourceNode:          models.NewV1ShellNode(source),
		GetLink:             links.getLink,
		MissionControl:      tieBreakMC{r.mc},
		PathFindingConfig:   r.pathCfg,
	}
	payment, err := lightningPayment(view, spec, height)
	if err != nil {
		return nil, err
	}
	session, err := src.NewPaymentSession(payment,
		fn.None[tlv.Blob](), fn.None[htlcswitch.AuxTrafficShaper]())
	if err != nil {
		return nil, fmt.Errorf("lndref: payment session: %w", err)
	}
	return &paymentRouter{
		ref:     r,
		spec:    spec,
		session: session,
		height:  height,
		links:   links,
	}, nil
}

// lightningPayment is the payment as lnd's router RPC would build it from
// an MPP invoice: the receiver's features, its payment address, the final
// cltv delta, and the cltv limit as a delta over the height at the start.
func lightningPayment(view routing.SimNetworkView, spec *routing.SimPaymentSpec,
	height uint32) (*lndrouting.LightningPayment, error) {

	features := view.FetchNodeFeatures(spec.Target)
	if features == nil || features.IsEmpty() {
		features = lnwire.NewFeatureVector(lnwire.NewRawFeatureVector(
			lnwire.TLVOnionPayloadRequired,
			lnwire.PaymentAddrRequired,
			lnwire.MPPOptional,
		), lnwire.Features)
	}
	p := &lndrouting.LightningPayment{
		Target:         spec.Target,
		Amount:         spec.Amount,
		FeeLimit:       spec.FeeLimit,
		CltvLimit:      spec.CltvLimit - height,
		FinalCLTVDelta: spec.FinalCLTVDelta,
		DestFeatures:   features,
		PaymentAddr:    fn.Some(spec.PaymentAddr),
		MaxParts:       spec.MaxParts,
	}
	// The hash only names the session; lnd sets it before the session is
	// made (NewPaymentSession reads it).
	if err := p.SetPaymentHash(lntypes.Hash(sha256.Sum256(spec.PaymentAddr[:]))); err != nil {
		return nil, err
	}
	return p, nil
}

// paymentRouter is one payment played through lnd's payment session and
// mission control. It keeps the state lnd's payment lifecycle keeps in its
// control tower: fees committed, shards held, and whether the payment
// failed.
type paymentRouter struct {
	ref     *Reference
	spec    *routing.SimPaymentSpec
	session lndrouting.PaymentSession
	height  uint32
	links   *localLinks

	// fees is the fee of every shard in flight or settled (lnd's
	// MPPaymentState.FeesPaid).
	fees lnwire.MilliSatoshi

	// held counts the shards that arrived at the receiver of an atomic
	// payment: for lnd they stay in flight until the whole set settles.
	held uint32

	// failed is set once lnd would mark the payment failed: a no-route
	// error of the session, or a final failure reason of mission
	// control. Every later request returns it.
	failed error
}

// RequestRoute asks lnd's payment session for a route carrying at most amt,
// within the fee budget left, as lnd's lifecycle does (requestRoute). The
// height is the one at the payment's start, as in lnd.
func (p *paymentRouter) RequestRoute(amt lnwire.MilliSatoshi,
	inFlightHtlcs uint32) (*route.Route, error) {

	if p.failed != nil {
		return nil, p.failed
	}
	budget := p.spec.FeeLimit - min(p.fees, p.spec.FeeLimit)
	rt, err := p.session.RequestRoute(amt, budget, inFlightHtlcs+p.held, p.height, nil)
	if err != nil {
		p.failed = fmt.Errorf("lnd: %w", err)
		return nil, p.failed
	}
	p.fees += rt.TotalFees()
	p.links.send(rt.Hops[0].ChannelID, rt.TotalAmount)
	return rt, nil
}

// ReportAttempt reports an attempt's outcome to lnd's mission control as
// lnd's lifecycle does (handleAttemptResult, handleSwitchErr).
func (p *paymentRouter) ReportAttempt(attemptID uint64, rt *route.Route,
	result *routing.SimAttemptResult) error {

	mc := p.ref.mc
	if result.Failure == nil {
		if p.spec.Atomic {
			p.held++
		}
		// lnd logs a failed success report and goes on.
		p.ref.clock.report(func() { _ = mc.ReportPaymentSuccess(attemptID, rt) })
		return nil
	}

	p.fees -= min(rt.TotalFees(), p.fees)
	p.links.giveBack(rt.Hops[0].ChannelID, rt.TotalAmount)

	// An unreadable failure has no source and no message: lnd reports
	// it with a nil index and a nil message (reportAndFail(nil, nil)).
	var srcIdx *int
	var msg lnwire.FailureMessage
	_, unreadable := result.Failure.(routing.UnreadableFailure)
	if !unreadable && result.FailureSourceIdx >= 0 {
		idx := result.FailureSourceIdx
		srcIdx, msg = &idx, result.Failure
	}
	var reason *paymentsdb.FailureReason
	var err error
	p.ref.clock.report(func() {
		reason, err = mc.ReportPaymentFail(attemptID, rt, srcIdx, msg)
	})
	switch {
	case err != nil:
		// lnd fails the payment with an internal error.
		p.failed = fmt.Errorf("lnd mission control: %w", err)
	case reason != nil && p.failed == nil:
		p.failed = fmt.Errorf("lnd mission control: payment failed: %v", *reason)
	}
	return nil
}
