package pq

import "cmp"

// Dijkstra settles the nodes reachable from source in order of distance,
// with lazy deletion: the search both the simulator's bound and flownet's
// least-cost flow run, each over its own graph and weights.
//
// dist holds the best distance found per node: dist[source] set by the
// caller, every other entry larger than any distance (its infinity). For
// each settled node u at distance du, expand offers u's neighbours to
// reach, which lowers dist[v] to d and queues v when d is less, and tells
// whether it did. Among equal distances the lowest node settles first.
func Dijkstra[D cmp.Ordered](source int, dist []D, expand func(u int, du D, reach func(v int, d D) bool)) {
	q := New(func(a, b settled[D]) bool {
		if a.dist != b.dist {
			return a.dist < b.dist
		}
		return a.node < b.node
	})
	reach := func(v int, d D) bool {
		if d >= dist[v] {
			return false
		}
		dist[v] = d
		q.Push(settled[D]{node: v, dist: d})
		return true
	}
	q.Push(settled[D]{node: source, dist: dist[source]})
	for q.Len() > 0 {
		top := q.Pop()
		if top.dist > dist[top.node] {
			continue
		}
		expand(top.node, top.dist, reach)
	}
}

// settled is a node queued at a distance.
type settled[D cmp.Ordered] struct {
	node int
	dist D
}
