// Package flownet is the flow network the trusted side of the simulator
// solves on: the feasible bound of every payment (package sim) and the
// oracle's plans. Capacities and costs are integers
// (msat and ppm); arcs come in pairs, an arc and its residual twin.
package flownet

import (
	"math"

	"github.com/routesim-evolve/routesim/internal/pq"
	"github.com/routesim-evolve/routesim/internal/sat"
	"github.com/routesim-evolve/routesim/routekit"
)

// Arc is one direction of a flow network edge; arcs come in pairs, an arc
// at an even index and its residual twin at index^1, whose capacity is the
// flow the arc carries.
type Arc struct {
	To   int
	Cap  int64 // residual capacity
	Cost int64 // per unit of flow
	Edge int   // the caller's index of the edge it stands for; -1 on a twin
}

// Net is a flow network. MinCostFlow solves it by successive shortest paths
// with Johnson potentials (each augmentation along the cheapest residual
// path, so the flow is of least cost for every value it reaches), MaxFlow
// by Dinic's algorithm, WidestFlow greedily.
type Net struct {
	Arcs []Arc
	Out  [][]int // arc indices leaving each node
}

// New is an empty network of n nodes.
func New(nodes int) *Net {
	return &Net{Out: make([][]int, nodes)}
}

// AddArc adds an arc and its residual twin.
func (f *Net) AddArc(from, to int, capacity, cost int64, edge int) {
	f.Out[from] = append(f.Out[from], len(f.Arcs))
	f.Arcs = append(f.Arcs, Arc{To: to, Cap: capacity, Cost: cost, Edge: edge})
	f.Out[to] = append(f.Out[to], len(f.Arcs))
	f.Arcs = append(f.Arcs, Arc{To: from, Cap: 0, Cost: -cost, Edge: -1})
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
			cost = sat.Add(cost, sat.Mul(uint64(sent), uint64(f.Arcs[i].Cost)))
		}
	}
	if sent == want {
		return cost, true
	}
	if stuck {
		return cost, false
	}
	return sat.Add(cost, sat.Mul(uint64(want-sent), uint64(last))), true
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
	q := pq.New(byDist)
	q.Push(item{node: s})
	for q.Len() > 0 {
		top := q.Pop()
		if top.dist > dist[top.node] {
			continue
		}
		for _, ai := range f.Out[top.node] {
			a := f.Arcs[ai]
			if a.Cap <= 0 {
				continue
			}
			nd := top.dist + a.Cost + potential[top.node] - potential[a.To]
			if nd < dist[a.To] {
				dist[a.To], via[a.To] = nd, ai
				q.Push(item{node: a.To, dist: nd})
			}
		}
	}
	return true
}

// Paths decomposes the flow on the forward arcs into s-t paths of the
// caller's edges, each with the value it carries, in discovery order
// (routekit's decomposition, the arcs in the order they were added).
func (f *Net) Paths(s, t int) []Path {
	var arcs []routekit.FlowArc
	var edges []int // arc → true edge
	for i := 0; i < len(f.Arcs); i += 2 {
		if sent := f.Flow(i); sent > 0 {
			arcs = append(arcs, routekit.FlowArc{From: routekit.NodeID(f.Arcs[i+1].To),
				To: routekit.NodeID(f.Arcs[i].To), Units: sent})
			edges = append(edges, f.Arcs[i].Edge)
		}
	}
	var out []Path
	for _, p := range routekit.Decompose(arcs, routekit.NodeID(s), routekit.NodeID(t)) {
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

type item struct {
	node int
	dist int64
}

// byDist pops the nearest first, the lowest node among equals.
func byDist(a, b item) bool {
	if a.dist != b.dist {
		return a.dist < b.dist
	}
	return a.node < b.node
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

// MaxFlow sends up to want units from s to t, as much as the capacities
// allow (Dinic's algorithm), and returns the value sent.
func (f *Net) MaxFlow(s, t int, want int64) int64 {
	level := make([]int, len(f.Out))
	cursor := make([]int, len(f.Out))
	sent := int64(0)
	for sent < want && f.levels(s, t, level) {
		clear(cursor)
		for sent < want {
			pushed := f.augment(s, t, want-sent, level, cursor)
			if pushed == 0 {
				break
			}
			sent += pushed
		}
	}
	return sent
}

// levels numbers nodes by their distance from s over arcs with room; false
// when t is out of reach.
func (f *Net) levels(s, t int, level []int) bool {
	for i := range level {
		level[i] = -1
	}
	level[s] = 0
	queue := []int{s}
	for i := 0; i < len(queue); i++ {
		u := queue[i]
		for _, ai := range f.Out[u] {
			if a := f.Arcs[ai]; a.Cap > 0 && level[a.To] < 0 {
				level[a.To] = level[u] + 1
				queue = append(queue, a.To)
			}
		}
	}
	return level[t] >= 0
}

// augment pushes up to limit from u toward t along the level graph;
// cursor[u] is the next of u's arcs to try.
func (f *Net) augment(u, t int, limit int64, level, cursor []int) int64 {
	if u == t {
		return limit
	}
	for ; cursor[u] < len(f.Out[u]); cursor[u]++ {
		ai := f.Out[u][cursor[u]]
		a := f.Arcs[ai]
		if a.Cap <= 0 || level[a.To] != level[u]+1 {
			continue
		}
		if pushed := f.augment(a.To, t, min(limit, a.Cap), level, cursor); pushed > 0 {
			f.Arcs[ai].Cap -= pushed
			f.Arcs[ai^1].Cap += pushed
			return pushed
		}
	}
	return 0
}

// Reset sets every arc's capacity anew, capacity(edge) on an arc (at most 0
// closes it) and none on its twin, so that one network built for a fixed
// topology serves many solves without being built again.
func (f *Net) Reset(capacity func(edge int) int64) {
	for i := 0; i < len(f.Arcs); i += 2 {
		f.Arcs[i].Cap, f.Arcs[i+1].Cap = max(capacity(f.Arcs[i].Edge), 0), 0
	}
}

// Flow is the flow an arc pair carries: its twin's capacity.
func (f *Net) Flow(arc int) int64 { return f.Arcs[arc^1].Cap }
