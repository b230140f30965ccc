package sim

import (
	"math"

	"github.com/routesim-evolve/routesim/internal/flownet"
	"github.com/routesim-evolve/routesim/internal/pq"
	"github.com/routesim-evolve/routesim/internal/saturating"
)

// Graph algorithms over the true network for the feasible bound. A channel
// direction is indexed 2·channel+d: from c.nodes[d] to c.nodes[1-d].

// boundGraph is what the bound's searches read, laid out flat once per
// network and sender: the actual policies never change once the world is
// drawn, and every payment's bound searches the whole graph six times, so
// the searches read small arrays instead of channels and their policies.
type boundGraph struct {
	source int
	adj    [][]adjacentDir // per node, each channel at it
	tail   []int32         // by direction: the node it leaves
	head   []int32         // by direction: the node it enters
	own    []bool          // by direction: leaves the sender
	// forwards: an enabled actual policy, or the sender's own channel.
	forwards []bool
	minHTLC  []uint64
	// What a direction adds to a route when it is not the first hop: the
	// sender charges itself no fee and no delta.
	delta, base, rate []uint64
}

// adjacentDir is one channel at a node: the direction leaving it, the one
// entering it, and the node at its other end.
type adjacentDir struct {
	out, in int32
	next    int32
}

// boundGraph builds the flat graph on first use.
func (n *Network) boundGraph(source int) *boundGraph {
	if n.bg != nil && n.bg.source == source {
		return n.bg
	}
	dirs := 2 * len(n.channels)
	g := &boundGraph{
		source: source, adj: make([][]adjacentDir, len(n.nodes)),
		tail: make([]int32, dirs), head: make([]int32, dirs), own: make([]bool, dirs),
		forwards: make([]bool, dirs), minHTLC: make([]uint64, dirs),
		delta: make([]uint64, dirs), base: make([]uint64, dirs), rate: make([]uint64, dirs),
	}
	for node, channels := range n.adjacent {
		for _, ci := range channels {
			d := n.channels[ci].direction(node)
			g.adj[node] = append(g.adj[node], adjacentDir{out: int32(2*ci + d),
				in: int32(2*ci + 1 - d), next: int32(n.channels[ci].nodes[1-d])})
		}
	}
	discounts := n.inboundDiscounts()
	for dir := 0; dir < dirs; dir++ {
		c := &n.channels[dir/2]
		g.tail[dir], g.head[dir] = int32(c.nodes[dir%2]), int32(c.nodes[1-dir%2])
		g.own[dir] = c.nodes[dir%2] == source
		g.forwards[dir] = n.forwards(dir, source)
		if p := c.actual[dir%2]; p != nil {
			g.minHTLC[dir] = uint64(p.MinHTLC)
			if !g.own[dir] {
				g.delta[dir], g.base[dir] = uint64(p.TimeLockDelta), uint64(p.FeeBaseMSat)
				g.rate[dir] = uint64(p.FeeProportionalMillionths)
			}
			if discounts[c.nodes[dir%2]] {
				// An inbound discount can take the hop's fee down to 0
				// (routing.HopFee): no fee of it is sure.
				g.base[dir], g.rate[dir] = 0, 0
			}
		}
	}
	n.bg = g
	return g
}

// inboundDiscounts marks the nodes that announce a negative inbound fee on
// some channel of theirs.
func (n *Network) inboundDiscounts() []bool {
	out := make([]bool, len(n.nodes))
	for i := range n.channels {
		c := &n.channels[i]
		for d, p := range c.actual {
			if p != nil && (p.InboundFeeBaseMSat < 0 || p.InboundFeeRate < 0) {
				out[c.nodes[d]] = true
			}
		}
	}
	return out
}

// distances is the least total weight of a path of usable directions from
// node (reverse: to node), per node; MaxUint64 where there is none. A nil
// weight counts hops, by breadth-first search.
func (g *boundGraph) distances(node int, reverse bool, usable []bool, weight []uint64) []uint64 {
	dist := make([]uint64, len(g.adj))
	for i := range dist {
		dist[i] = math.MaxUint64
	}
	dist[node] = 0
	step := func(a adjacentDir) int32 {
		if reverse {
			return a.in
		}
		return a.out
	}
	if weight == nil {
		queue := []int32{int32(node)}
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			for _, a := range g.adj[u] {
				if usable[step(a)] && dist[a.next] == math.MaxUint64 {
					dist[a.next] = dist[u] + 1
					queue = append(queue, a.next)
				}
			}
		}
		return dist
	}
	pq.Dijkstra(node, dist, func(u int, du uint64, reach func(int, uint64) bool) {
		for _, a := range g.adj[u] {
			if dir := step(a); usable[dir] {
				reach(int(a.next), saturating.Add(du, weight[dir]))
			}
		}
	})
	return dist
}

// flowNet is the network as a flow network, an arc per channel direction
// (the arc's Edge the direction's index), each with capacity(dir). A
// channel's two directions are separate arcs, each holding what its end can
// send, so a cut counts the direction that crosses it, as the bound's
// argument does (bound.go). The arcs are built once per network and their
// capacities set anew for each solve: the bound solves one or more flows
// per payment.
func (n *Network) flowNet(capacity func(dir int) uint64) *flownet.Net {
	if n.flow == nil {
		n.flow = flownet.New(len(n.nodes))
		for ci := range n.channels {
			c := &n.channels[ci]
			for d := 0; d < 2; d++ {
				n.flow.AddArc(c.nodes[d], c.nodes[1-d], 0, 0, 2*ci+d)
			}
		}
	}
	n.flow.Reset(func(dir int) int64 { return int64(min(capacity(dir), math.MaxInt64)) })
	return n.flow
}

// maxFlow is the largest flow from s to t, up to want, with direction dir
// carrying at most capacity(dir).
func (n *Network) maxFlow(s, t int, want uint64, capacity func(dir int) uint64) uint64 {
	if s < 0 || t < 0 || s == t || want == 0 {
		return 0
	}
	return uint64(n.flowNet(capacity).MaxFlow(s, t, int64(min(want, math.MaxInt64))))
}
