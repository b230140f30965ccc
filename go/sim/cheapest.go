package sim

import (
	"math"

	"github.com/routesim-evolve/routesim/internal/saturating"
)

// The cheapest plan of a delivered payment: a lower bound on the fee any
// router could have paid to deliver it (docs/scoring.md, "The cheapest
// plan"). The score's fee axis measures a router's fee against it.
//
// A delivered part of x msat pays, on every hop after the sender's own, at
// least the hop's base fee plus its proportional rate on x (each hop
// forwards at least what arrives). So the fee of the payment is at least
//
//   - the least base fees of any route of the payment (at least one part
//     arrived), plus
//   - the cost of the flow its parts form, each carrying x along its route,
//     at each direction's rate: at least the least-cost flow of the amount.
//
// The least-cost flow is taken over the directions the feasible bound
// found usable. Each direction carries at most MaxAttempts maximum HTLCs
// of the payment, and, where the world stood still and the payment's own
// parts never crossed a channel both ways, at most its balance at the
// payment's start: liquidity a direction gives up comes back only over the
// other direction. With background traffic, or a plan that crossed back,
// balances bind nothing here. Lnd rounds each hop's proportional fee down
// to the msat, so a route may pay less than this by under 1 msat a hop of
// each part: the scorer allows that much (score/invariants.py).

// unitCostCap bounds a direction's rate in the least-cost flow, in ppm,
// so that no sum overflows: a lower rate only lowers the bound, and one
// above the fee limit over the amount could not carry the whole payment.
const unitCostCap = 1 << 30

// cheapestFee is the cheapest plan's fee of a payment the router delivered
// with parts that held the liquidity in arrived.
func (b *bound) cheapestFee(arrived [][]legHold) uint64 {
	if b.target < 0 || b.minBase == math.MaxUint64 {
		return 0 // no route: the payment was not deliverable at all
	}
	net := b.w.net
	caps := b.start
	if b.dynamic || crossesBack(arrived) {
		// Each direction carries at most MaxAttempts maximum HTLCs of the
		// whole payment, whatever its balance.
		caps = b.capacities(uint64(b.spec.MaxAttempts), false)
	}
	amount := uint64(b.spec.Amount)
	rateCap := min(saturating.Mul(uint64(b.spec.FeeLimit), 1_000_000)/max(amount, 1)+1, unitCostCap)
	rates := net.boundGraph(b.w.source).rate // the sender pays itself no fee: 0 there
	flow := net.flowNet(func(dir int) uint64 { return caps[dir] })
	flow.SetCosts(func(dir int) int64 { return int64(min(rates[dir], rateCap)) })
	cost, ok := flow.LeastCost(b.w.source, b.target, int64(min(amount, math.MaxInt64)))
	if !ok {
		return b.minBase
	}
	return saturating.Add(b.minBase, cost/1_000_000)
}

// crossesBack reports whether the arrived parts used some channel in both
// directions.
func crossesBack(arrived [][]legHold) bool {
	used := map[int]int{} // channel → direction mask
	for _, holds := range arrived {
		for _, h := range holds {
			used[h.channel] |= 1 << h.dir
		}
	}
	for _, mask := range used {
		if mask == 3 {
			return true
		}
	}
	return false
}
