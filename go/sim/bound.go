package sim

import (
	"math"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/internal/saturating"
	"github.com/routesim-evolve/routesim/routing"
)

// bound is the ceiling of one payment: an upper bound on what any router
// could have delivered in the world this payment met (docs/scoring.md,
// "The feasible bound"). A payment is feasible when the bound reaches its
// amount; a payment that is not feasible can be delivered by no router, so
// "delivered of feasible" never exceeds 100 %.
//
// The bound is a maximum flow from the sender to the target over the true
// balances, on the channel directions some route of this payment could use:
// an actual policy that is present and enabled, a minimum HTLC the payment
// can reach, and a place on some path within the hop limit, the cltv limit
// and, counting base fees alone, the fee limit. No HTLC of a direction
// carries more than its maximum, so a direction carries at most maxHTLCs of
// them. Why this bounds every router:
//
//   - In a world without background traffic only the payment's own HTLCs
//     move liquidity. Across every s–t cut, each arrived part crosses the cut
//     forward once more than backward, and the amounts it carries fall along
//     its route, so each part lowers the cut's balance by at least what it
//     delivered. What arrives is therefore at most the minimum cut at the
//     start, the maximum flow. Over the whole payment a direction carries at
//     most MaxAttempts HTLCs.
//   - With background traffic the world changes between rounds but not
//     within one: shards of a round are forwarded at one instant. The last
//     round that delivered anything delivered at most the round's maximum
//     flow (at most MaxParts HTLCs a direction), on top of what had arrived
//     before it. So the payment is checked at the start of every round,
//     delivered-so-far plus the flow, until it is found feasible.
//
// Fees and cltv deltas are relaxed (each bounds alone), and MaxParts' limit
// on the number of routes is not an integrality constraint here: the bound
// can call a payment feasible that no router can make, never the reverse.
type bound struct {
	w        *World
	spec     *routing.SimPaymentSpec
	dynamic  bool   // background traffic moves liquidity between rounds
	perEdge  uint64 // HTLCs a direction may carry in what one check bounds
	target   int    // the target's node index; -1 when the world lacks it
	usable   []bool // by direction index 2·channel+d
	reached  lnwire.MilliSatoshi
	feasible bool

	// end is the latest the payment can still send: every attempt its own
	// round. A direction toward a node offline until then carries nothing.
	end time.Time

	// minBase is the least sum of base fees of any route of the payment,
	// and start the capacities of the first check: what the cheapest
	// plan is measured on (cheapest.go).
	minBase uint64
	start   []uint64
}

// newBound prepares the bound of a payment at its start and checks it there.
func (w *World) newBound(spec *routing.SimPaymentSpec) *bound {
	b := &bound{w: w, spec: spec, dynamic: w.traffic.perSecond > 0, target: -1,
		end: w.now.Add(seconds(float64(spec.MaxAttempts) * w.sc.Clock.AttemptLatencySec))}
	if t, ok := w.net.nodeIndex[spec.Target]; ok {
		b.target = t
	}
	b.perEdge = uint64(spec.MaxAttempts)
	if b.dynamic {
		b.perEdge = uint64(spec.MaxParts)
	}
	b.usable, b.minBase = w.net.usableFor(w.source, b.target, spec, w.BlockHeight())
	b.start = b.capacities(b.perEdge, true)
	b.check(0, b.start)
	return b
}

// atRound checks the bound again at the start of a later round, with
// delivered already arrived; only background traffic can raise it there.
func (b *bound) atRound(delivered lnwire.MilliSatoshi) {
	if b.dynamic && !b.feasible {
		b.check(delivered, b.capacities(b.perEdge, true))
	}
}

// check raises the bound to what has arrived plus the flow that caps, the
// world's capacities now, let through, up to the amount.
func (b *bound) check(delivered lnwire.MilliSatoshi, caps []uint64) {
	if b.feasible {
		return
	}
	want := b.spec.Amount - min(delivered, b.spec.Amount)
	flow := b.w.net.maxFlow(b.w.source, b.target, uint64(want), func(dir int) uint64 { return caps[dir] })
	reached := lnwire.MilliSatoshi(min(uint64(delivered)+flow, uint64(b.spec.Amount)))
	b.reached = max(b.reached, reached)
	b.feasible = b.reached >= b.spec.Amount
}

// capacities is what each direction can carry for the payment: nothing
// where no route of the payment can pass or others' HTLCs fill every slot,
// else at most perEdge maximum HTLCs (no more than its free slots where
// they are in flight together) and, with balances, what it can spend in
// the world now. The sender's own channel is bound by its balance alone
// (or not at all, without balances).
func (b *bound) capacities(perEdge uint64, balances bool) []uint64 {
	net := b.w.net
	caps := make([]uint64, len(b.usable))
	for dir, ok := range b.usable {
		if !ok {
			continue
		}
		c := &net.channels[dir/2]
		d := dir % 2
		caps[dir] = math.MaxUint64
		if balances {
			caps[dir] = uint64(c.spendableInAll(d))
		}
		htlcs := perEdge
		if b.spec.Atomic || b.dynamic {
			// The HTLCs counted here are in flight together: the parts
			// of one round, or every arrived part held to the end.
			htlcs = min(htlcs, uint64(c.freeSlots(d)))
		}
		if c.freeSlots(d) == 0 || b.w.offlineThrough(c.nodes[1-d], b.w.now, b.end) {
			// Others' HTLCs fill it, or its next node is gone, for the
			// whole payment.
			caps[dir] = 0
		} else if c.nodes[d] != b.w.source {
			caps[dir] = min(caps[dir], saturating.Mul(htlcs, uint64(c.actual[d].MaxHTLC)))
		}
	}
	return caps
}

// usableFor marks every channel direction some route of the payment could
// use: one with a usable actual policy (the sender's own always), on a path
// from source to target within the hop limit, the cltv limit and the fee
// limit, each measured alone by its least possible total. minBase is the
// least total base fee of such a path (the last limit's own distance).
func (n *Network) usableFor(source, target int, spec *routing.SimPaymentSpec,
	height uint32) (usable []bool, minBase uint64) {

	usable = make([]bool, 2*len(n.channels))
	budget, ok := cltvBudget(spec, height)
	if target < 0 || !ok {
		return usable, 0
	}
	largest := uint64(spec.Amount) + uint64(spec.FeeLimit) // no HTLC can be larger
	g := n.boundGraph(source)
	for dir := range usable {
		usable[dir] = g.own[dir] || (g.forwards[dir] && g.minHTLC[dir] <= largest)
	}
	// Hops count every direction, the sender's own too; deltas and base
	// fees only those after it (boundGraph).
	limits := []struct {
		total  uint64
		weight []uint64 // nil: one a hop
	}{
		{MaxRouteHops, nil},
		{budget, g.delta},
		{uint64(spec.FeeLimit), g.base},
	}
	for _, l := range limits {
		from := g.distances(source, false, usable, l.weight)
		to := g.distances(target, true, usable, l.weight)
		for dir, ok := range usable {
			if ok {
				w := uint64(1)
				if l.weight != nil {
					w = l.weight[dir]
				}
				usable[dir] = saturating.Add(saturating.Add(from[g.tail[dir]], w), to[g.head[dir]]) <= l.total
			}
		}
		minBase = from[target]
	}
	return usable, minBase
}

// forwards reports whether direction dir can carry an HTLC at all: its
// node has an enabled actual policy, or it is the sender's own channel,
// where the sender checks only its balance.
func (n *Network) forwards(dir, source int) bool {
	c := &n.channels[dir/2]
	p := c.actual[dir%2]
	return c.nodes[dir%2] == source || (p != nil && !p.IsDisabled)
}

// cltvBudget is what the cltv deltas of a route's hops may add up to: the
// limit less the block height and the final delta (the receiver wants at
// least height + final on the last hop); false when not even a direct route
// fits.
func cltvBudget(spec *routing.SimPaymentSpec, height uint32) (uint64, bool) {
	floor := uint64(height) + uint64(spec.FinalCLTVDelta)
	if uint64(spec.CltvLimit) < floor {
		return 0, false
	}
	return uint64(spec.CltvLimit) - floor, true
}

// MaxFlowTo is the largest amount the sender could send to target now: a
// maximum flow over the true balances along every direction with an
// enabled actual policy (the sender's own always), with no payment's limits
// applied. The corpus generator sizes payments by it (cmd/maxflow); it is 0
// for a node the world does not know. It counts what each direction can
// spend and its free slots, not which peers are online: a payment is sized
// by what the network holds, and a peer offline at the scenario's start may
// be back by the payment's.
func (w *World) MaxFlowTo(target route.Vertex) lnwire.MilliSatoshi {
	t, ok := w.net.nodeIndex[target]
	if !ok {
		return 0
	}
	net := w.net
	flow := net.maxFlow(w.source, t, math.MaxUint64, func(dir int) uint64 {
		if !net.forwards(dir, w.source) {
			return 0
		}
		c := &net.channels[dir/2]
		if c.freeSlots(dir%2) == 0 {
			return 0
		}
		return uint64(c.spendableInAll(dir % 2))
	})
	return lnwire.MilliSatoshi(flow)
}
