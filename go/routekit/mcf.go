package routekit

import (
	"math"
	"sort"

	"github.com/lightningnetwork/lnd/lnwire"

	"github.com/routesim-evolve/routesim/internal/flownet"
)

// Piece is one linear piece of an edge's convex flow cost: the next Width
// msat of flow over the edge cost Slope per msat each.
type Piece struct {
	Width, Slope float64
}

// PieceCost gives the pieces of e's cost in order of flow, slopes not
// decreasing (a convex cost); none leaves e out of the flow.
type PieceCost func(e *Edge) []Piece

// FlowQuery asks for the cheapest flow of Amount from Source to Target.
type FlowQuery struct {
	Source, Target NodeID

	// Amount is what the flow must carry.
	Amount lnwire.MilliSatoshi

	// Units is how many units the amount is cut into (0: DefaultUnits):
	// more is finer and slower.
	Units int

	// MaxParts caps the number of paths the flow is decomposed into
	// (0: no cap).
	MaxParts int

	// Exclude names channels the flow may not use.
	Exclude map[uint64]bool

	// Cost prices the flow over each edge.
	Cost PieceCost
}

// DefaultUnits is the flow's default resolution: 1/200 of the amount.
const DefaultUnits = 200

// unitsOr is the resolution a flow asks for with n units: n, or
// DefaultUnits when n is not positive.
func unitsOr(n int) int {
	if n > 0 {
		return n
	}
	return DefaultUnits
}

// FlowPart is one path of a flow and the amount it carries to the target.
type FlowPart struct {
	Edges  []*Edge
	Amount lnwire.MilliSatoshi
}

// costScale turns a cost per unit of flow into an integer: a route's whole
// cost is a few units of −ln P, and a unit is a small share of it.
const costScale = 1e9

// maxUnitCost caps the cost of one unit over one arc, so that no path's cost
// overflows.
const maxUnitCost = 1e15

// mcfNet is the flow network of one min-cost flow over edges whose cost is
// convex piecewise linear. An edge is one arc forward (priced at the piece
// its flow is in) and one backward (undoing the last piece used), rather
// than an arc per piece: the search relaxes a fifth of the arcs.
type mcfNet struct {
	edges      []*Edge
	flow       []int64
	pieceStart []int32 // edge k's pieces are pieceStart[k]..pieceStart[k+1]-1
	pieceCum   []int64 // units carried up to the end of each piece
	pieceCost  []int64 // cost per unit in each piece
	outStart   []int32 // CSR of edges leaving each node
	outEdges   []int32
	inStart    []int32 // CSR of edges entering each node
	inEdges    []int32
}

// forward is the cost of one more unit over edge k and how many units go
// at that cost; 0 units when k is full.
func (n *mcfNet) forward(k int32) (cost, room int64) {
	f := n.flow[k]
	for j := n.pieceStart[k]; j < n.pieceStart[k+1]; j++ {
		if n.pieceCum[j] > f {
			return n.pieceCost[j], n.pieceCum[j] - f
		}
	}
	return 0, 0
}

// backward is the saving of one unit less over edge k and how many units go
// at that saving; 0 units when k carries nothing.
func (n *mcfNet) backward(k int32) (cost, room int64) {
	f := n.flow[k]
	if f == 0 {
		return 0, 0
	}
	for j := n.pieceStart[k]; j < n.pieceStart[k+1]; j++ {
		if n.pieceCum[j] >= f {
			prev := int64(0)
			if j > n.pieceStart[k] {
				prev = n.pieceCum[j-1]
			}
			return -n.pieceCost[j], f - prev
		}
	}
	return 0, 0
}

// MinCostFlow finds a least-cost flow of q.Amount under q.Cost (successive
// shortest paths with Johnson potentials on integer units) and decomposes
// it into paths. With q.MaxParts set, edges that cannot carry half of an
// average part are left out; a flow of more paths than q.MaxParts is found
// again without those that cannot carry a whole average part, and the
// largest MaxParts paths are kept, taking what their edges can of the rest.
// The parts' amounts sum to at most q.Amount: less when the network (as
// Cost describes it) cannot carry it all.
func (g *Graph) MinCostFlow(q *FlowQuery) []FlowPart {
	units := unitsOr(q.Units)
	unit := float64(q.Amount) / float64(units)
	if unit < 1 || q.Source == q.Target {
		return nil
	}
	minPart := func(share float64) float64 {
		if q.MaxParts <= 0 {
			return unit
		}
		return max(unit, share*float64(q.Amount)/float64(q.MaxParts))
	}
	costs := g.pieces(q, unit, minPart(0.5))
	var best []FlowPart
	for _, share := range []float64{0.5, 1} {
		n := g.build(costs, unit, minPart(share))
		sent := n.solve(q.Source, q.Target, int64(units))
		parts := n.decompose(q.Source, q.Target)
		kept := n.trim(parts, q, unit, sent == int64(units))
		if best == nil || carried(kept) > carried(best) {
			best = kept
		}
		if q.MaxParts <= 0 || len(parts) <= q.MaxParts || sent == 0 {
			break
		}
	}
	return best
}

// carried is what the parts deliver together.
func carried(parts []FlowPart) lnwire.MilliSatoshi {
	total := lnwire.MilliSatoshi(0)
	for _, p := range parts {
		total += p.Amount
	}
	return total
}

// edgePieces is an edge's cost and its total width.
type edgePieces struct {
	e      *Edge
	pieces []Piece
	width  float64
}

// pieces asks q.Cost for the pieces of every edge that could carry
// minWidth (at least a unit).
func (g *Graph) pieces(q *FlowQuery, unit, minWidth float64) []edgePieces {
	var out []edgePieces
	for v := range g.in {
		for i := range g.in[v] {
			e := &g.in[v][i]
			if q.Exclude[e.ChannelID] || e.To == q.Source || e.From == q.Target ||
				float64(e.Capacity) < minWidth {
				continue
			}
			pieces := q.Cost(e)
			width := 0.0
			for _, pc := range pieces {
				width += pc.Width
			}
			if width >= max(unit, minWidth) {
				out = append(out, edgePieces{e: e, pieces: pieces, width: width})
			}
		}
	}
	return out
}

// build makes the flow network in units of unit msat, without the edges
// narrower than minWidth. Each piece's width is rounded to whole units on
// the running total, so that narrow pieces merge rather than vanish.
func (g *Graph) build(costs []edgePieces, unit, minWidth float64) *mcfNet {
	n := &mcfNet{pieceStart: []int32{0}}
	outDeg := make([]int32, g.NumNodes()+1)
	inDeg := make([]int32, g.NumNodes()+1)
	for _, c := range costs {
		if c.width < minWidth || int64(c.width/unit) <= 0 {
			continue
		}
		cum := 0.0
		for _, pc := range c.pieces {
			cum += pc.Width
			units := int64(cum / unit)
			last := len(n.pieceCum) - 1
			if units <= 0 || (last >= int(n.pieceStart[len(n.pieceStart)-1]) && units <= n.pieceCum[last]) {
				continue
			}
			n.pieceCum = append(n.pieceCum, units)
			n.pieceCost = append(n.pieceCost,
				int64(math.Min(math.Max(pc.Slope, 0)*unit*costScale, maxUnitCost)))
		}
		n.pieceStart = append(n.pieceStart, int32(len(n.pieceCum)))
		n.edges = append(n.edges, c.e)
		outDeg[c.e.From+1]++
		inDeg[c.e.To+1]++
	}
	n.flow = make([]int64, len(n.edges))
	for v := 1; v < len(outDeg); v++ {
		outDeg[v] += outDeg[v-1]
		inDeg[v] += inDeg[v-1]
	}
	n.outStart, n.inStart = outDeg, inDeg
	n.outEdges = make([]int32, len(n.edges))
	n.inEdges = make([]int32, len(n.edges))
	outFill := append([]int32(nil), outDeg...)
	inFill := append([]int32(nil), inDeg...)
	for k, e := range n.edges {
		n.outEdges[outFill[e.From]] = int32(k)
		outFill[e.From]++
		n.inEdges[inFill[e.To]] = int32(k)
		inFill[e.To]++
	}
	return n
}

// solve sends up to want units from s to t, each augmentation along the
// cheapest residual path, so the flow is of least cost for its value.
func (n *mcfNet) solve(s, t NodeID, want int64) int64 {
	nodes := len(n.outStart) - 1
	potential := make([]int64, nodes)
	dist := make([]int64, nodes)
	via := make([]int32, nodes) // edge k forward, ^k backward
	done := make([]bool, nodes)
	for v := range dist {
		dist[v] = math.MaxInt64
	}
	var touched []NodeID
	q := &queue[int64]{}
	sent := int64(0)
	for sent < want {
		for _, v := range touched {
			dist[v], done[v] = math.MaxInt64, false
		}
		touched = append(touched[:0], s)
		dist[s] = 0
		q.reset()
		q.push(s, 0)
		relax := func(u, v NodeID, cost int64, arc int32) {
			nd := dist[u] + cost + potential[u] - potential[v]
			if nd < dist[v] {
				if dist[v] == math.MaxInt64 {
					touched = append(touched, v)
				}
				dist[v], via[v] = nd, arc
				q.push(v, nd)
			}
		}
		for q.len() > 0 {
			u, d := q.pop()
			if done[u] || d > dist[u] {
				continue
			}
			done[u] = true
			if u == t {
				break
			}
			for _, k := range n.outEdges[n.outStart[u]:n.outStart[u+1]] {
				if cost, room := n.forward(k); room > 0 {
					relax(u, n.edges[k].To, cost, k)
				}
			}
			for _, k := range n.inEdges[n.inStart[u]:n.inStart[u+1]] {
				if cost, room := n.backward(k); room > 0 {
					relax(u, n.edges[k].From, cost, ^k)
				}
			}
		}
		if !done[t] {
			break
		}
		// Early exit: nodes not settled take dist[t], which keeps every
		// reduced cost non-negative.
		for v := range potential {
			if done[v] {
				potential[v] += dist[v]
			} else {
				potential[v] += dist[t]
			}
		}
		push := want - sent
		for v := t; v != s; {
			k := via[v]
			if k >= 0 {
				_, room := n.forward(k)
				push, v = min(push, room), n.edges[k].From
			} else {
				_, room := n.backward(^k)
				push, v = min(push, room), n.edges[^k].To
			}
		}
		for v := t; v != s; {
			if k := via[v]; k >= 0 {
				n.flow[k] += push
				v = n.edges[k].From
			} else {
				n.flow[^k] -= push
				v = n.edges[^k].To
			}
		}
		sent += push
	}
	return sent
}

// FlowArc is an arc carrying Units of a flow from From to To.
type FlowArc = flownet.FlowArc

// UnitPath is one path of a decomposed flow: the indices of its arcs and
// the units it carries.
type UnitPath = flownet.UnitPath

// Decompose splits a flow from s to t into paths. Each path walks from s
// along, at every node, the first arc (in the order of arcs) that still
// carries flow to a node not yet on the path, and carries the least flow
// left on its arcs; the first walk that cannot reach t ends the split.
func Decompose(arcs []FlowArc, s, t NodeID) []UnitPath {
	return flownet.Decompose(arcs, s, t)
}

// decompose splits the flow into s-t paths over edge indices.
func (n *mcfNet) decompose(s, t NodeID) []UnitPath {
	var arcs []FlowArc
	var edge []int32 // arc → edge index, ascending
	for k, f := range n.flow {
		if f > 0 {
			arcs = append(arcs, FlowArc{From: n.edges[k].From, To: n.edges[k].To, Units: f})
			edge = append(edge, int32(k))
		}
	}
	paths := Decompose(arcs, s, t)
	for _, p := range paths {
		for i, a := range p.Arcs {
			p.Arcs[i] = edge[a]
		}
	}
	return paths
}

// trim keeps at most q.MaxParts paths, the largest, and moves onto them
// what their edges' remaining room allows of the others' flow.
func (n *mcfNet) trim(parts []UnitPath, q *FlowQuery, unit float64, whole bool) []FlowPart {
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].Units > parts[j].Units })
	rest := int64(0)
	if q.MaxParts > 0 && len(parts) > q.MaxParts {
		for _, p := range parts[q.MaxParts:] {
			rest += p.Units
		}
		parts = parts[:q.MaxParts]
		room := n.room(parts)
		for i := range parts {
			extra := min(rest, room(parts[i]))
			parts[i].Units += extra
			rest -= extra
		}
	}
	out := make([]FlowPart, len(parts))
	total := lnwire.MilliSatoshi(0)
	for i, p := range parts {
		edges := make([]*Edge, len(p.Arcs))
		for j, k := range p.Arcs {
			edges[j] = n.edges[k]
		}
		out[i] = FlowPart{Edges: edges, Amount: lnwire.MilliSatoshi(float64(p.Units) * unit)}
		total += out[i].Amount
	}
	if len(out) > 0 && whole && rest == 0 && total < q.Amount {
		out[0].Amount += q.Amount - total // rounding of the units
	}
	return out
}

// room returns, for a kept path, how many more units its edges could carry
// on top of the kept paths, and reserves them as it answers.
func (n *mcfNet) room(kept []UnitPath) func(p UnitPath) int64 {
	free := map[int32]int64{}
	for _, p := range kept {
		for _, k := range p.Arcs {
			free[k] = n.pieceCum[n.pieceStart[k+1]-1] // capacity of the pieces
		}
	}
	for _, p := range kept {
		for _, k := range p.Arcs {
			free[k] -= p.Units
		}
	}
	return func(p UnitPath) int64 {
		r := int64(math.MaxInt64)
		for _, k := range p.Arcs {
			r = min(r, free[k])
		}
		r = max(r, 0)
		for _, k := range p.Arcs {
			free[k] -= r
		}
		return r
	}
}
