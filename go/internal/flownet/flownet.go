// Package flownet is the flow network both sides of the simulator solve
// on, and the one home of its max flow: the feasible bound of every payment
// (package sim) and the oracle's plans on integer msat (Net), and the
// toolkit's bounds on what a router believes (package routekit, on reals).
// It imports nothing of the simulator, the routers or the toolkit, so an
// edit to a candidate's toolkit cannot move the simulator's ceiling.
//
// Arcs come in pairs, an arc and its residual twin.
package flownet

import (
	"math"

	"github.com/routesim-evolve/routesim/internal/pq"
	"github.com/routesim-evolve/routesim/internal/saturating"
)

// Net is the integer network of the simulator's bound and the oracle:
// capacities in msat and costs in ppm. MinCostFlow solves it by successive
// shortest paths with Johnson potentials (each augmentation along the
// cheapest residual path, so the flow is of least cost for every value it
// reaches), MaxFlow by Dinic's algorithm, WidestFlow greedily.
type Net struct {
	Network[int64]
}

// New is an empty integer network of n nodes.
func New(nodes int) *Net {
	return &Net{Network: *NewNetwork[int64](nodes)}
}

// maxAugmentations bounds the work of one plan: a payment's flow rarely
// needs more than a handful of paths.
const maxAugmentations = 400

// MinCostFlow sends up to want units from s to t at least cost and returns
// the value sent.
func (f *Net) MinCostFlow(s, t int, want int64) int64 {
	sent, _, _ := f.minCostFlow(s, t, want)
	return sent
}

// LeastCost is a lower bound on the cost of sending want units from s to t:
// the cost of a least-cost flow, exact when it sends them all. When the
// work bound stops it short, each unit left is costed at the last path's
// cost, which no later path undercuts (successive shortest paths grow in
// cost), so the sum stays a lower bound. Costs are summed saturating.
// complete is false when the network cannot carry want at all.
func (f *Net) LeastCost(s, t int, want int64) (cost uint64, complete bool) {
	sent, last, stuck := f.minCostFlow(s, t, want)
	for i := 0; i < len(f.Arcs); i += 2 {
		if sent := f.Flow(i); sent > 0 && f.Arcs[i].Cost > 0 {
			cost = saturating.Add(cost, saturating.Mul(uint64(sent), uint64(f.Arcs[i].Cost)))
		}
	}
	if sent == want {
		return cost, true
	}
	if stuck {
		return cost, false
	}
	return saturating.Add(cost, saturating.Mul(uint64(want-sent), uint64(last))), true
}

// SetCosts sets every arc's cost per unit, cost(edge) on an arc and its
// negation on its twin.
func (f *Net) SetCosts(cost func(edge int) int64) {
	for i := 0; i < len(f.Arcs); i += 2 {
		c := cost(f.Arcs[i].Edge)
		f.Arcs[i].Cost, f.Arcs[i+1].Cost = c, -c
	}
}

// minCostFlow sends up to want units from s to t at least cost; it returns
// the value sent, the cost of the last path found (-1 when none was), and
// whether it stopped because no path to t was left (not the work bound).
func (f *Net) minCostFlow(s, t int, want int64) (sent, last int64, stuck bool) {
	n := len(f.Out)
	potential := make([]int64, n)
	dist := make([]int64, n)
	via := make([]int, n)
	last = -1
	for round := 0; round < maxAugmentations && sent < want; round++ {
		if !f.shortestPaths(s, potential, dist, via) || dist[t] == math.MaxInt64 {
			return sent, last, true
		}
		for v := range potential {
			if dist[v] < math.MaxInt64 {
				potential[v] += dist[v]
			}
		}
		// With potentials from every earlier search, t's is the cost of
		// this path in the arcs' own costs.
		last = potential[t]
		push := want - sent
		for v := t; v != s; v = f.Arcs[via[v]^1].To {
			push = min(push, f.Arcs[via[v]].Cap)
		}
		for v := t; v != s; v = f.Arcs[via[v]^1].To {
			f.Arcs[via[v]].Cap -= push
			f.Arcs[via[v]^1].Cap += push
		}
		sent += push
	}
	return sent, last, false
}

// shortestPaths runs Dijkstra on reduced costs from s.
func (f *Net) shortestPaths(s int, potential, dist []int64, via []int) bool {
	for i := range dist {
		dist[i], via[i] = math.MaxInt64, -1
	}
	dist[s] = 0
	pq.Dijkstra(s, dist, func(u int, du int64, reach func(int, int64) bool) {
		for _, ai := range f.Out[u] {
			a := f.Arcs[ai]
			if a.Cap > 0 && reach(a.To, du+a.Cost+potential[u]-potential[a.To]) {
				via[a.To] = ai
			}
		}
	})
	return true
}

// Paths decomposes the flow on the forward arcs into s-t paths of the
// caller's edges, each with the value it carries, in discovery order
// (Decompose, the arcs in the order they were added).
func (f *Net) Paths(s, t int) []Path {
	var arcs []FlowArc
	var edges []int // arc → true edge
	for i := 0; i < len(f.Arcs); i += 2 {
		if sent := f.Flow(i); sent > 0 {
			arcs = append(arcs, FlowArc{From: int32(f.Arcs[i+1].To), To: int32(f.Arcs[i].To), Units: sent})
			edges = append(edges, f.Arcs[i].Edge)
		}
	}
	var out []Path
	for _, p := range Decompose(arcs, int32(s), int32(t)) {
		path := Path{Edges: make([]int, len(p.Arcs)), Value: p.Units}
		for j, a := range p.Arcs {
			path.Edges[j] = edges[a]
		}
		out = append(out, path)
	}
	return out
}

// Path is a path of the caller's edges and the flow it carries.
type Path struct {
	Edges []int
	Value int64
}

// WidestFlow sends up to want units from s to t along at most parts paths,
// each the widest (largest bottleneck) over forward arcs, the cheaper of
// equally wide: few, fat paths, where the least-cost flow would need more
// parts than a payment may send. It returns the value sent.
func (f *Net) WidestFlow(s, t int, want int64, parts int) int64 {
	sent := int64(0)
	for part := 0; part < parts && sent < want; part++ {
		width := make([]int64, len(f.Out))
		cost := make([]int64, len(f.Out))
		via := make([]int, len(f.Out))
		for i := range via {
			via[i] = -1
		}
		width[s] = want - sent
		q := pq.New(widestFirst)
		q.Push(widthItem{node: s, width: width[s]})
		for q.Len() > 0 {
			top := q.Pop()
			if top.width < width[top.node] || (top.width == width[top.node] && top.cost > cost[top.node]) {
				continue
			}
			for _, ai := range f.Out[top.node] {
				a := f.Arcs[ai]
				if ai%2 != 0 || a.Cap <= 0 {
					continue // forward arcs only: no path undoes another
				}
				w, c := min(top.width, a.Cap), top.cost+a.Cost
				if w > width[a.To] || (w == width[a.To] && via[a.To] >= 0 && c < cost[a.To]) {
					width[a.To], cost[a.To], via[a.To] = w, c, ai
					q.Push(widthItem{node: a.To, width: w, cost: c})
				}
			}
		}
		if width[t] == 0 {
			break
		}
		for v := t; v != s; v = f.Arcs[via[v]^1].To {
			f.Arcs[via[v]].Cap -= width[t]
			f.Arcs[via[v]^1].Cap += width[t]
		}
		sent += width[t]
	}
	return sent
}

type widthItem struct {
	node        int
	width, cost int64
}

// widestFirst pops the widest first, the cheapest among equals, then the
// lowest node.
func widestFirst(a, b widthItem) bool {
	if a.width != b.width {
		return a.width > b.width
	}
	if a.cost != b.cost {
		return a.cost < b.cost
	}
	return a.node < b.node
}
