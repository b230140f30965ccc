package routekit

import "time"

// Settings are what a router assumes beyond its strategy: the prior over
// hidden balances, how long what it learnt lasts, how far it trusts failure
// positions, and the margins of the single routes it tries. A Memory holds
// them (NewMemoryWith makes its Beliefs of Prior and HalfLife, whose own
// fields rule from then on) and each payment begun from it copies them, so
// a router may change a payment's own.
type Settings struct {
	// Prior is the belief about a balance nothing has been learnt of.
	Prior Prior

	// HalfLife is how fast what was learnt relaxes toward the prior with
	// virtual time, as background traffic moves balances (0: never).
	HalfLife time.Duration

	// SureHalfLife is how fast the sure bounds that decide whether a
	// payment can still complete fade (Payment.CanComplete as Planner
	// asks it; 0: never).
	SureHalfLife time.Duration

	// ShiftShare is the share of failures assumed reported one hop off,
	// in each direction, once an unreadable failure has shown that
	// attribution is degraded (Payment.Attribution).
	ShiftShare float64

	// CltvPadding is added to the final cltv delta, so that a block mined
	// while a shard is in flight does not fail it.
	CltvPadding uint32

	// HopPenalty is the cost per channel of a single route (Payment.Best),
	// in units of −ln P.
	HopPenalty float64

	// StartProb is the least chance, over worlds drawn from the beliefs,
	// that a payment which is not atomic can complete for it to send a
	// first shard (Payment.WorthStarting; 0: always start). Off by
	// default: at 0.2 it won drift on the synthetic corpus (a sender
	// drained by half-delivered payments) but lost more on the 2021 real
	// graph, where it refused payments that would have completed.
	StartProb float64

	// MinRouteProb is the least probability of a single route worth
	// trying: lnd stops at 1 %, but trying unlikely routes until the max
	// flow rules the payment out completes payments lnd gives up.
	MinRouteProb float64

	// LastTries is how many last tries on the prior a payment that no
	// longer fits what the network surely carries may make
	// (Payment.LastTry; 0: none). One already saves payments whose sure
	// bounds went stale under drift; further ones, each going another way,
	// save more there, and elsewhere mostly cost attempts on payments that
	// fail anyway.
	LastTries int
}

// DefaultSettings are the values every champion router (champions/)
// settled on: lnd's bimodal scale of 300,000 sat with a fifth uniform,
// half-lives of ten hours (slow forgetting costs nothing measurable in
// static worlds, and drift shows too late to follow), a tenth of failures
// one hop off, three blocks of padding, and single routes priced 0.01 a hop
// and tried down to P = 0.0001; every payment starts (StartProb 0) and has
// up to six last tries.
func DefaultSettings() Settings {
	return Settings{
		Prior:        Prior{BimodalScale: 300_000_000, UniformShare: 0.2},
		HalfLife:     10 * time.Hour,
		SureHalfLife: 10 * time.Hour,
		ShiftShare:   0.1,
		CltvPadding:  3,
		HopPenalty:   0.01,
		MinRouteProb: 0.0001,
		LastTries:    6,
	}
}

// settingsOf are the default settings with b's prior and half-life.
func settingsOf(b *Beliefs) Settings {
	s := DefaultSettings()
	s.Prior, s.HalfLife = b.Prior, b.HalfLife
	return s
}
