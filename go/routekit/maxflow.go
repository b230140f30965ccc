package routekit

import "math"

// Capacity is what an edge can carry in a flow, in msat; ≤ 0 closes it.
type Capacity func(e *Edge) float64

// flowNet is the graph as a flow network for Dinic's algorithm. Arc 2k runs
// along edge k, arc 2k+1 is its residual; each arc pair points back at the
// graph edge (receiving node, index in its in-list) it stands for.
type flowNet struct {
	head   []int32
	next   []int32
	to     []int32
	cap    []float64
	owner  []NodeID
	index  []int32
	level  []int32
	cursor []int32
	queue  []int32
}

func newFlowNet(g *Graph) *flowNet {
	f := &flowNet{head: make([]int32, g.NumNodes())}
	for i := range f.head {
		f.head[i] = -1
	}
	for v := range g.in {
		for i, e := range g.in[v] {
			f.addArc(e.From, NodeID(v))
			f.addArc(NodeID(v), e.From)
			f.owner = append(f.owner, NodeID(v))
			f.index = append(f.index, int32(i))
		}
	}
	f.cap = make([]float64, len(f.to))
	f.level = make([]int32, g.NumNodes())
	f.cursor = make([]int32, g.NumNodes())
	return f
}

func (f *flowNet) addArc(from, to NodeID) {
	f.to = append(f.to, to)
	f.next = append(f.next, f.head[from])
	f.head[from] = int32(len(f.to) - 1)
}

// MaxFlow is the largest flow from s to t with each edge carrying at most
// capacity(e) (Dinic's algorithm). Amounts below 1 msat are ignored. The
// network is built on the first call; edges a Refresh added later are left
// out until then, which only lowers the bound.
func (g *Graph) MaxFlow(s, t NodeID, capacity Capacity) float64 {
	return g.MaxFlowUpTo(s, t, capacity, math.Inf(1))
}

// MaxFlowUpTo is MaxFlow, but stops once the flow reaches limit: whether an
// amount fits is often settled long before the flow is maximal.
func (g *Graph) MaxFlowUpTo(s, t NodeID, capacity Capacity, limit float64) float64 {
	if g.flow == nil {
		g.flow = newFlowNet(g)
	}
	f := g.flow
	for k := range f.owner {
		c := 0.0
		if list := g.in[f.owner[k]]; int(f.index[k]) < len(list) {
			c = math.Max(0, capacity(&list[f.index[k]]))
		}
		f.cap[2*k], f.cap[2*k+1] = c, 0
	}
	total := 0.0
	for total < limit && f.levels(s, t) {
		copy(f.cursor, f.head)
		for total < limit {
			pushed := f.augment(s, t, limit-total)
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
func (f *flowNet) levels(s, t NodeID) bool {
	for i := range f.level {
		f.level[i] = -1
	}
	f.level[s] = 0
	f.queue = append(f.queue[:0], s)
	for i := 0; i < len(f.queue); i++ {
		u := f.queue[i]
		for a := f.head[u]; a >= 0; a = f.next[a] {
			if v := f.to[a]; f.cap[a] > 1 && f.level[v] < 0 {
				f.level[v] = f.level[u] + 1
				f.queue = append(f.queue, v)
			}
		}
	}
	return f.level[t] >= 0
}

// augment pushes up to limit from u toward t along the level graph.
func (f *flowNet) augment(u, t NodeID, limit float64) float64 {
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
