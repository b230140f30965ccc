package main

// A probability-aware router with channel-level mission control and
// probability-targeted splitting.
//
// It shares its learning with probabilistic.go and differs in how it sizes
// shards: instead of trying the rest and its halvings, it sends the largest
// shard whose best route still reaches a target probability, found by
// bisection on the amount. A shard is then as large as the network is
// likely to carry, neither a blind half nor a fixed fraction.
//
// What it does, and why:
//
//   - It keeps, for every remote channel, an interval [lo, hi] on the
//     balance of the channel's node 1 (the smaller key), learnt from every
//     attempt of every payment. The two directions of a channel share one
//     balance, so a success one way is evidence about the other way.
//   - It tracks its own effect on the world: a shard that settles moves its
//     amount across every channel it used, so the interval moves with it;
//     held shards (atomic MPP) and shards in flight in the same round are
//     subtracted from what a channel can still carry.
//   - The success probability of a hop is the prior (lnd's bimodal model
//     mixed with a uniform share) conditioned on the interval. Routes are
//     found by Dijkstra over -ln P + fee weight, so a likely route wins over
//     a cheap one: delivery leads the score.
//   - Knowledge fades with virtual time, as background traffic moves
//     balances; an observation outside a known interval replaces it.
//   - Failure blame is soft once unreadable failures reveal degraded
//     attribution: suspicion is spread over the neighbours of the blamed
//     position (and over the whole route for a stripped failure), weighted
//     by how likely each hop was to fail.
//   - A policy failure (fee, cltv) says nothing about liquidity: the
//     simulator fixes the view, and the router finds the truly failing hop
//     by comparing the route's policies before and after.
//   - The shard is the whole rest when its best route reaches targetProb,
//     else the largest amount whose best route does (bisection).
//
// Numbers marked "evolve:tunable" and strings marked "evolve:choice" may be
// changed by the offline proposer.

import (
	"container/heap"
	"errors"
	"math"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// The prior over hidden balances.
const (
	// bimodalScaleSat is s of the bimodal prior e^(-x/s) + e^((x-c)/s).
	bimodalScaleSat = 300_000.0 // evolve:tunable [30_000, 3_000_000] success

	// uniformShare is the prior weight of a uniform balance.
	uniformShare = 0.2 // evolve:tunable [0.01, 0.8] success
)

// The cost of a route: -ln P + feeWeight·(fee in units of 1000 ppm) +
// hopPenalty per hop.
const (
	feeWeight = 0.1 // evolve:tunable [0, 2] fee

	hopPenalty = 0.01 // evolve:tunable [0, 0.5] retry
)

// Forgetting: background traffic moves balances, so what the router learnt
// relaxes toward the prior with virtual time. It cannot tell a drifting
// world from a static one in time (contradictions are rare: a channel
// believed empty is never tried again), and forgetting slowly costs little
// where nothing drifts.
const (
	memoryHalfLifeMin = 600.0 // evolve:tunable [5, 1440] success

	// boundHalfLifeMin is the half-life of the sure bounds that decide
	// whether a payment can still complete at all.
	boundHalfLifeMin = 600.0 // evolve:tunable [5, 1440] success

	decayMode = "always" // evolve:choice always|never success
)

// Splitting.
const (
	// targetProb: a shard is the largest amount whose best route is at
	// least this likely.
	targetProb = 0.3 // evolve:tunable [0.05, 0.95] success

	// bisectSteps is how many searches refine the shard size.
	bisectSteps = 7 // evolve:tunable [2, 14] retry

	// sizeExponent: when no size reaches targetProb, the whole rest and
	// the smallest shard are weighed by P·(size/rest)^sizeExponent.
	sizeExponent = 0.6 // evolve:tunable [0, 1.5] success

	// fullAmountRounds: without atomic MPP, the first rounds send the
	// whole rest as one shard.
	fullAmountRounds = 1 // evolve:tunable [0, 10] success

	// minShardSat is the smallest shard the router splits down to.
	minShardSat = 5_000 // evolve:tunable [1_000, 100_000] success

	// minRouteProb: routes less likely than this are not tried.
	minRouteProb = 0.0001 // evolve:tunable [0.000001, 0.05] success
)

// Degraded attribution.
const (
	// shiftShare is the assumed share of failures blamed one hop off, in
	// each direction, once degraded attribution was seen.
	shiftShare = 0.1 // evolve:tunable [0.01, 0.4] success

	// blameMode: "adaptive" trusts reports until an unreadable failure is
	// seen, "soft" never trusts them fully, "hard" always does.
	blameMode = "adaptive" // evolve:choice adaptive|soft|hard success
)

const (
	// finalCltvPadding is added to the final cltv delta, so a block mined
	// while the shard is in flight does not fail it.
	finalCltvPadding = 3

	// maxHops caps the length of a route (the onion's limit).
	maxHops = 20
)

var errNoRoute = errors.New("no route found")

// Package-level state lives for one scenario: the graph, what the router
// learnt, and what it has seen of the world's behaviour.
var (
	graph   *graphCache
	beliefs = map[uint64]*belief{}

	// unreadableSeen counts stripped failures: evidence that attribution
	// is degraded.
	unreadableSeen int

	// previous is the router of the last payment, whose held shards are
	// settled or released when the next payment starts.
	previous *probRouter
)

// newCandidateRouter is the contract every candidate implements.
func newCandidateRouter(view routing.SimNetworkView, source route.Vertex,
	localBalances map[uint64]lnwire.MilliSatoshi,
	spec *routing.SimPaymentSpec) (routing.SimRouter, error) {

	if previous != nil {
		previous.finish()
	}
	if graph == nil {
		graph = newGraphCache(view)
	}
	graph.view = view
	src, ok := graph.index[source]
	if !ok {
		return nil, errors.New("unknown source")
	}
	dst, ok := graph.index[spec.Target]
	if !ok {
		return nil, errors.New("unknown target")
	}
	r := &probRouter{
		view:     view,
		source:   src,
		target:   dst,
		local:    localBalances,
		spec:     spec,
		held:     map[uint64]float64{},
		inFlight: map[uint64]float64{},

		upperBoundStale: true,
	}
	previous = r
	return r, nil
}

// dirKey names one direction of a channel: from node 1 when the low bit is 0.
func dirKey(scid uint64, fromNode1 bool) uint64 {
	if fromNode1 {
		return scid << 1
	}
	return scid<<1 | 1
}

// ---------------------------------------------------------------------------
// Beliefs: what the router knows of each remote channel's balance.

// belief bounds S, the balance of the channel's node 1, in msat: lo ≤ S ≤ hi
// for sure, and S within [sLo, sHi] with weight w (soft evidence from
// failures whose blame may be wrong). at is when the bounds were last
// brought to the present.
type belief struct {
	capacity float64
	lo, hi   float64
	sLo, sHi float64
	w        float64
	at       time.Time

	// seen is when a hard bound last moved on an observation.
	seen time.Time
}

// beliefOf returns the belief of a channel, made on first use.
func beliefOf(scid uint64, capacity float64, now time.Time) *belief {
	b, ok := beliefs[scid]
	if !ok {
		b = &belief{capacity: capacity, hi: capacity, sHi: capacity, at: now}
		beliefs[scid] = b
	}
	b.age(now)
	return b
}

// decaying reports whether learnt bounds fade with time.
func decaying() bool {
	return decayMode == "always"
}

// age relaxes the bounds toward [0, capacity] for the time passed since they
// were last brought to the present. Exponential decay composes, so aging in
// steps equals aging at once.
func (b *belief) age(now time.Time) {
	if !now.After(b.at) {
		return
	}
	if decaying() {
		f := math.Exp2(-now.Sub(b.at).Minutes() / memoryHalfLifeMin)
		c := b.capacity
		b.lo *= f
		b.hi = c - (c-b.hi)*f
		b.sLo *= f
		b.sHi = c - (c-b.sHi)*f
		b.w *= f
	}
	b.at = now
}

// mustHave records that S ≥ x (fromNode1) or capacity - S ≥ x (toward node
// 1), as a forward of x proves. A contradiction of the hard bound means the
// world moved: the new observation wins.
func (b *belief) mustHave(fromNode1 bool, x float64) {
	if fromNode1 {
		b.raiseLo(x)
	} else {
		b.lowerHi(b.capacity - x)
	}
}

// cannotHave records that S < x (fromNode1) or capacity - S < x, with
// confidence q (1: certain).
func (b *belief) cannotHave(fromNode1 bool, x, q float64) {
	if q >= 0.999 {
		if fromNode1 {
			b.lowerHi(x)
		} else {
			b.raiseLo(b.capacity - x)
		}
		return
	}
	if fromNode1 {
		b.sHi = math.Min(b.sHi, x)
	} else {
		b.sLo = math.Max(b.sLo, b.capacity-x)
	}
	b.w = 1 - (1-b.w)*(1-q)
	if b.sLo >= b.sHi {
		// Soft bounds that exclude each other carry no information.
		b.sLo, b.sHi, b.w = 0, b.capacity, 0
	}
}

func (b *belief) raiseLo(x float64) {
	b.seen = b.at
	x = math.Min(math.Max(x, 0), b.capacity)
	if x > b.hi {
		b.hi = b.capacity
	}
	b.lo = math.Max(b.lo, x)
	if x > b.sHi {
		b.sLo, b.sHi, b.w = 0, b.capacity, 0
	}
}

func (b *belief) lowerHi(x float64) {
	b.seen = b.at
	x = math.Min(math.Max(x, 0), b.capacity)
	if x < b.lo {
		b.lo = 0
	}
	b.hi = math.Min(b.hi, x)
	if x < b.sLo {
		b.sLo, b.sHi, b.w = 0, b.capacity, 0
	}
}

// shift moves S by delta: our own settled shard moved funds across.
func (b *belief) shift(delta float64) {
	b.seen = b.at
	c := b.capacity
	clamp := func(x float64) float64 { return math.Min(math.Max(x, 0), c) }
	b.lo, b.hi = clamp(b.lo+delta), clamp(b.hi+delta)
	if b.w > 0 {
		b.sLo, b.sHi = clamp(b.sLo+delta), clamp(b.sHi+delta)
	}
}

// prob is the probability that the channel can carry x in the direction
// given, mixing the hard interval with the soft one by its weight.
func (b *belief) prob(fromNode1 bool, x float64) float64 {
	p := intervalProb(b.capacity, b.lo, b.hi, fromNode1, x)
	if b.w <= 0 {
		return p
	}
	lo, hi := math.Max(b.lo, b.sLo), math.Min(b.hi, b.sHi)
	if lo > hi {
		return p
	}
	return (1-b.w)*p + b.w*intervalProb(b.capacity, lo, hi, fromNode1, x)
}

// intervalProb is P(S ≥ x) (fromNode1) or P(capacity - S ≥ x) under the
// prior conditioned on lo ≤ S ≤ hi.
func intervalProb(c, lo, hi float64, fromNode1 bool, x float64) float64 {
	// a ≤ S ≤ z is what carrying x needs.
	a, z := x, c
	if !fromNode1 {
		a, z = 0, c-x
	}
	a, z = math.Max(a, lo), math.Min(z, hi)
	if a > z {
		return 0
	}
	total := priorCDF(hi, c) - priorCDF(lo, c)
	if total < 1e-12 {
		// Too narrow for the prior to tell: uniform on the interval.
		if hi-lo < 1 {
			return 1
		}
		return (z - a) / (hi - lo)
	}
	return math.Min(1, (priorCDF(z, c)-priorCDF(a, c))/total)
}

// priorCDF is P(S ≤ x) for a channel of capacity c (msat) under the mixed
// prior: uniformShare uniform, the rest lnd's bimodal model.
func priorCDF(x, c float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= c {
		return 1
	}
	s := bimodalScaleSat * 1000
	norm := -math.Expm1(-c / s)
	bimodal := (-math.Expm1(-x/s) + math.Exp((x-c)/s) - math.Exp(-c/s)) / (2 * norm)
	return uniformShare*x/c + (1-uniformShare)*bimodal
}

// ---------------------------------------------------------------------------
// The graph: a copy of the gossip view indexed for fast search.

// edge is a channel over which node `from` can send to the node whose list
// holds the edge, with from's policy for it.
type edge struct {
	from      int32
	scid      uint64
	capacity  float64 // msat
	fromNode1 bool
	policy    *routing.CachedEdgePolicy
}

type graphCache struct {
	view  routing.SimNetworkView
	index map[route.Vertex]int32
	nodes []route.Vertex
	in    [][]edge
	flow  *flowNet
}

func newGraphCache(view routing.SimNetworkView) *graphCache {
	g := &graphCache{view: view, index: map[route.Vertex]int32{}}
	_ = view.ForEachNode(func(n route.Vertex) error {
		g.index[n] = int32(len(g.nodes))
		g.nodes = append(g.nodes, n)
		return nil
	})
	g.in = make([][]edge, len(g.nodes))
	for i := range g.nodes {
		g.refresh(int32(i))
	}
	g.flow = newFlowNet(g)
	return g
}

// refresh re-reads the channels into node v, whose policies a failure's
// channel update may have changed.
func (g *graphCache) refresh(v int32) {
	var list []edge
	_ = g.view.ForEachNodeDirectedChannel(g.nodes[v], func(ch *routing.DirectedChannel) error {
		from, ok := g.index[ch.OtherNode]
		if !ok {
			return nil
		}
		list = append(list, edge{
			from:      from,
			scid:      ch.ChannelID,
			capacity:  float64(ch.Capacity) * 1000,
			fromNode1: !ch.IsNode1,
			policy:    ch.InPolicy,
		})
		return nil
	})
	g.in[v] = list
}

// edgeInto finds the edge over channel scid into node v.
func (g *graphCache) edgeInto(v int32, scid uint64) *edge {
	for i := range g.in[v] {
		if g.in[v][i].scid == scid {
			return &g.in[v][i]
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// The router of one payment.

type probRouter struct {
	view   routing.SimNetworkView
	source int32
	target int32
	local  map[uint64]lnwire.MilliSatoshi
	spec   *routing.SimPaymentSpec

	// held is what our arrived shards lock per channel direction until
	// the payment ends (atomic MPP only).
	held map[uint64]float64

	// inFlight is what this round's dispatched shards lock per channel
	// direction, should they pass.
	inFlight map[uint64]float64

	// heldShards are the arrived shards of an atomic payment, settled or
	// released when it ends.
	heldShards []*route.Route

	// feesCommitted is the fee of every shard in flight, held or settled.
	feesCommitted lnwire.MilliSatoshi

	delivered lnwire.MilliSatoshi

	// rounds counts the rounds of dispatch so far, this one included.
	rounds int

	// inFlightAmt is what this round's dispatched shards deliver.
	inFlightAmt lnwire.MilliSatoshi

	// upperBound is the most the network can still deliver to the
	// target as far as the router knows for sure; stale after a failure.
	upperBound      float64
	upperBoundStale bool
}

// RequestRoute picks a shard size and the most likely route for it.
func (r *probRouter) RequestRoute(amt lnwire.MilliSatoshi, inFlight uint32) (*route.Route, error) {
	if inFlight == 0 {
		r.rounds++
	}
	if !r.feasible(amt) {
		return nil, errNoRoute
	}
	best := r.bestShard(amt, r.probing())
	if best == nil && r.probing() {
		// No single route carries the whole rest: split at once.
		best = r.bestShard(amt, false)
	}
	if best == nil {
		return nil, errNoRoute
	}
	rt := r.buildRoute(best)
	if rt == nil {
		return nil, errNoRoute
	}
	r.dispatch(rt)
	return rt, nil
}

// bestShard is the shard to send next: the whole rest when splitting is
// not allowed (or not yet wanted), else the largest shard whose best route
// reaches targetProb.
func (r *probRouter) bestShard(amt lnwire.MilliSatoshi, whole bool) *found {
	now := r.view.Now()
	rest := r.usable(r.search(amt, now))
	if whole || r.spec.MaxParts <= 1 || (rest != nil && rest.prob >= targetProb) {
		return rest
	}
	lo := min(lnwire.MilliSatoshi(minShardSat*1000), amt)
	small := r.usable(r.search(lo, now))
	if small == nil || small.prob < targetProb {
		return likelier(rest, small, amt)
	}
	return r.bisect(lo, amt, small, now)
}

// bisect narrows [lo, hi) on a log scale to the largest shard whose best
// route reaches targetProb; best is the route found for lo.
func (r *probRouter) bisect(lo, hi lnwire.MilliSatoshi, best *found, now time.Time) *found {
	for i := 0; i < bisectSteps && hi > lo+lo/16; i++ {
		mid := lnwire.MilliSatoshi(math.Sqrt(float64(lo) * float64(hi)))
		if f := r.usable(r.search(mid, now)); f != nil && f.prob >= targetProb {
			lo, best = mid, f
		} else {
			hi = mid
		}
	}
	return best
}

// usable drops a route too unlikely to try.
func (r *probRouter) usable(f *found) *found {
	if f == nil || f.prob < minRouteProb {
		return nil
	}
	return f
}

// likelier picks between two routes for shards of the rest amt by
// P·(size/rest)^sizeExponent; either may be nil.
func likelier(a, b *found, amt lnwire.MilliSatoshi) *found {
	score := func(f *found) float64 {
		if f == nil {
			return -1
		}
		return f.prob * math.Pow(float64(f.amount)/float64(amt), sizeExponent)
	}
	if score(a) >= score(b) {
		return a
	}
	return b
}

// probing reports whether the payment still sends its whole rest as one
// shard. Without atomic MPP a part that arrives of a payment that fails is
// spent for nothing; trying the whole amount first reveals a bottleneck
// (the target's inbound, say) before anything is spent.
func (r *probRouter) probing() bool {
	return !r.spec.Atomic && r.rounds <= fullAmountRounds
}

// dispatch books a route the router hands out: its fees, its first hop and
// the liquidity it will lock if it passes.
func (r *probRouter) dispatch(rt *route.Route) {
	r.feesCommitted += rt.TotalFees()
	r.inFlightAmt += rt.ReceiverAmt()
	r.local[rt.Hops[0].ChannelID] -= rt.TotalAmount
	r.forEachRemoteHop(rt, func(e *edge, amt float64) {
		r.inFlight[dirKey(e.scid, e.fromNode1)] += amt
	})
}

// forEachRemoteHop calls f with the edge and amount of every channel of rt
// after the sender's own. Edges come from the graph cache; a hop whose
// channel vanished is skipped.
func (r *probRouter) forEachRemoteHop(rt *route.Route, f func(e *edge, amt float64)) {
	for i := 1; i < len(rt.Hops); i++ {
		e := graph.edgeInto(graph.index[rt.Hops[i].PubKeyBytes], rt.Hops[i].ChannelID)
		if e != nil {
			f(e, float64(rt.Hops[i-1].AmtToForward))
		}
	}
}

// hopProb is the probability that edge e carries amt now, given what our
// own shards hold or have in flight on it.
func (r *probRouter) hopProb(e *edge, amt float64, now time.Time) float64 {
	k := dirKey(e.scid, e.fromNode1)
	need := amt + r.held[k] + r.inFlight[k]
	if need > e.capacity {
		return 0
	}
	return beliefOf(e.scid, e.capacity, now).prob(e.fromNode1, need)
}

// finish settles or releases the shards an atomic payment holds, once the
// next payment shows the last one ended.
func (r *probRouter) finish() {
	if !r.spec.Atomic || r.delivered < r.spec.Amount {
		return
	}
	now := r.view.Now()
	for _, rt := range r.heldShards {
		r.forEachRemoteHop(rt, func(e *edge, amt float64) {
			settle(e, amt, now)
		})
	}
}

// settle moves amt across edge e: our shard was paid out.
func settle(e *edge, amt float64, now time.Time) {
	b := beliefOf(e.scid, e.capacity, now)
	if e.fromNode1 {
		b.shift(-amt)
	} else {
		b.shift(amt)
	}
}

// ---------------------------------------------------------------------------
// Path search: Dijkstra backward from the target over -ln P + fee weight.

// label is a node's best known way to the target for the current search.
type label struct {
	cost float64
	prob float64
	recv lnwire.MilliSatoshi // what the node must receive
	cltv uint32              // deltas of the nodes from here to the target
	hops int
	next int32 // the node after this one
	via  *edge // the channel to it
	gen  uint32
	done bool
}

// Search buffers, reused across searches; gen tells stale labels apart.
var (
	labels []label
	gen    uint32
)

// found is a route for one shard: the nodes after the sender, the channels
// to them, and what each channel carries.
type found struct {
	amount lnwire.MilliSatoshi
	prob   float64
	nodes  []int32
	edges  []*edge
	amts   []lnwire.MilliSatoshi // over each channel
	cltvs  []uint32              // relative time lock over each channel
}

// search finds the route of least cost for a shard, or nil.
func (r *probRouter) search(shard lnwire.MilliSatoshi, now time.Time) *found {
	base := r.finalLock()
	if shard == 0 || base >= r.spec.CltvLimit {
		return nil
	}
	if len(labels) != len(graph.nodes) {
		labels = make([]label, len(graph.nodes))
	}
	gen++
	labels[r.target] = label{prob: 1, recv: shard, next: -1, gen: gen}
	queue := &costQueue{{node: r.target}}
	for queue.Len() > 0 {
		v := heap.Pop(queue).(queued).node
		if labels[v].done {
			continue
		}
		labels[v].done = true
		if v == r.source {
			return r.trace(shard)
		}
		if labels[v].hops < maxHops {
			r.relax(v, shard, base, now, queue)
		}
	}
	return nil
}

// relax offers every channel into v to the node at its other end.
func (r *probRouter) relax(v int32, shard lnwire.MilliSatoshi, base uint32,
	now time.Time, queue *costQueue) {

	lv := &labels[v]
	budget := r.spec.FeeLimit - min(r.feesCommitted, r.spec.FeeLimit)
	for i := range graph.in[v] {
		e := &graph.in[v][i]
		lu := &labels[e.from]
		if lu.gen == gen && lu.done {
			continue
		}
		recv, cltv, p, ok := r.extend(e, lv, now)
		if !ok || recv-shard > budget || base+cltv > r.spec.CltvLimit {
			continue
		}
		fee := float64(recv - lv.recv)
		cost := lv.cost - math.Log(p) + hopPenalty + feeWeight*fee/float64(shard)*1000
		if lu.gen == gen && cost >= lu.cost {
			continue
		}
		*lu = label{cost: cost, prob: lv.prob * p, recv: recv, cltv: cltv,
			hops: lv.hops + 1, next: v, via: e, gen: gen}
		heap.Push(queue, queued{node: e.from, cost: cost})
	}
}

// extend prices sending lv.recv over e: what e's sender must receive, the
// time lock it adds, and the probability e carries the amount.
func (r *probRouter) extend(e *edge, lv *label, now time.Time) (
	lnwire.MilliSatoshi, uint32, float64, bool) {

	amt := lv.recv
	if e.from == r.source {
		return amt, lv.cltv, 1, r.local[e.scid] >= amt
	}
	pol := e.policy
	if pol == nil || pol.IsDisabled || amt < pol.MinHTLC || amt > pol.MaxHTLC {
		return 0, 0, 0, false
	}
	p := r.hopProb(e, float64(amt), now)
	if p <= 0 {
		return 0, 0, 0, false
	}
	return amt + pol.ComputeFee(amt), lv.cltv + uint32(pol.TimeLockDelta), p, true
}

// trace reads the route found from the sender's label.
func (r *probRouter) trace(shard lnwire.MilliSatoshi) *found {
	f := &found{amount: shard, prob: labels[r.source].prob}
	for v := r.source; v != r.target; v = labels[v].next {
		next := labels[v].next
		f.nodes = append(f.nodes, next)
		f.edges = append(f.edges, labels[v].via)
		f.amts = append(f.amts, labels[next].recv)
		f.cltvs = append(f.cltvs, labels[next].cltv)
	}
	return f
}

// finalLock is the time lock the last channel carries.
func (r *probRouter) finalLock() uint32 {
	return r.view.BlockHeight() + uint32(r.spec.FinalCLTVDelta) + finalCltvPadding
}

// buildRoute turns a search result into lnd's route encoding: channel i
// carries TotalAmount for i = 0 and Hops[i-1].AmtToForward after.
func (r *probRouter) buildRoute(f *found) *route.Route {
	base := r.finalLock()
	n := len(f.edges)
	hops := make([]*route.Hop, n)
	for i := range hops {
		hops[i] = &route.Hop{
			PubKeyBytes:      graph.nodes[f.nodes[i]],
			ChannelID:        f.edges[i].scid,
			AmtToForward:     f.amount,
			OutgoingTimeLock: base,
		}
		if i+1 < n {
			hops[i].AmtToForward = f.amts[i+1]
			hops[i].OutgoingTimeLock = base + f.cltvs[i+1]
		}
	}
	rt, err := route.NewRouteFromHops(f.amts[0], base+f.cltvs[0], graph.nodes[r.source], hops)
	if err != nil || rt.TotalTimeLock > r.spec.CltvLimit ||
		r.feesCommitted+rt.TotalFees() > r.spec.FeeLimit {
		return nil
	}
	return rt
}

// queued is a node waiting in the search queue at a cost.
type queued struct {
	node int32
	cost float64
}

// costQueue is a min-heap of queued nodes; stale entries are skipped.
type costQueue []queued

func (q costQueue) Len() int           { return len(q) }
func (q costQueue) Less(i, j int) bool { return q[i].cost < q[j].cost }
func (q costQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *costQueue) Push(x any)        { *q = append(*q, x.(queued)) }
func (q *costQueue) Pop() any {
	old := *q
	n := old[len(old)-1]
	*q = old[:len(old)-1]
	return n
}

// ---------------------------------------------------------------------------
// Learning from outcomes.

// ReportAttempt learns from a shard's outcome and frees what it booked.
func (r *probRouter) ReportAttempt(_ uint64, rt *route.Route, res *routing.SimAttemptResult) error {
	now := r.view.Now()
	r.inFlightAmt -= rt.ReceiverAmt()
	r.forEachRemoteHop(rt, func(e *edge, amt float64) {
		r.inFlight[dirKey(e.scid, e.fromNode1)] -= amt
	})
	if res.Failure == nil {
		r.learnSuccess(rt, now)
		return nil
	}
	r.feesCommitted -= rt.TotalFees()
	r.local[rt.Hops[0].ChannelID] += rt.TotalAmount
	r.learnFailure(rt, res, now)
	r.upperBoundStale = true
	return nil
}

// learnSuccess records that every channel carried its amount, then books
// the shard: held until the payment ends (atomic) or settled at once.
func (r *probRouter) learnSuccess(rt *route.Route, now time.Time) {
	r.delivered += rt.ReceiverAmt()
	r.forEachRemoteHop(rt, func(e *edge, amt float64) {
		k := dirKey(e.scid, e.fromNode1)
		beliefOf(e.scid, e.capacity, now).mustHave(e.fromNode1, amt+r.held[k])
		if r.spec.Atomic {
			r.held[k] += amt
		} else {
			settle(e, amt, now)
		}
	})
	if r.spec.Atomic {
		r.heldShards = append(r.heldShards, rt)
	}
}

// learnFailure finds where the shard failed, or how likely each channel is
// to be the one, and records it.
func (r *probRouter) learnFailure(rt *route.Route, res *routing.SimAttemptResult, now time.Time) {
	changed := r.refreshRoute(rt)
	_, unreadable := res.Failure.(routing.UnreadableFailure)
	if unreadable {
		unreadableSeen++
	}
	pos := res.FailureSourceIdx
	n := len(rt.Hops)
	switch {
	case changed > 0:
		// A stale policy failed the shard there; the view is fixed now.
		r.learnPassed(rt, changed, now)
	case unreadable:
		r.blame(rt, 1, n-1, -1, now)
	case pos == 0 || isPolicyFailure(res.Failure):
		// Our own channel (known exactly), or a policy failure whose
		// hop we cannot place: nothing to learn about liquidity.
	case pos >= n:
		// The receiver does not fail with a channel code: the blame
		// was shifted from the last channel.
		r.blame(rt, n-1, n-1, n-1, now)
	default:
		r.blame(rt, max(pos-1, 1), min(pos+1, n-1), pos, now)
	}
}

// isPolicyFailure reports failures about a policy rather than liquidity.
func isPolicyFailure(f lnwire.FailureMessage) bool {
	switch f.(type) {
	case *lnwire.FailFeeInsufficient, *lnwire.FailIncorrectCltvExpiry,
		*lnwire.FailChannelDisabled, *lnwire.FailAmountBelowMinimum,
		*lnwire.FailExpiryTooSoon, *lnwire.FailIncorrectDetails,
		*lnwire.FailFinalIncorrectCltvExpiry, *lnwire.FailFinalIncorrectHtlcAmount:
		return true
	}
	return false
}

// trusted reports whether failure positions are taken at their word.
func trusted() bool {
	switch blameMode {
	case "hard":
		return true
	case "soft":
		return false
	}
	return unreadableSeen == 0
}

// blame spreads a liquidity failure over channels first..last of rt. The
// reported position (or -1 for none) weighs the attribution; each channel's
// chance to be the first to fail weighs the rest. Channels before the
// first candidate carried their amounts.
func (r *probRouter) blame(rt *route.Route, first, last, reported int, now time.Time) {
	if reported > 0 && trusted() {
		first, last = reported, reported
	}
	weights := r.failureWeights(rt, first, last, reported, now)
	r.learnPassed(rt, first, now)
	for j := first; j <= last; j++ {
		if weights[j-first] <= 0 {
			continue
		}
		e, amt := r.hop(rt, j)
		if e == nil {
			continue
		}
		k := dirKey(e.scid, e.fromNode1)
		beliefOf(e.scid, e.capacity, now).cannotHave(e.fromNode1, amt+r.held[k], weights[j-first])
	}
}

// failureWeights is the posterior that channel j (first ≤ j ≤ last) failed
// the shard: the attribution's word times the chance that j is the first
// channel of the route that could not carry its amount.
func (r *probRouter) failureWeights(rt *route.Route, first, last, reported int, now time.Time) []float64 {
	w := make([]float64, last-first+1)
	passed, total := 1.0, 0.0
	for j := 1; j <= last; j++ {
		e, amt := r.hop(rt, j)
		p := 0.5
		if e != nil {
			p = r.hopProb(e, amt, now)
		}
		if j >= first {
			w[j-first] = attributionWeight(j, reported) * passed * math.Max(1-p, 1e-3)
			total += w[j-first]
		}
		passed *= math.Max(p, 1e-3)
	}
	for i := range w {
		if total > 0 {
			w[i] /= total
		}
	}
	return w
}

// attributionWeight is how likely a failure at channel j is reported at
// position reported (-1: unreadable, no position).
func attributionWeight(j, reported int) float64 {
	switch {
	case reported < 0 || j == reported:
		return 1 - 2*shiftShare
	default:
		return shiftShare
	}
}

// learnPassed records that channels 1..upto-1 of rt carried their amounts.
func (r *probRouter) learnPassed(rt *route.Route, upto int, now time.Time) {
	for j := 1; j < upto && j < len(rt.Hops); j++ {
		if e, amt := r.hop(rt, j); e != nil {
			k := dirKey(e.scid, e.fromNode1)
			beliefOf(e.scid, e.capacity, now).mustHave(e.fromNode1, amt+r.held[k])
		}
	}
}

// hop is channel j of rt (j ≥ 1) and the amount it carries.
func (r *probRouter) hop(rt *route.Route, j int) (*edge, float64) {
	e := graph.edgeInto(graph.index[rt.Hops[j].PubKeyBytes], rt.Hops[j].ChannelID)
	return e, float64(rt.Hops[j-1].AmtToForward)
}

// refreshRoute re-reads the policies of rt's channels, which the failure's
// channel update may have changed, and returns the first channel whose
// policy changed (0 if none): the one that truly failed.
func (r *probRouter) refreshRoute(rt *route.Route) int {
	changed := 0
	for j := 1; j < len(rt.Hops); j++ {
		v := graph.index[rt.Hops[j].PubKeyBytes]
		before := graph.edgeInto(v, rt.Hops[j].ChannelID)
		var old routing.CachedEdgePolicy
		if before != nil && before.policy != nil {
			old = *before.policy
		}
		graph.refresh(v)
		after := graph.edgeInto(v, rt.Hops[j].ChannelID)
		if changed == 0 && after != nil && after.policy != nil && *after.policy != old {
			changed = j
		}
	}
	return changed
}

// ---------------------------------------------------------------------------
// Feasibility: a payment that cannot complete should stop before it spends
// more of the sender's liquidity on parts that will never count.

// feasible reports whether the rest of the payment (amt plus what is in
// flight) fits under the max flow the router's sure bounds allow. Only
// certain knowledge goes into it (up to forgetting), so a payment it stops
// could hardly have completed; without atomic MPP, whatever arrives of a
// payment that fails is spent for nothing.
func (r *probRouter) feasible(amt lnwire.MilliSatoshi) bool {
	if r.upperBoundStale {
		r.upperBound = graph.flow.maxFlow(r.upperCapacity, r.source, r.target)
		r.upperBoundStale = false
	}
	return float64(amt+r.inFlightAmt) <= r.upperBound
}

// upperCapacity is what edge e can at most carry now, for sure. Where
// balances drift, "for sure" fades faster than the beliefs used for routing:
// a payment given up for a stale bound is lost for certain.
func (r *probRouter) upperCapacity(e *edge) float64 {
	return r.capacityOf(e, func(b *belief) float64 {
		lo, hi := b.lo, b.hi
		if decaying() {
			f := math.Exp2(-r.view.Now().Sub(b.seen).Minutes() / boundHalfLifeMin)
			lo, hi = lo*f, e.capacity-(e.capacity-hi)*f
		}
		if e.fromNode1 {
			return hi
		}
		return e.capacity - lo
	})
}

// capacityOf is what e can carry: the sender's own balance, nothing over a
// disabled channel, else what the belief says less what our shards hold.
func (r *probRouter) capacityOf(e *edge, fromBelief func(b *belief) float64) float64 {
	if e.from == r.source {
		return float64(r.local[e.scid])
	}
	if e.policy == nil || e.policy.IsDisabled {
		return 0
	}
	b, ok := beliefs[e.scid]
	if !ok {
		b = &belief{capacity: e.capacity, hi: e.capacity, sHi: e.capacity}
	} else {
		b.age(r.view.Now())
	}
	return fromBelief(b) - r.held[dirKey(e.scid, e.fromNode1)]
}

// flowNet is the graph as a flow network. Arc 2k runs along channel
// direction k, arc 2k+1 is its residual; each arc pair points back at the
// graph edge (node, index in its in-list) it stands for.
type flowNet struct {
	head   []int32
	next   []int32
	to     []int32
	cap    []float64
	owner  []int32 // node whose in-list holds the edge of the pair
	index  []int32 // the edge's position in that list
	level  []int32
	cursor []int32
}

func newFlowNet(g *graphCache) *flowNet {
	f := &flowNet{head: make([]int32, len(g.nodes))}
	for i := range f.head {
		f.head[i] = -1
	}
	for v := range g.in {
		for i, e := range g.in[v] {
			f.addArc(e.from, int32(v))
			f.addArc(int32(v), e.from)
			f.owner = append(f.owner, int32(v))
			f.index = append(f.index, int32(i))
		}
	}
	f.cap = make([]float64, len(f.to))
	f.level = make([]int32, len(g.nodes))
	f.cursor = make([]int32, len(g.nodes))
	return f
}

func (f *flowNet) addArc(from, to int32) {
	f.to = append(f.to, to)
	f.next = append(f.next, f.head[from])
	f.head[from] = int32(len(f.to) - 1)
}

// maxFlow is the max flow from s to t under the capacities given (Dinic's
// algorithm).
func (f *flowNet) maxFlow(capacity func(e *edge) float64, s, t int32) float64 {
	for k := range f.owner {
		c := 0.0
		if list := graph.in[f.owner[k]]; int(f.index[k]) < len(list) {
			c = math.Max(0, capacity(&list[f.index[k]]))
		}
		f.cap[2*k], f.cap[2*k+1] = c, 0
	}
	total := 0.0
	for f.levels(s, t) {
		copy(f.cursor, f.head)
		for {
			pushed := f.augment(s, t, math.Inf(1))
			if pushed <= 0 {
				break
			}
			total += pushed
		}
	}
	return total
}

// levels numbers nodes by distance from s over arcs with room; false when t
// is out of reach.
func (f *flowNet) levels(s, t int32) bool {
	for i := range f.level {
		f.level[i] = -1
	}
	f.level[s] = 0
	queue := []int32{s}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for a := f.head[u]; a >= 0; a = f.next[a] {
			if v := f.to[a]; f.cap[a] > 1 && f.level[v] < 0 {
				f.level[v] = f.level[u] + 1
				queue = append(queue, v)
			}
		}
	}
	return f.level[t] >= 0
}

// augment pushes up to limit from u toward t along the level graph.
func (f *flowNet) augment(u, t int32, limit float64) float64 {
	if u == t {
		return limit
	}
	for ; f.cursor[u] >= 0; f.cursor[u] = f.next[f.cursor[u]] {
		a := f.cursor[u]
		v := f.to[a]
		if f.cap[a] <= 1 || f.level[v] != f.level[u]+1 {
			continue
		}
		if pushed := f.augment(v, t, math.Min(limit, f.cap[a])); pushed > 0 {
			f.cap[a] -= pushed
			f.cap[a^1] += pushed
			return pushed
		}
	}
	return 0
}
