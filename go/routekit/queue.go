package routekit

import "cmp"

// queue is a binary min-heap of nodes by key, ties broken by node so that
// every search is deterministic. Stale entries (a node pushed again at a
// lower key) are the caller's to skip.
type queue[K cmp.Ordered] struct {
	nodes []NodeID
	keys  []K
}

func (q *queue[K]) len() int { return len(q.nodes) }

func (q *queue[K]) reset() { q.nodes, q.keys = q.nodes[:0], q.keys[:0] }

func (q *queue[K]) less(i, j int) bool {
	if q.keys[i] != q.keys[j] {
		return q.keys[i] < q.keys[j]
	}
	return q.nodes[i] < q.nodes[j]
}

func (q *queue[K]) swap(i, j int) {
	q.nodes[i], q.nodes[j] = q.nodes[j], q.nodes[i]
	q.keys[i], q.keys[j] = q.keys[j], q.keys[i]
}

// push adds node at key.
func (q *queue[K]) push(node NodeID, key K) {
	q.nodes, q.keys = append(q.nodes, node), append(q.keys, key)
	for i := len(q.nodes) - 1; i > 0; {
		parent := (i - 1) / 2
		if !q.less(i, parent) {
			break
		}
		q.swap(i, parent)
		i = parent
	}
}

// pop removes and returns the node of least key.
func (q *queue[K]) pop() (NodeID, K) {
	node, key := q.nodes[0], q.keys[0]
	last := len(q.nodes) - 1
	q.swap(0, last)
	q.nodes, q.keys = q.nodes[:last], q.keys[:last]
	for i := 0; ; {
		small, l, r := i, 2*i+1, 2*i+2
		if l < last && q.less(l, small) {
			small = l
		}
		if r < last && q.less(r, small) {
			small = r
		}
		if small == i {
			return node, key
		}
		q.swap(i, small)
		i = small
	}
}
