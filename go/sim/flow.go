package sim

import (
	"container/heap"
	"math"
)

// Graph algorithms over the true network for the feasible bound. A channel
// direction is indexed 2·channel+d: from c.nodes[d] to c.nodes[1-d].

// distances is the least total weight of a path of usable directions from
// node (reverse: to node), per node; MaxUint64 where there is none.
func (n *Network) distances(node int, reverse bool, usable []bool, weight func(dir int) uint64) []uint64 {
	dist := make([]uint64, len(n.nodes))
	for i := range dist {
		dist[i] = math.MaxUint64
	}
	dist[node] = 0
	q := &distQueue{{node: node}}
	for q.Len() > 0 {
		top := heap.Pop(q).(nodeDist)
		if top.dist > dist[top.node] {
			continue
		}
		for _, ci := range n.adjacent[top.node] {
			c := &n.channels[ci]
			// Forward, the direction leaving the node; reverse, the one
			// entering it.
			d := c.direction(top.node)
			if reverse {
				d = 1 - d
			}
			dir := 2*ci + d
			if !usable[dir] {
				continue
			}
			next := c.nodes[1-c.direction(top.node)]
			if nd := addSat64(top.dist, weight(dir)); nd < dist[next] {
				dist[next] = nd
				heap.Push(q, nodeDist{node: next, dist: nd})
			}
		}
	}
	return dist
}

type nodeDist struct {
	node int
	dist uint64
}

// distQueue is a min-heap of nodes by distance.
type distQueue []nodeDist

func (q distQueue) Len() int           { return len(q) }
func (q distQueue) Less(i, j int) bool { return q[i].dist < q[j].dist }
func (q distQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *distQueue) Push(x any)        { *q = append(*q, x.(nodeDist)) }
func (q *distQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// maxFlow is the largest flow from s to t, up to want, with direction dir
// carrying at most capacity(dir) (Dinic's algorithm, exact in msat). A
// channel's two directions are separate arcs, each holding what its end can
// send, so a cut counts the direction that crosses it, as the bound's
// argument does (bound.go).
func (n *Network) maxFlow(s, t int, want uint64, capacity func(dir int) uint64) uint64 {
	if s < 0 || t < 0 || s == t || want == 0 {
		return 0
	}
	f := n.flowNet()
	for dir := range n.channels {
		for d := 0; d < 2; d++ {
			k := 2*dir + d
			f.cap[2*k], f.cap[2*k+1] = capacity(k), 0
		}
	}
	total := uint64(0)
	for total < want && f.levels(s, t) {
		copy(f.cursor, f.head)
		for total < want {
			pushed := f.augment(s, t, want-total)
			if pushed == 0 {
				break
			}
			total += pushed
		}
	}
	return total
}

// flowNet is the network as arcs for Dinic's algorithm: arc 2k runs along
// direction k, arc 2k+1 is its residual. Built once per network.
type flowNet struct {
	head, next, to       []int32
	cap                  []uint64
	level, cursor, queue []int32
}

func (n *Network) flowNet() *flowNet {
	if n.flow != nil {
		return n.flow
	}
	f := &flowNet{head: make([]int32, len(n.nodes))}
	for i := range f.head {
		f.head[i] = -1
	}
	for ci := range n.channels {
		c := &n.channels[ci]
		for d := 0; d < 2; d++ {
			f.addArc(c.nodes[d], c.nodes[1-d])
			f.addArc(c.nodes[1-d], c.nodes[d])
		}
	}
	f.cap = make([]uint64, len(f.to))
	f.level = make([]int32, len(n.nodes))
	f.cursor = make([]int32, len(n.nodes))
	n.flow = f
	return f
}

func (f *flowNet) addArc(from, to int) {
	f.to = append(f.to, int32(to))
	f.next = append(f.next, f.head[from])
	f.head[from] = int32(len(f.to) - 1)
}

// levels numbers nodes by distance from s over arcs with room; false when t
// is out of reach.
func (f *flowNet) levels(s, t int) bool {
	for i := range f.level {
		f.level[i] = -1
	}
	f.level[s] = 0
	f.queue = append(f.queue[:0], int32(s))
	for i := 0; i < len(f.queue); i++ {
		u := f.queue[i]
		for a := f.head[u]; a >= 0; a = f.next[a] {
			if v := f.to[a]; f.cap[a] > 0 && f.level[v] < 0 {
				f.level[v] = f.level[u] + 1
				f.queue = append(f.queue, v)
			}
		}
	}
	return f.level[t] >= 0
}

// augment pushes up to limit from u toward t along the level graph.
func (f *flowNet) augment(u, t int, limit uint64) uint64 {
	if u == t {
		return limit
	}
	for ; f.cursor[u] >= 0; f.cursor[u] = f.next[f.cursor[u]] {
		a := f.cursor[u]
		v := int(f.to[a])
		if f.cap[a] == 0 || f.level[v] != f.level[u]+1 {
			continue
		}
		if pushed := f.augment(v, t, min(limit, f.cap[a])); pushed > 0 {
			f.cap[a] -= pushed
			f.cap[a^1] += pushed
			return pushed
		}
	}
	return 0
}
