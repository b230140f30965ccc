package routekit

import (
	"math"

	"github.com/routesim-evolve/routesim/internal/flownet"
)

// Capacity is what an edge can carry in a flow, in msat; ≤ 0 closes it.
type Capacity func(e *Edge) float64

// flowNet is the graph as a flow network (flownet's Dinic, on reals): arc
// pair k stands for the graph edge at index[k] of owner[k]'s in-list.
type flowNet struct {
	net   *flownet.Network[float64]
	owner []NodeID
	index []int32
}

func newFlowNet(g *Graph) *flowNet {
	f := &flowNet{net: flownet.NewNetwork[float64](g.NumNodes())}
	f.net.Dust = 1 // amounts below 1 msat are ignored
	for v := range g.in {
		for i := range g.in[v] {
			f.owner = append(f.owner, NodeID(v))
			f.index = append(f.index, int32(i))
		}
	}
	// The last edge first: Dinic tries each node's arcs in this order, the
	// order the toolkit's bounds have always been computed in.
	for k := len(f.owner) - 1; k >= 0; k-- {
		v := f.owner[k]
		f.net.AddArc(int(g.in[v][f.index[k]].From), int(v), 0, 0, k)
	}
	return f
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
	f.net.Reset(func(k int) float64 {
		if list := g.in[f.owner[k]]; int(f.index[k]) < len(list) {
			return capacity(&list[f.index[k]])
		}
		return 0
	})
	return f.net.MaxFlow(int(s), int(t), limit)
}
