package sim

import (
	"math"

	"github.com/routesim-evolve/routesim/internal/flownet"
	"github.com/routesim-evolve/routesim/internal/pq"
	"github.com/routesim-evolve/routesim/internal/sat"
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
	q := pq.New(func(a, b nodeDist) bool { return a.dist < b.dist })
	q.Push(nodeDist{node: node})
	for q.Len() > 0 {
		top := q.Pop()
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
			if nd := sat.Add(top.dist, weight(dir)); nd < dist[next] {
				dist[next] = nd
				q.Push(nodeDist{node: next, dist: nd})
			}
		}
	}
	return dist
}

type nodeDist struct {
	node int
	dist uint64
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
