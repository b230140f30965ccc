package oracle

import (
	"container/heap"
	"math"
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
	q := &pqueue{{node: s}}
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
// edges, each with the value it carries, largest first among equals in
// discovery order.
func (f *flowNet) paths(s, t int) []flowPath {
	flow := make([]int64, len(f.arcs))
	for i := 0; i < len(f.arcs); i += 2 {
		flow[i] = f.arcs[i+1].cap // the twin's capacity is the flow sent
	}
	var out []flowPath
	for {
		var edges []int
		var arcsUsed []int
		seen := map[int]bool{s: true}
		v, value := s, int64(math.MaxInt64)
		for v != t {
			next := -1
			for _, ai := range f.out[v] {
				if ai%2 == 0 && flow[ai] > 0 && !seen[f.arcs[ai].to] {
					next = ai
					break
				}
			}
			if next < 0 {
				return out
			}
			arcsUsed = append(arcsUsed, next)
			edges = append(edges, f.arcs[next].edge)
			value = min(value, flow[next])
			v = f.arcs[next].to
			seen[v] = true
		}
		for _, ai := range arcsUsed {
			flow[ai] -= value
		}
		out = append(out, flowPath{edges: edges, value: value})
	}
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

type pqueue []item

func (q pqueue) Len() int { return len(q) }
func (q pqueue) Less(i, j int) bool {
	if q[i].dist != q[j].dist {
		return q[i].dist < q[j].dist
	}
	return q[i].node < q[j].node
}
func (q pqueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *pqueue) Push(x any)   { *q = append(*q, x.(item)) }
func (q *pqueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
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
		q := &widthQueue{{node: s, width: width[s]}}
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

// widthQueue pops the widest first, the cheapest among equals.
type widthQueue []widthItem

func (q widthQueue) Len() int { return len(q) }
func (q widthQueue) Less(i, j int) bool {
	if q[i].width != q[j].width {
		return q[i].width > q[j].width
	}
	if q[i].cost != q[j].cost {
		return q[i].cost < q[j].cost
	}
	return q[i].node < q[j].node
}
func (q widthQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *widthQueue) Push(x any)   { *q = append(*q, x.(widthItem)) }
func (q *widthQueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}
