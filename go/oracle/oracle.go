// Package oracle is a clairvoyant reference router: the ceiling a router
// could reach. At the start of each payment it reads the network as it
// really is (every channel direction's spendable balance and the policy its
// node really applies, never the future traffic nor the attribution draws)
// and sends the payment at once as a least-cost flow: a min-cost flow on
// linear fees over the true balances, split into at most MaxParts
// routes, each built with exact fees and time locks and kept within the fee
// limit, the cltv limit and the onion's 20 hops.
//
// Fees make the amount on a channel larger than the flow it carries, so
// every capacity is lowered by a reserve for them. The oracle tries small
// reserves first and keeps the first plan that an exact check against the
// true balances and limits confirms; the last reserve is the fee limit,
// which bounds all the fees of all the parts, so a plan within the fee limit
// then never overdraws a channel nor exceeds a maximum HTLC.
//
// When the least-cost flow needs more parts than MaxParts allows, it falls
// back to at most MaxParts widest paths (fewer, fatter parts, at a higher
// fee), and keeps the first plan the exact check confirms.
//
// A direction's cost is its proportional rate plus its base fee spread over
// the whole amount; a direction whose minimum HTLC the payment, or the flow
// path it was given, does not reach is left out of the next flow.
//
// What it can miss (docs/oracle.md): the flow's cost is linear, so a base
// fee is weighed once for the whole amount, not once per part; a flow that
// needs the last fee-limit's worth of some channel is not found; with more
// flow paths than MaxParts (a path over a hop's maximum HTLC counts as
// several parts) it keeps the largest and moves what it can of the rest
// onto them (parts below a hop's minimum HTLC likewise), so integrality can
// lose a payment a cleverer split would make; it treats each payment alone, and in
// arenas where a failed or settled payment moves liquidity the best choice
// for one payment is not always the best for the scenario. Should a part
// fail all the same, it plans again from the network as it then is, without
// the channel that failed.
package oracle

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/internal/flownet"
	"github.com/routesim-evolve/routesim/routing"
	"github.com/routesim-evolve/routesim/sim"
)

// Truth is what the oracle reads: the simulator's world.
type Truth interface {
	TrueEdges() []sim.TrueEdge
	BlockHeight() uint32
	Source() route.Vertex
}

// NewFactory returns the oracle's router factory for one scenario run.
func NewFactory(truth Truth) routing.RouterFactory {
	return func(_ routing.SimNetworkView, _ route.Vertex,
		_ map[uint64]lnwire.MilliSatoshi, spec *routing.SimPaymentSpec) (routing.SimRouter, error) {

		return &router{truth: truth, spec: *spec, avoid: map[uint64]bool{}}, nil
	}
}

// router plays one payment: it plans when it has no route left to hand
// out, and hands out the plan's routes one per request.
type router struct {
	truth   Truth
	spec    routing.SimPaymentSpec
	planned []*route.Route
	avoid   map[uint64]bool // channels that failed a part of this payment
}

// ErrNoFlow is returned when no flow within the payment's limits carries
// the amount.
var ErrNoFlow = errors.New("oracle: no flow within the limits carries the amount")

func (r *router) RequestRoute(amt lnwire.MilliSatoshi, inFlight uint32) (*route.Route, error) {
	if len(r.planned) == 0 {
		if inFlight > 0 {
			return nil, ErrNoFlow // the plan is out; wait for the results
		}
		routes, err := plan(r.truth, &r.spec, amt, r.avoid)
		if err != nil {
			return nil, err
		}
		r.planned = routes
	}
	next := r.planned[0]
	r.planned = r.planned[1:]
	return next, nil
}

func (r *router) ReportAttempt(_ uint64, rt *route.Route, res *routing.SimAttemptResult) error {
	if res.Failure == nil {
		return nil
	}
	r.planned = nil // plan again from the network as it is now
	if idx := res.FailureSourceIdx; idx >= 0 && idx < len(rt.Hops) {
		r.avoid[rt.Hops[idx].ChannelID] = true
	}
	return nil
}

// plan is the least-cost split of amt into routes the payment may send.
func plan(truth Truth, spec *routing.SimPaymentSpec, amt lnwire.MilliSatoshi,
	avoid map[uint64]bool) ([]*route.Route, error) {

	g := newGraph(truth.TrueEdges(), truth.Source())
	target, ok := g.index[spec.Target]
	if !ok {
		return nil, fmt.Errorf("oracle: target %x is not in the graph", spec.Target[:])
	}
	var err error
	for _, widest := range []bool{false, true} {
		for _, share := range reserveShares {
			var routes []*route.Route
			routes, err = g.plan(target, truth.BlockHeight(), spec, amt, avoid,
				spec.FeeLimit/share, widest)
			if err == nil && g.fits(routes) {
				return routes, nil
			}
		}
	}
	if err == nil {
		err = fmt.Errorf("%w: no plan fits the true balances", ErrNoFlow)
	}
	return nil, err
}

// reserveShares divide the fee limit into the reserves tried, smallest first.
var reserveShares = []lnwire.MilliSatoshi{64, 8, 1}

// plan splits amt with each capacity lowered by reserve: the least-cost
// flow, or with widest, at most MaxParts widest paths (the fallback when the
// cheapest flow needs more parts than the payment may send).
func (g *graph) plan(target int, height uint32, spec *routing.SimPaymentSpec,
	amt lnwire.MilliSatoshi, avoid map[uint64]bool, reserve lnwire.MilliSatoshi,
	widest bool) ([]*route.Route, error) {

	// The least-cost pass sends one HTLC per channel (the maximum HTLC is
	// its capacity); the widest pass lets parts share a channel, each under
	// its maximum (htlcSized splits them). A direction whose minimum HTLC
	// is over what any part of this payment carries is left out from the
	// start; one whose minimum is over the flow path it was given is left
	// out of the next flow, up to minimumRounds flows.
	closed := g.overMinimum(amt + spec.FeeLimit)
	var net *flownet.Net
	var flow []flownet.Path
	for round := 0; ; round++ {
		net = g.flowNet(reserve, avoid, closed, !widest, amt)
		source := g.index[g.source]
		sent := int64(0)
		if widest {
			sent = net.WidestFlow(source, target, int64(amt), int(spec.MaxParts))
		} else {
			sent = net.MinCostFlow(source, target, int64(amt))
		}
		if sent < int64(amt) {
			return nil, ErrNoFlow
		}
		flow = net.Paths(source, target)
		if !g.closeUnderMinimum(flow, closed) || round+1 == minimumRounds {
			break
		}
	}
	paths := g.htlcSized(flow, reserve, int(spec.MaxParts))
	paths = fitParts(net, paths, int(spec.MaxParts), g.belowMinimum)
	if sent := totalValue(paths); sent < int64(amt) {
		return nil, fmt.Errorf("%w: %d of %d msat fit in %d parts", ErrNoFlow, sent, amt, spec.MaxParts)
	}
	var routes []*route.Route
	var fees lnwire.MilliSatoshi
	for _, p := range paths {
		rt, err := g.route(p, height, spec)
		if err != nil {
			return nil, err
		}
		fees += rt.TotalFees()
		routes = append(routes, rt)
	}
	if fees > spec.FeeLimit {
		return nil, fmt.Errorf("%w: the cheapest flow pays %d msat, the limit is %d",
			ErrNoFlow, fees, spec.FeeLimit)
	}
	return routes, nil
}

func totalValue(paths []flownet.Path) int64 {
	sum := int64(0)
	for _, p := range paths {
		sum += p.Value
	}
	return sum
}

// fitParts keeps at most maxParts paths, none too small for a hop: the
// largest, with the value of the others moved onto them as far as their
// residual capacity allows.
func fitParts(net *flownet.Net, paths []flownet.Path, maxParts int, tooSmall func(flownet.Path) bool) []flownet.Path {
	slices.SortStableFunc(paths, func(a, b flownet.Path) int { return cmp.Compare(b.Value, a.Value) })
	var kept, dropped []flownet.Path
	for _, p := range paths {
		if len(kept) < maxParts && !tooSmall(p) {
			kept = append(kept, p)
		} else {
			dropped = append(dropped, p)
		}
	}
	if len(dropped) == 0 {
		return kept
	}
	left := int64(0)
	for _, p := range dropped {
		left += p.Value
	}
	// Residual room of each true edge once the dropped paths are undone.
	room := map[int]int64{}
	for i := 0; i < len(net.Arcs); i += 2 {
		room[net.Arcs[i].Edge] = net.Arcs[i].Cap
	}
	for _, p := range dropped {
		for _, e := range p.Edges {
			room[e] += p.Value
		}
	}
	for i := range kept {
		extra := left
		for _, e := range kept[i].Edges {
			extra = min(extra, room[e])
		}
		for _, e := range kept[i].Edges {
			room[e] -= extra
		}
		kept[i].Value += extra
		left -= extra
	}
	return kept
}

// graph is the true network indexed for the flow.
type graph struct {
	edges  []sim.TrueEdge
	source route.Vertex
	nodes  []route.Vertex
	index  map[route.Vertex]int
}

func newGraph(edges []sim.TrueEdge, source route.Vertex) *graph {
	g := &graph{edges: edges, source: source, index: map[route.Vertex]int{}}
	add := func(v route.Vertex) {
		if _, ok := g.index[v]; !ok {
			g.index[v] = len(g.nodes)
			g.nodes = append(g.nodes, v)
		}
	}
	add(source)
	for _, e := range edges {
		add(e.From)
		add(e.To)
	}
	return g
}

// fits reports whether the routes, sent together, stay within every true
// balance and every hop's HTLC limits.
func (g *graph) fits(routes []*route.Route) bool {
	edge := g.routeEdges(routes)
	load := map[direction]lnwire.MilliSatoshi{}
	// htlcs counts the routes' HTLCs on each channel, either way: each one
	// after the first raises the funder's fee buffer (TrueEdge.HTLCCost).
	htlcs := map[uint64]lnwire.MilliSatoshi{}
	for _, rt := range routes {
		for _, hop := range rt.Hops {
			htlcs[hop.ChannelID]++
		}
	}
	for _, rt := range routes {
		from := rt.SourcePubKey
		for k, hop := range rt.Hops {
			amt := rt.TotalAmount
			if k > 0 {
				amt = rt.Hops[k-1].AmtToForward
			}
			d := direction{hop.ChannelID, from}
			e := edge[d]
			if pol := e.Policy; from != g.source &&
				(pol == nil || amt > pol.MaxHTLC || amt < pol.MinHTLC) {
				return false
			}
			load[d] += amt
			if load[d]+(htlcs[hop.ChannelID]-1)*e.HTLCCost > e.Balance {
				return false
			}
			from = hop.PubKeyBytes
		}
	}
	return true
}

// direction is a channel as seen from one of its ends.
type direction struct {
	channel uint64
	from    route.Vertex
}

// routeEdges maps each direction the routes cross to its true edge; a
// direction the network lacks is absent (its zero edge has no balance).
// It looks at the routes' few channels only, not the whole network.
func (g *graph) routeEdges(routes []*route.Route) map[direction]sim.TrueEdge {
	channels := map[uint64]bool{}
	for _, rt := range routes {
		for _, hop := range rt.Hops {
			channels[hop.ChannelID] = true
		}
	}
	edge := map[direction]sim.TrueEdge{}
	for _, e := range g.edges {
		if channels[e.ChannelID] {
			edge[direction{e.ChannelID, e.From}] = e
		}
	}
	return edge
}

// htlcSized splits every path whose value is over the smallest maximum
// HTLC on it, less room for the fees the HTLC carries on top of its value
// (the reserve, at most half the maximum), into parts that each fit: the
// maximum binds each HTLC, not the channel, so several parts may cross one
// channel. No path gives more than maxParts parts (no plan sends more);
// value past them is left out, and the plan then falls short.
func (g *graph) htlcSized(paths []flownet.Path, reserve lnwire.MilliSatoshi, maxParts int) []flownet.Path {
	var out []flownet.Path
	for _, p := range paths {
		most := int64(math.MaxInt64)
		for _, i := range p.Edges {
			if e := g.edges[i]; e.From != g.source {
				ceiling := int64(e.Policy.MaxHTLC)
				most = min(most, ceiling-min(int64(reserve), ceiling/2))
			}
		}
		most = max(most, 1)
		for left, n := p.Value, 0; left > 0 && n < maxParts; n++ {
			part := min(left, most)
			out = append(out, flownet.Path{Edges: p.Edges, Value: part})
			left -= part
		}
	}
	return out
}

// minimumRounds bounds the flows one plan solves while it closes
// directions whose minimum HTLC the flow's paths do not reach: one flow
// and one again. More rounds found no more payments on the 2021 graph and
// made a plan there up to fifty times slower.
const minimumRounds = 2

// overMinimum is the set of directions (by edge index) whose minimum HTLC is
// over most, the largest HTLC the payment can make.
func (g *graph) overMinimum(most lnwire.MilliSatoshi) map[int]bool {
	closed := map[int]bool{}
	for i, e := range g.edges {
		if e.From != g.source && e.Policy != nil && e.Policy.MinHTLC > most {
			closed[i] = true
		}
	}
	return closed
}

// closeUnderMinimum adds to closed every direction whose minimum HTLC is
// over the value of a flow path through it, and reports whether it added
// any.
func (g *graph) closeUnderMinimum(paths []flownet.Path, closed map[int]bool) bool {
	added := false
	for _, p := range paths {
		for _, i := range p.Edges {
			if pol := g.edges[i].Policy; pol != nil && g.edges[i].From != g.source &&
				lnwire.MilliSatoshi(p.Value) < pol.MinHTLC && !closed[i] {
				closed[i], added = true, true
			}
		}
	}
	return added
}

// belowMinimum is true when a path's value is under some hop's minimum HTLC.
func (g *graph) belowMinimum(p flownet.Path) bool {
	for _, i := range p.Edges {
		if pol := g.edges[i].Policy; pol != nil && g.edges[i].From != g.source &&
			lnwire.MilliSatoshi(p.Value) < pol.MinHTLC {
			return true
		}
	}
	return false
}

// flowNet builds the flow network: an arc per usable direction not to
// avoid nor closed, toward an online node and with a free HTLC slot, its capacity the balance (with oneHTLC, at most the
// maximum HTLC) less the reserve for fees, its cost the fee its node
// charges per unit of amt (nothing on the sender's own channels).
func (g *graph) flowNet(reserve lnwire.MilliSatoshi, avoid map[uint64]bool, closed map[int]bool,
	oneHTLC bool, amt lnwire.MilliSatoshi) *flownet.Net {

	net := flownet.New(len(g.nodes))
	net.Arcs = slices.Grow(net.Arcs, 2*len(g.edges)) // an arc and its twin per direction at most
	for i, e := range g.edges {
		own := e.From == g.source
		if avoid[e.ChannelID] || closed[i] || e.FreeSlots == 0 || !e.Online ||
			(!own && (e.Policy == nil || e.Policy.IsDisabled)) {
			continue
		}
		capacity := int64(e.Balance)
		cost := int64(0)
		if !own {
			cost = unitCost(e.Policy, amt)
			if oneHTLC {
				capacity = min(capacity, int64(e.Policy.MaxHTLC))
			}
		}
		capacity -= int64(reserve)
		if capacity > 0 {
			net.AddArc(g.index[e.From], g.index[e.To], capacity, cost, i)
		}
	}
	return net
}

// unitCost is a direction's fee per unit of flow, in ppm: its proportional
// rate plus its base fee spread over the whole amount, so that a channel
// with a high base fee weighs what it would cost if the payment crossed it
// whole (a linear cost cannot charge the base fee once per part).
func unitCost(p *routing.CachedEdgePolicy, amt lnwire.MilliSatoshi) int64 {
	if p.FeeBaseMSat >= maxUnitCost || p.FeeProportionalMillionths >= maxUnitCost {
		return maxUnitCost
	}
	base := (uint64(p.FeeBaseMSat)*1_000_000 + uint64(amt) - 1) / max(uint64(amt), 1)
	return int64(min(uint64(p.FeeProportionalMillionths)+base, maxUnitCost))
}

// maxUnitCost caps a direction's cost so that sums along a path never wrap.
const maxUnitCost = 1 << 30

// route builds the route of a flow path delivering its value, with the
// fees and time locks the true policies ask, in lnd's encoding.
func (g *graph) route(p flownet.Path, height uint32, spec *routing.SimPaymentSpec) (*route.Route, error) {
	n := len(p.Edges)
	if n > sim.MaxRouteHops {
		return nil, fmt.Errorf("%w: a path of %d hops", ErrNoFlow, n)
	}
	// amount[k] and lock[k] ride on edge k; the node at the start of edge
	// k+1 keeps that edge's fee and delta.
	amount := make([]lnwire.MilliSatoshi, n)
	lock := make([]uint32, n)
	amount[n-1], lock[n-1] = lnwire.MilliSatoshi(p.Value), height+uint32(spec.FinalCLTVDelta)
	for k := n - 2; k >= 0; k-- {
		next := g.edges[p.Edges[k+1]].Policy
		// The node's own policy of the channel the HTLC comes in over
		// carries its inbound fee: TrueEdges lists a channel's two
		// directions one after the other.
		inbound := g.edges[p.Edges[k]^1].Policy
		amount[k] = amount[k+1] + routing.HopFee(next, inbound, amount[k+1])
		lock[k] = lock[k+1] + uint32(next.TimeLockDelta)
	}
	hops := make([]*route.Hop, n)
	for k := range hops {
		fwd, out := amount[n-1], lock[n-1]
		if k+1 < n {
			fwd, out = amount[k+1], lock[k+1]
		}
		hops[k] = &route.Hop{PubKeyBytes: g.edges[p.Edges[k]].To,
			ChannelID: g.edges[p.Edges[k]].ChannelID, AmtToForward: fwd, OutgoingTimeLock: out}
	}
	if lock[0] > spec.CltvLimit {
		return nil, fmt.Errorf("%w: time lock %d over the limit %d", ErrNoFlow, lock[0], spec.CltvLimit)
	}
	return route.NewRouteFromHops(amount[0], lock[0], g.source, hops)
}
