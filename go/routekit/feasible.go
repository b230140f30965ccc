package routekit

import (
	"math"
	"math/rand/v2"

	"github.com/lightningnetwork/lnd/lnwire"
)

// feasibleSamples is how many worlds LikelyFeasible draws at most.
const feasibleSamples = 40

// WorthStarting reports whether a payment should send its first shard:
// always for an atomic payment (the receiver releases what arrived if it
// fails) and after the first round, else when the whole amt fits the max
// flow in at least the settings' StartProb of the worlds the beliefs draw
// (LikelyFeasible). A payment that is not atomic and fails after some of
// its parts arrived has spent the sender's liquidity for nothing: the
// parts settle, the payment does not count, and later payments find the
// sender's channels and the routes behind them drained.
func (p *Payment) WorthStarting(amt lnwire.MilliSatoshi) bool {
	if p.Spec.Atomic || p.Attempts > 0 || p.Settings.StartProb <= 0 {
		return true
	}
	return p.LikelyFeasible(amt, p.Settings.StartProb)
}

// LikelyFeasible reports whether amt more (on top of what is in flight)
// fits the max flow in at least the share prob of worlds drawn from the
// beliefs: each remote channel's balance drawn from its belief (its soft
// bounds with their weight, the prior within the sure bounds), the
// sender's own channels at their balances. It stops drawing as soon as the
// answer is settled, and each max flow as soon as amt fits, so a likely
// payment costs a few partial max flows. The draws are seeded by the
// payment, so a scenario replays exactly.
func (p *Payment) LikelyFeasible(amt lnwire.MilliSatoshi, prob float64) bool {
	need := int(math.Ceil(prob * feasibleSamples))
	w := p.newWorlds()
	want := float64(amt + p.InFlight)
	fits := 0
	for k := 0; k < feasibleSamples; k++ {
		switch {
		case fits >= need:
			return true
		case fits+feasibleSamples-k < need:
			return false
		}
		w.draw()
		if p.maxFlowUpTo(w.sendable, want) >= want {
			fits++
		}
	}
	return fits >= need
}

// worlds draws every channel's balance from the payment's beliefs, one
// world at a time.
type worlds struct {
	p       *Payment
	rng     *rand.Rand
	learnt  map[int32]Belief // aged beliefs by Edge.Channel; the rest are the prior's
	balance []float64        // node 1's balance per channel in this world; −1 not drawn
}

func (p *Payment) newWorlds() *worlds {
	now := p.Now()
	w := &worlds{p: p, learnt: map[int32]Belief{}, balance: make([]float64, p.Graph.NumChannels()),
		rng: rand.New(rand.NewPCG(uint64(p.Spec.Amount), uint64(now.UnixNano())))}
	for scid, b := range p.Beliefs.m {
		if i, ok := p.Graph.channels[scid]; ok {
			b.age(now, p.Beliefs.HalfLife)
			w.learnt[i] = *b
		}
	}
	return w
}

// draw starts a new world: every balance is drawn on first use.
func (w *worlds) draw() {
	for i := range w.balance {
		w.balance[i] = -1
	}
}

// sendable is what e can send in the current world, less what the
// payment's own shards lock on it (maxFlow takes the held ones off, which
// the locked include).
func (w *worlds) sendable(e *Edge) float64 {
	s := w.balance[e.Channel]
	if s < 0 {
		b, ok := w.learnt[e.Channel]
		if !ok {
			b = Belief{Capacity: float64(e.Capacity), Hi: float64(e.Capacity)}
		}
		s = b.sample(w.p.Beliefs.Prior, w.rng)
		w.balance[e.Channel] = s
	}
	if !e.FromNode1 {
		s = float64(e.Capacity) - s
	}
	if len(w.p.locked) == 0 {
		return s
	}
	return s - w.p.Locked(e) + w.p.Held(e)
}
