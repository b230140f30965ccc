package oracle

import (
	"container/heap"
	"math"

	"github.com/routesim-evolve/routesim/routekit"
)

// arc is one direction of a flow network edge; arcs come in pairs, an arc
// and its residual twin at index^1.
type arc struct {
	to   int
	cap  int64 // residual capacity
	cost int64 // per unit of flow
	edge int   // index of the true edge it stands for; -1 on a residual twin
}

// flowNet is a flow network solved by successive shortest paths with
// Johnson potentials: each augmentation sends flow along the cheapest
// residual path, so the flow is of least cost for every value it reaches.
type flowNet struct {
	arcs []arc
	out  [][]int // arc indices leaving each node
}

func newFlowNet(nodes int) *flowNet {
	return &flowNet{out: make([][]int, nodes)}
}

func (f *flowNet) addArc(from, to int, capacity, cost int64, edge int) {
	f.out[from] = append(f.out[from], len(f.arcs))
	f.arcs = append(f.arcs, arc{to: to, cap: capacity, cost: cost, edge: edge})
	f.out[to] = append(f.out[to], len(f.arcs))
	f.arcs = append(f.arcs, arc{to: from, cap: 0, cost: -cost, edge: -1})
}

// maxAugmentations bounds the work of one plan: a payment's flow rarely
// needs more than a handful of paths.
const maxAugmentations = 400

// minCostFlow sends up to want units from s to t at least cost and returns
// the value sent.
func (f *flowNet) minCostFlow(s, t int, want int64) int64 {
	n := len(f.out)
	potential := make([]int64, n)
	dist := make([]int64, n)
	via := make([]int, n)
	sent := int64(0)
	for round := 0; round < maxAugmentations && sent < want; round++ {
		if !f.shortestPaths(s, potential, dist, via) || dist[t] == math.MaxInt64 {
			break
		}
		for v := range potential {
			if dist[v] < math.MaxInt64 {
				potential[v] += dist[v]
			}
		}
		push := want - sent
		for v := t; v != s; v = f.arcs[via[v]^1].to {
			push = min(push, f.arcs[via[v]].cap)
		}
		for v := t; v != s; v = f.arcs[via[v]^1].to {
			f.arcs[via[v]].cap -= push
			f.arcs[via[v]^1].cap += push
		}
		sent += push
	}
	return sent
}

// shortestPaths runs Dijkstra on reduced costs from s.
func (f *flowNet) shortestPaths(s int, potential, dist []int64, via []int) bool {
	for i := range dist {
		dist[i], via[i] = math.MaxInt64, -1
	}
	dist[s] = 0
	q := &minHeap[item]{items: []item{{node: s}}, less: byDist}
	for q.Len() > 0 {
		top := heap.Pop(q).(item)
		if top.dist > dist[top.node] {
			continue
		}
		for _, ai := range f.out[top.node] {
			a := f.arcs[ai]
			if a.cap <= 0 {
				continue
			}
			nd := top.dist + a.cost + potential[top.node] - potential[a.to]
			if nd < dist[a.to] {
				dist[a.to], via[a.to] = nd, ai
				heap.Push(q, item{node: a.to, dist: nd})
			}
		}
	}
	return true
}

// paths decomposes the flow on the forward arcs into s-t paths of true
// edges, each with the value it carries, in discovery order (routekit's
// decomposition, the arcs in the order they were added).
func (f *flowNet) paths(s, t int) []flowPath {
	var arcs []routekit.FlowArc
	var edges []int // arc → true edge
	for i := 0; i < len(f.arcs); i += 2 {
		if sent := f.arcs[i+1].cap; sent > 0 { // the twin's capacity is the flow sent
			arcs = append(arcs, routekit.FlowArc{From: routekit.NodeID(f.arcs[i+1].to),
				To: routekit.NodeID(f.arcs[i].to), Units: sent})
			edges = append(edges, f.arcs[i].edge)
		}
	}
	var out []flowPath
	for _, p := range routekit.Decompose(arcs, routekit.NodeID(s), routekit.NodeID(t)) {
		path := flowPath{edges: make([]int, len(p.Arcs)), value: p.Units}
		for j, a := range p.Arcs {
			path.edges[j] = edges[a]
		}
		out = append(out, path)
	}
	return out
}

// flowPath is a path of true edges and the flow it carries.
type flowPath struct {
	edges []int
	value int64
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

// minHeap is a container/heap of items, the least under less on top.
type minHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h *minHeap[T]) Len() int           { return len(h.items) }
func (h *minHeap[T]) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *minHeap[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *minHeap[T]) Push(x any)         { h.items = append(h.items, x.(T)) }
func (h *minHeap[T]) Pop() any {
	last := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return last
}

// widestFlow sends up to want units from s to t along at most parts paths,
// each the widest (largest bottleneck) over forward arcs, the cheaper of
// equally wide: few, fat paths, where the least-cost flow would need more
// parts than a payment may send. It returns the value sent.
func (f *flowNet) widestFlow(s, t int, want int64, parts int) int64 {
	sent := int64(0)
	for part := 0; part < parts && sent < want; part++ {
		width := make([]int64, len(f.out))
		cost := make([]int64, len(f.out))
		via := make([]int, len(f.out))
		for i := range via {
			via[i] = -1
		}
		width[s] = want - sent
		q := &minHeap[widthItem]{items: []widthItem{{node: s, width: width[s]}}, less: widestFirst}
		for q.Len() > 0 {
			top := heap.Pop(q).(widthItem)
			if top.width < width[top.node] || (top.width == width[top.node] && top.cost > cost[top.node]) {
				continue
			}
			for _, ai := range f.out[top.node] {
				a := f.arcs[ai]
				if ai%2 != 0 || a.cap <= 0 {
					continue // forward arcs only: no path undoes another
				}
				w, c := min(top.width, a.cap), top.cost+a.cost
				if w > width[a.to] || (w == width[a.to] && via[a.to] >= 0 && c < cost[a.to]) {
					width[a.to], cost[a.to], via[a.to] = w, c, ai
					heap.Push(q, widthItem{node: a.to, width: w, cost: c})
				}
			}
		}
		if width[t] == 0 {
			break
		}
		for v := t; v != s; v = f.arcs[via[v]^1].to {
			f.arcs[via[v]].cap -= width[t]
			f.arcs[via[v]^1].cap += width[t]
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
