package routekit

import (
	"math"
	"math/rand/v2"
	"time"
)

// Prior is the distribution a router assumes for a channel's hidden balance
// before it learns anything: lnd's bimodal model, e^(-x/s) + e^((x-c)/s),
// mixed with a uniform share.
type Prior struct {
	// BimodalScale is s, in msat.
	BimodalScale float64

	// UniformShare is the weight of the uniform balance, in [0, 1].
	UniformShare float64
}

// CDF is P(S ≤ x) for a channel of capacity c (msat).
func (p Prior) CDF(x, c float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= c {
		return 1
	}
	s := p.BimodalScale
	norm := -math.Expm1(-c / s)
	bimodal := (-math.Expm1(-x/s) + math.Exp((x-c)/s) - math.Exp(-c/s)) / (2 * norm)
	return p.UniformShare*x/c + (1-p.UniformShare)*bimodal
}

// moment is the integral of y dF(y) over [0, x].
func (p Prior) moment(x, c float64) float64 {
	x = math.Min(math.Max(x, 0), c)
	s := p.BimodalScale
	norm := 2 * s * -math.Expm1(-c/s)
	// Antiderivatives of y·e^(-y/s) and y·e^((y-c)/s), from 0 to x.
	low := s*s - s*math.Exp(-x/s)*(x+s)
	high := s*math.Exp((x-c)/s)*(x-s) + s*s*math.Exp(-c/s)
	return p.UniformShare*x*x/(2*c) + (1-p.UniformShare)*(low+high)/norm
}

// intervalProb is P(S ≥ x) (fromNode1) or P(c − S ≥ x) under the prior
// conditioned on lo ≤ S ≤ hi.
func (p Prior) intervalProb(c, lo, hi float64, fromNode1 bool, x float64) float64 {
	return p.interval(c, lo, hi).prob(fromNode1, x)
}

// interval is the prior conditioned on lo ≤ S ≤ hi, with the CDF at both
// ends computed once for many questions.
func (p Prior) interval(c, lo, hi float64) conditioned {
	return conditioned{p: p, c: c, lo: lo, hi: hi, cdfLo: p.CDF(lo, c), cdfHi: p.CDF(hi, c)}
}

type conditioned struct {
	p            Prior
	c, lo, hi    float64
	cdfLo, cdfHi float64
}

// prob is P(S ≥ x) (fromNode1) or P(c − S ≥ x) under the conditioned prior.
func (d conditioned) prob(fromNode1 bool, x float64) float64 {
	a, z := x, d.c // a ≤ S ≤ z is what carrying x needs
	if !fromNode1 {
		a, z = 0, d.c-x
	}
	a, z = math.Max(a, d.lo), math.Min(z, d.hi)
	if a > z {
		return 0
	}
	total := d.cdfHi - d.cdfLo
	if total < 1e-12 {
		// Too narrow for the prior to tell: uniform on the interval.
		if d.hi-d.lo < 1 {
			return 1
		}
		return (z - a) / (d.hi - d.lo)
	}
	cdfA, cdfZ := d.cdfLo, d.cdfHi
	if a > d.lo {
		cdfA = d.p.CDF(a, d.c)
	}
	if z < d.hi {
		cdfZ = d.p.CDF(z, d.c)
	}
	return math.Min(1, (cdfZ-cdfA)/total)
}

// sample draws S from the prior conditioned on lo ≤ S ≤ hi: exactly on the
// whole channel (a uniform balance, or one of the bimodal model's two
// symmetric exponential halves, truncated to the capacity), by bisection on
// the CDF within narrower bounds.
func (p Prior) sample(c, lo, hi float64, rng *rand.Rand) float64 {
	if lo <= 0 && hi >= c {
		if rng.Float64() < p.UniformShare {
			return rng.Float64() * c
		}
		s := p.BimodalScale
		x := -s * math.Log1p(rng.Float64()*math.Expm1(-c/s))
		if rng.IntN(2) == 0 {
			return x
		}
		return c - x
	}
	cdfLo, cdfHi := p.CDF(lo, c), p.CDF(hi, c)
	if cdfHi-cdfLo < 1e-12 {
		return lo + rng.Float64()*(hi-lo)
	}
	u := cdfLo + rng.Float64()*(cdfHi-cdfLo)
	for i := 0; i < sampleSteps && hi-lo > 1; i++ {
		mid := (lo + hi) / 2
		if p.CDF(mid, c) < u {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// sampleSteps bounds the bisection of Prior.sample: 2⁻³⁰ of a channel is
// far below a msat for any channel that exists.
const sampleSteps = 30

// Belief bounds S, the balance of a channel's node 1, in msat: Lo ≤ S ≤ Hi
// for sure, and S within [SoftLo, SoftHi] with weight SoftWeight (evidence
// from failures whose blame may be wrong).
type Belief struct {
	Capacity       float64
	Lo, Hi         float64
	SoftLo, SoftHi float64
	SoftWeight     float64
	at             time.Time // when the bounds were last aged
	seen           time.Time // when a sure bound last moved
}

func newBelief(capacity float64, now time.Time) *Belief {
	return &Belief{Capacity: capacity, Hi: capacity, SoftHi: capacity, at: now, seen: now}
}

// age relaxes the bounds toward [0, capacity] with half-life h for the time
// passed since they were last aged (none when h is 0). Exponential decay
// composes, so aging in steps equals aging at once.
func (b *Belief) age(now time.Time, h time.Duration) {
	if !now.After(b.at) {
		return
	}
	if h > 0 {
		f := math.Exp2(-float64(now.Sub(b.at)) / float64(h))
		c := b.Capacity
		b.Lo *= f
		b.Hi = c - (c-b.Hi)*f
		b.SoftLo *= f
		b.SoftHi = c - (c-b.SoftHi)*f
		b.SoftWeight *= f
	}
	b.at = now
}

// carried records that S ≥ x (fromNode1) or c − S ≥ x, as a forward of x
// proves. A contradiction of a sure bound means the world moved: the new
// observation wins.
func (b *Belief) carried(fromNode1 bool, x float64) {
	if fromNode1 {
		b.raiseLo(x)
	} else {
		b.lowerHi(b.Capacity - x)
	}
}

// failed records that S < x (fromNode1) or c − S < x, with confidence q
// (≥ 0.999: certain).
func (b *Belief) failed(fromNode1 bool, x, q float64) {
	if q >= 0.999 {
		if fromNode1 {
			b.lowerHi(x)
		} else {
			b.raiseLo(b.Capacity - x)
		}
		return
	}
	if fromNode1 {
		b.SoftHi = math.Min(b.SoftHi, x)
	} else {
		b.SoftLo = math.Max(b.SoftLo, b.Capacity-x)
	}
	b.SoftWeight = 1 - (1-b.SoftWeight)*(1-q)
	if b.SoftLo >= b.SoftHi {
		b.clearSoft() // soft bounds that exclude each other say nothing
	}
}

func (b *Belief) clearSoft() { b.SoftLo, b.SoftHi, b.SoftWeight = 0, b.Capacity, 0 }

func (b *Belief) raiseLo(x float64) {
	b.seen = b.at
	x = math.Min(math.Max(x, 0), b.Capacity)
	if x > b.Hi {
		b.Hi = b.Capacity
	}
	b.Lo = math.Max(b.Lo, x)
	if x > b.SoftHi {
		b.clearSoft()
	}
}

func (b *Belief) lowerHi(x float64) {
	b.seen = b.at
	x = math.Min(math.Max(x, 0), b.Capacity)
	if x < b.Lo {
		b.Lo = 0
	}
	b.Hi = math.Min(b.Hi, x)
	if x < b.SoftLo {
		b.clearSoft()
	}
}

// shift moves S by delta: the router's own settled shard moved funds.
func (b *Belief) shift(delta float64) {
	b.seen = b.at
	c := b.Capacity
	clamp := func(x float64) float64 { return math.Min(math.Max(x, 0), c) }
	b.Lo, b.Hi = clamp(b.Lo+delta), clamp(b.Hi+delta)
	if b.SoftWeight > 0 {
		b.SoftLo, b.SoftHi = clamp(b.SoftLo+delta), clamp(b.SoftHi+delta)
	}
}

// prob is the probability the channel can carry x in the direction given,
// mixing the sure interval with the soft one by its weight.
func (b *Belief) prob(prior Prior, fromNode1 bool, x float64) float64 {
	p := prior.intervalProb(b.Capacity, b.Lo, b.Hi, fromNode1, x)
	if b.SoftWeight <= 0 {
		return p
	}
	lo, hi := math.Max(b.Lo, b.SoftLo), math.Min(b.Hi, b.SoftHi)
	if lo > hi {
		return p
	}
	return (1-b.SoftWeight)*p + b.SoftWeight*prior.intervalProb(b.Capacity, lo, hi, fromNode1, x)
}

// curve returns the probability, for each amount x, that the channel can
// carry x in the direction given (as prob, at a fraction of the cost).
func (b *Belief) curve(prior Prior, fromNode1 bool) func(x float64) float64 {
	hard := prior.interval(b.Capacity, b.Lo, b.Hi)
	lo, hi := math.Max(b.Lo, b.SoftLo), math.Min(b.Hi, b.SoftHi)
	if b.SoftWeight <= 0 || lo > hi {
		return func(x float64) float64 { return hard.prob(fromNode1, x) }
	}
	soft, w := prior.interval(b.Capacity, lo, hi), b.SoftWeight
	return func(x float64) float64 {
		return (1-w)*hard.prob(fromNode1, x) + w*soft.prob(fromNode1, x)
	}
}

// sample draws node 1's balance from the belief: within the soft bounds
// with their weight, else within the sure ones.
func (b *Belief) sample(prior Prior, rng *rand.Rand) float64 {
	lo, hi := b.Lo, b.Hi
	if b.SoftWeight > 0 && rng.Float64() < b.SoftWeight {
		if softLo, softHi := math.Max(lo, b.SoftLo), math.Min(hi, b.SoftHi); softLo <= softHi {
			lo, hi = softLo, softHi
		}
	}
	return prior.sample(b.Capacity, lo, hi, rng)
}

// mean is node 1's expected balance under the prior on the sure interval.
func (b *Belief) mean(prior Prior) float64 {
	c := b.Capacity
	mass := prior.CDF(b.Hi, c) - prior.CDF(b.Lo, c)
	if mass < 1e-12 {
		return (b.Lo + b.Hi) / 2
	}
	return (prior.moment(b.Hi, c) - prior.moment(b.Lo, c)) / mass
}

// sendable is the sure range of what the channel can send in the direction
// given, with the sure bounds faded by half-life h since they last moved.
func (b *Belief) sendable(fromNode1 bool, now time.Time, h time.Duration) (lo, hi float64) {
	lo, hi = b.Lo, b.Hi
	if h > 0 {
		f := math.Exp2(-float64(now.Sub(b.seen)) / float64(h))
		lo, hi = lo*f, b.Capacity-(b.Capacity-hi)*f
	}
	if fromNode1 {
		return lo, hi
	}
	return b.Capacity - hi, b.Capacity - lo
}

// Beliefs is what a router knows of every remote channel's balance, learnt
// across payments (keep it at package level). The two directions of a
// channel share one belief: a success one way bounds the other way.
type Beliefs struct {
	// Prior is the distribution before any evidence.
	Prior Prior

	// HalfLife is how fast evidence fades toward the prior with virtual
	// time (0: never).
	HalfLife time.Duration

	m map[uint64]*Belief
}

// NewBeliefs makes an empty store.
func NewBeliefs(prior Prior, halfLife time.Duration) *Beliefs {
	return &Beliefs{Prior: prior, HalfLife: halfLife, m: map[uint64]*Belief{}}
}

// Of is e's channel's belief, made on first use and aged to now. The
// caller may read it; changes go through the store's methods.
func (s *Beliefs) Of(e *Edge, now time.Time) *Belief {
	b, ok := s.m[e.ChannelID]
	if !ok {
		b = newBelief(float64(e.Capacity), now)
		s.m[e.ChannelID] = b
	}
	b.age(now, s.HalfLife)
	return b
}

// peek is a copy of e's channel's belief aged to now, a fresh one when
// nothing was learnt (not stored: most channels are never used).
func (s *Beliefs) peek(e *Edge, now time.Time) Belief {
	b, ok := s.m[e.ChannelID]
	if !ok {
		return Belief{Capacity: float64(e.Capacity), Hi: float64(e.Capacity),
			SoftHi: float64(e.Capacity), at: now, seen: now}
	}
	b.age(now, s.HalfLife)
	return *b
}

// Prob is the probability that e can carry amt now.
func (s *Beliefs) Prob(e *Edge, amt float64, now time.Time) float64 {
	if amt > float64(e.Capacity) {
		return 0
	}
	return s.Of(e, now).prob(s.Prior, e.FromNode1, amt)
}

// Carried records that e carried amt (the router's own shards on it
// included).
func (s *Beliefs) Carried(e *Edge, amt float64, now time.Time) {
	s.Of(e, now).carried(e.FromNode1, amt)
}

// Failed records that e could not carry amt, with confidence q in (0, 1]
// that e was the channel that failed.
func (s *Beliefs) Failed(e *Edge, amt, q float64, now time.Time) {
	s.Of(e, now).failed(e.FromNode1, amt, q)
}

// Settled records that the router's own shard moved amt across e.
func (s *Beliefs) Settled(e *Edge, amt float64, now time.Time) {
	b := s.Of(e, now)
	if e.FromNode1 {
		b.shift(-amt)
	} else {
		b.shift(amt)
	}
}

// Sendable is the sure range [lo, hi] of what e can send now, with the sure
// bounds faded by half-life h since they last moved (0: not faded).
func (s *Beliefs) Sendable(e *Edge, now time.Time, h time.Duration) (lo, hi float64) {
	b := s.peek(e, now)
	return b.sendable(e.FromNode1, now, h)
}

// Expected is what e is expected to be able to send now.
func (s *Beliefs) Expected(e *Edge, now time.Time) float64 {
	b := s.peek(e, now)
	mean := b.mean(s.Prior)
	if e.FromNode1 {
		return mean
	}
	return float64(e.Capacity) - mean
}
