package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/internal/saturating"
	"github.com/routesim-evolve/routesim/routing"
	"github.com/routesim-evolve/routesim/scenario"
)

// shard is one dispatched attempt awaiting its result.
type shard struct {
	id      uint64
	attempt int // index of the attempt within the payment
	label   string
	rt      *route.Route
	amt     lnwire.MilliSatoshi
	fee     lnwire.MilliSatoshi
	out     forwardOutcome
}

// paymentRun is one payment being played through one router. It plays the
// part of lnd's payment lifecycle: request routes for what is left, dispatch
// them, collect their results, and stop on success, on the router giving up
// or on the attempt limit.
type paymentRun struct {
	w      *World
	spec   *routing.SimPaymentSpec
	router routing.SimRouter
	res    *PaymentResult
	timed  func(func())
	bound  *bound // the payment's ceiling, raised at every round's start

	delivered lnwire.MilliSatoshi // settled, or held with Atomic
	fees      lnwire.MilliSatoshi // of the shards in delivered
	held      [][]legHold         // Atomic: holds of arrived shards
	arrived   [][]legHold         // the liquidity each arrived shard moved or holds
	round     int
	terminal  string // a terminal reason found while dispatching
}

// newSpec builds the spec of payment i.
func (w *World) newSpec(i int, p scenario.Payment) *routing.SimPaymentSpec {
	target, _ := scenario.ParseNodeID(p.Target)
	d := w.sc.Defaults
	return &routing.SimPaymentSpec{
		Index:          i,
		Target:         target,
		Amount:         lnwire.MilliSatoshi(p.AmountMsat),
		FeeLimit:       lnwire.MilliSatoshi(p.FeeLimit(d)),
		MaxParts:       p.Parts(d),
		MaxAttempts:    p.Attempts(d),
		FinalCLTVDelta: d.FinalCLTVDelta,
		CltvLimit:      w.BlockHeight() + d.CltvLimitDelta,
		Atomic:         w.sc.AtomicMPP,
		PaymentAddr:    paymentAddr(w.sc.Seed, i),
	}
}

// paymentAddr derives a payment's address from the seed and its index.
func paymentAddr(seed uint64, i int) [32]byte {
	var buf [16]byte
	binary.BigEndian.PutUint64(buf[:8], seed)
	binary.BigEndian.PutUint64(buf[8:], uint64(i))
	return sha256.Sum256(buf[:])
}

// play runs the payment to its end and returns its result.
func (p *paymentRun) play() {
	for p.res.FailureReason == ReasonNone && !p.complete() {
		if p.round > 0 {
			p.bound.atRound(p.delivered)
		}
		pending, routerErr := p.dispatchRound()
		if len(pending) == 0 {
			p.giveUp(routerErr)
			break
		}
		p.send(pending)
		p.w.advance(seconds(p.w.sc.Clock.AttemptLatencySec))
		p.collect(pending)
		if p.terminal != "" && !p.complete() {
			p.res.FailureReason = p.terminal
		}
		p.round++
	}
	p.finish()
}

func (p *paymentRun) complete() bool {
	return p.delivered >= p.spec.Amount
}

// dispatchRound asks the router for routes until the whole rest is in
// flight, the shard cap or the attempt limit is reached, or the router says
// no. The router learns nothing within a round, so the round's shards are
// sent together once it is planned (send). The cap counts every active
// shard of the payment, as lnd's payment session does: the round's, and
// with Atomic the ones held at the receiver from earlier rounds. The router is told the
// round's shards in flight, as the contract has always said (a router that
// wants the held ones counts them from its reports, as lnd-ref does).
func (p *paymentRun) dispatchRound() ([]shard, error) {
	var pending []shard
	var inFlight lnwire.MilliSatoshi
	for {
		unsent := p.spec.Amount - p.delivered - inFlight
		if unsent == 0 || len(p.held)+len(pending) >= int(p.spec.MaxParts) ||
			p.res.Attempts >= p.spec.MaxAttempts {
			return pending, nil
		}
		var rt *route.Route
		var err error
		p.timed(func() { rt, err = p.router.RequestRoute(unsent, uint32(len(pending))) })
		if err != nil {
			return pending, err
		}
		label := p.labelOf(rt)
		rt, problem := takeRoute(rt)
		var amt, fee lnwire.MilliSatoshi
		if problem == "" {
			amt, fee, problem = p.checkRoute(rt, unsent, pending)
		}
		if problem != "" {
			p.terminal = ReasonInvalidRoute
			p.res.Error = problem
			return pending, nil
		}
		pending = append(pending, shard{
			id:      uint64(p.spec.Index)<<32 | uint64(p.res.Attempts),
			attempt: p.res.Attempts, rt: rt, amt: amt, fee: fee, label: label,
		})
		p.res.Attempts++
		inFlight += amt
	}
}

// send forwards the shards of a round together (forwardRound).
func (p *paymentRun) send(pending []shard) {
	routes := make([]*route.Route, len(pending))
	for k := range pending {
		routes[k] = pending[k].rt
	}
	for k, out := range p.w.forwardRound(routes, p.spec.FinalCLTVDelta) {
		pending[k].out = out
	}
}

// checkRoute checks that rt, the simulator's own copy of a route with 1 to
// MaxRouteHops hops, is a route this payment may send: from the sender over
// existing channels to the target, within the amount left, the fee budget
// and the cltv limit. It returns the amount and fee of the route, or what is
// wrong with it.
func (p *paymentRun) checkRoute(rt *route.Route, unsent lnwire.MilliSatoshi,
	pending []shard) (lnwire.MilliSatoshi, lnwire.MilliSatoshi, string) {

	net := p.w.net
	if rt.SourcePubKey != p.w.sourceVertex() {
		return 0, 0, fmt.Sprintf("route starts at %x, not at the sender", rt.SourcePubKey[:])
	}
	prev := p.w.source
	for i, hop := range rt.Hops {
		next, ok := net.nextNode(hop.ChannelID, prev, hop.PubKeyBytes)
		if !ok {
			return 0, 0, fmt.Sprintf("hop %d: channel %s does not connect %x to %x",
				i, scenario.FormatSCID(hop.ChannelID), net.nodes[prev][:], hop.PubKeyBytes[:])
		}
		prev = next
	}
	if net.nodes[prev] != p.spec.Target {
		return 0, 0, "route does not end at the target"
	}
	amt := rt.Hops[len(rt.Hops)-1].AmtToForward
	switch {
	case amt == 0 || amt > unsent:
		return 0, 0, fmt.Sprintf("route delivers %d msat, want 1..%d", amt, unsent)
	case rt.TotalAmount < amt:
		return 0, 0, fmt.Sprintf("route total %d msat is below its delivered amount %d", rt.TotalAmount, amt)
	case rt.TotalTimeLock > p.spec.CltvLimit:
		return 0, 0, fmt.Sprintf("route time lock %d exceeds the cltv limit %d", rt.TotalTimeLock, p.spec.CltvLimit)
	}
	fee := rt.TotalAmount - amt
	// Every sum saturates: a route's fee can be near 2^64 msat, and a
	// wrapped sum would pass the budget.
	committed := p.fees
	for _, s := range pending {
		committed = saturating.Add(committed, s.fee)
	}
	if saturating.Add(committed, fee) > p.spec.FeeLimit {
		return 0, 0, fmt.Sprintf("route fee %d msat exceeds the fee budget left (%d of %d msat)",
			fee, p.spec.FeeLimit-min(committed, p.spec.FeeLimit), p.spec.FeeLimit)
	}
	return amt, fee, ""
}

// collect tells the router the outcome of each shard of a round, in
// dispatch order, and books what arrived.
func (p *paymentRun) collect(pending []shard) {
	for _, s := range pending {
		draw := p.w.drawAttribution(p.spec.Index, s.attempt)
		result, degraded, learned := p.w.report(s.rt, s.out, draw)
		p.book(s, result, degraded, learned)
		if receiverRefused(s) && p.terminal == "" {
			p.terminal = ReasonIncorrectDetails
		}
		// The router gets a copy of the route it sent; result was built
		// for this report alone and is not read again.
		report := copyRoute(s.rt)
		var err error
		p.timed(func() { err = p.router.ReportAttempt(s.id, report, result) })
		if err != nil && p.terminal == "" {
			p.terminal = ReasonRouterGaveUp
			p.res.Error = routerError(err)
		}
	}
}

// receiverRefused tells whether the receiver refused the payment's details
// for shard s: the end of the payment, as lnd and LDK end it, however the
// report reached the router. Were it not, a route whose time lock the
// receiver refuses would test every hop's balance and come back holding
// nothing: a probe of the payment's own routes for an attempt.
func receiverRefused(s shard) bool {
	_, refused := s.out.failure.(*lnwire.FailIncorrectDetails)
	return refused && s.out.failIdx == len(s.rt.Hops)
}

// book records a shard's outcome in the world and the result.
func (p *paymentRun) book(s shard, result *routing.SimAttemptResult, degraded string,
	learned *learnedUpdate) {
	rec := AttemptRecord{
		AmountMsat:  uint64(s.amt),
		FeeMsat:     uint64(s.fee),
		Hops:        len(s.rt.Hops),
		TimeLock:    s.rt.TotalTimeLock,
		FailIdx:     s.out.failIdx,
		ReportedIdx: result.FailureSourceIdx,
		Round:       p.round,
		Label:       s.label,
	}
	if s.out.failIdx < 0 {
		rec.Outcome = "settled"
		if p.spec.Atomic {
			rec.Outcome = "held"
			p.held = append(p.held, s.out.holds)
		} else {
			p.w.settle(s.out.holds)
		}
		p.arrived = append(p.arrived, s.out.holds)
		p.delivered += s.amt
		p.fees += s.fee
		p.res.Parts++
	} else {
		rec.Outcome = failureName(s.out.failure)
		rec.Reported = failureName(result.Failure)
		rec.Degraded = degraded
		p.res.Failures[rec.Reported]++
		// The sender learns the update its report carries: none from a
		// stripped one, the blamed node's from a shifted one.
		if learned != nil {
			p.w.net.channels[learned.channel].applyUpdate(learned.dir, learned.update)
		}
	}
	p.res.AttemptLog = append(p.res.AttemptLog, rec)
}

// giveUp ends a payment that could dispatch nothing more.
func (p *paymentRun) giveUp(routerErr error) {
	switch {
	case p.terminal != "":
		p.res.FailureReason = p.terminal
	case routerErr != nil:
		p.res.FailureReason = ReasonRouterGaveUp
		p.res.Error = routerError(routerErr)
	case len(p.held) >= int(p.spec.MaxParts):
		p.res.FailureReason = ReasonPartsExhausted
	default:
		p.res.FailureReason = ReasonAttemptsExhausted
	}
}

// finish settles or releases what the payment holds and fills the result.
// With Atomic, an incomplete payment releases every hold: nothing moves and
// no fee is paid.
func (p *paymentRun) finish() {
	success := p.complete()
	if p.spec.Atomic {
		for _, holds := range p.held {
			if success {
				p.w.settle(holds)
			} else {
				p.w.release(holds)
			}
		}
		if !success {
			p.delivered, p.fees = 0, 0
		}
	}
	p.res.Success = success
	if success {
		p.res.FailureReason = ReasonNone
		p.res.CheapestFeeMsat = p.bound.cheapestFee(p.arrived)
	}
	// Every round takes one attempt latency: from the first dispatch to
	// the last result (and, with Atomic, the settle it allows).
	p.res.ElapsedSec = float64(p.round) * p.w.sc.Clock.AttemptLatencySec
	p.res.DeliveredMsat = uint64(p.delivered)
	p.res.FeeMsat = uint64(p.fees)
	p.tellRouter(success)
}

// tellRouter calls the router's PaymentEnded, if it has one, with a copy of
// the outcome: what it does with it cannot touch the result.
func (p *paymentRun) tellRouter(success bool) {
	observer, ok := p.router.(routing.PaymentEndObserver)
	if !ok {
		return
	}
	outcome := &routing.SimPaymentOutcome{
		Success:   success,
		Delivered: p.delivered,
		Fees:      p.fees,
		Released:  p.spec.Atomic && !success && len(p.held) > 0,
	}
	p.timed(func() { observer.PaymentEnded(outcome) })
}

// MaxErrorBytes bounds the text of a router's error kept in a result: a
// router's Error can return anything, and the harness holds, scores and
// stores every result.
const MaxErrorBytes = 1000

// routerError is err's text, cut to MaxErrorBytes on a rune boundary.
func routerError(err error) string {
	text := err.Error()
	if len(text) <= MaxErrorBytes {
		return text
	}
	cut := MaxErrorBytes
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + "…"
}

// labelOf is the label the router gives the route it just returned (the
// router's own pointer, before the simulator copies it), when it is a
// routing.RouteLabeler: only letters, digits and ._:/- are kept, at most
// routing.MaxRouteLabelBytes of them.
func (p *paymentRun) labelOf(rt *route.Route) string {
	labeler, ok := p.router.(routing.RouteLabeler)
	if !ok || rt == nil {
		return ""
	}
	var raw string
	p.timed(func() { raw = labeler.RouteLabel(rt) })
	return cleanLabel(raw)
}

// cleanLabel keeps a label's allowed bytes, up to the limit.
func cleanLabel(raw string) string {
	out := make([]byte, 0, routing.MaxRouteLabelBytes)
	for i := 0; i < len(raw) && len(out) < routing.MaxRouteLabelBytes; i++ {
		c := raw[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("._:/-", c) >= 0 {
			out = append(out, c)
		}
	}
	return string(out)
}

// stopwatch accumulates the wall time spent in the router.
type stopwatch struct {
	on    bool
	total time.Duration
}

func (s *stopwatch) time(f func()) {
	if !s.on {
		f()
		return
	}
	start := time.Now()
	f()
	s.total += time.Since(start)
}
