package sim

import (
	"fmt"
	"time"

	"github.com/routesim-evolve/routesim/routing"
	"github.com/routesim-evolve/routesim/scenario"
)

// Options configure a run.
type Options struct {
	// RouterName is written into the result.
	RouterName string

	// Timing records wall times; off, results are byte-identical from
	// run to run.
	Timing bool

	// CheckConservation verifies after every payment that no channel
	// created or lost funds and that no hold outlived its payment.
	CheckConservation bool
}

// Run plays every payment of the scenario through routers from factory, one
// router per payment, and returns the result.
func Run(sc *scenario.Scenario, factory routing.RouterFactory, opts Options) (*Result, error) {
	w, err := NewWorld(sc)
	if err != nil {
		return nil, err
	}
	return w.Play(factory, opts)
}

// Play plays every payment of the world's scenario through routers from
// factory, one router per payment. A world is played once.
func (w *World) Play(factory routing.RouterFactory, opts Options) (*Result, error) {
	started := time.Now()
	sc := w.sc
	view := w.view()
	watch := &stopwatch{on: opts.Timing}
	res := &Result{
		Format:   FormatResult,
		Scenario: sc.Name,
		Arena:    sc.Arena,
		Router:   opts.RouterName,
		Seed:     sc.Seed,
		Rules:    sc.Rules,
	}
	interval := seconds(sc.Clock.PaymentIntervalSec)
	for i, pay := range sc.Payments {
		w.advanceTo(sc.StartTime.Add(time.Duration(i) * interval))
		pr := w.runPayment(i, pay, factory, view, watch)
		res.Payments = append(res.Payments, pr)
		if opts.CheckConservation {
			if err := w.checkSettled(); err != nil {
				return nil, fmt.Errorf("after payment %d: %w", i, err)
			}
		}
	}
	res.Totals = totals(res.Payments)
	if opts.Timing {
		res.Totals.RouterNanos = watch.total.Nanoseconds()
		res.Totals.SimNanos = time.Since(started).Nanoseconds() - res.Totals.RouterNanos
	}
	return res, nil
}

// runPayment makes the router of payment i and plays the payment.
func (w *World) runPayment(i int, pay scenario.Payment, factory routing.RouterFactory,
	view *gossipView, watch *stopwatch) PaymentResult {

	// The router gets its own copy of the spec: the payment's rules are
	// enforced from spec, which no router can reach.
	spec := w.newSpec(i, pay)
	routerSpec := *spec
	limit := w.newBound(spec)
	res := PaymentResult{
		Index:        i,
		Target:       pay.Target,
		AmountMsat:   pay.AmountMsat,
		FeeLimitMsat: uint64(spec.FeeLimit),
		Failures:     map[string]int{},
		AttemptLog:   []AttemptRecord{},
	}
	before := watch.total
	var router routing.SimRouter
	var err error
	watch.time(func() {
		router, err = factory(view, w.sourceVertex(), w.localBalances(), &routerSpec)
	})
	if err != nil {
		res.FailureReason = ReasonRouterInitFailed
		res.Error = routerError(err)
	} else {
		p := &paymentRun{w: w, spec: spec, router: router,
			res: &res, timed: watch.time, bound: limit}
		p.play()
	}
	res.Feasible, res.BoundMsat = limit.feasible, uint64(limit.reached)
	res.RouterNanos = (watch.total - before).Nanoseconds()
	return res
}

// checkSettled verifies conservation and that no hold is left.
func (w *World) checkSettled() error {
	if err := w.net.checkConservation(); err != nil {
		return err
	}
	for i := range w.net.channels {
		if h := w.net.channels[i].held; h[0] != 0 || h[1] != 0 {
			return fmt.Errorf("channel %d still holds %v after the payment", w.net.channels[i].id, h)
		}
	}
	return nil
}

// totals sums payment results.
func totals(payments []PaymentResult) Totals {
	t := Totals{Payments: len(payments), Degraded: map[string]int{}}
	var successFees, successAmt uint64
	for _, p := range payments {
		t.Attempts += p.Attempts
		t.AmountMsat += p.AmountMsat
		t.DeliveredMsat += p.DeliveredMsat
		t.FeeMsat += p.FeeMsat
		if p.Feasible {
			t.Feasible++
		}
		if p.Success {
			t.Succeeded++
			successFees += p.FeeMsat
			successAmt += p.AmountMsat
		}
		for _, a := range p.AttemptLog {
			if a.Degraded != "" && a.Degraded != degradeNone {
				t.Degraded[a.Degraded]++
			}
		}
	}
	if t.Payments > 0 {
		t.SuccessRate = float64(t.Succeeded) / float64(t.Payments)
		t.AttemptsPerPayment = float64(t.Attempts) / float64(t.Payments)
	}
	if successAmt > 0 {
		t.FeePPM = float64(successFees) / float64(successAmt) * 1e6
	}
	if len(t.Degraded) == 0 {
		t.Degraded = nil
	}
	return t
}
