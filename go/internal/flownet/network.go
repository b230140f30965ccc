package flownet

// Amount is what an arc carries: msat as integers (the simulator's bound
// and the oracle) or as reals (the toolkit's bounds on beliefs).
type Amount interface {
	~int64 | ~float64
}

// Arc is one direction of a flow network edge; arcs come in pairs, an arc
// at an even index and its residual twin at index^1, whose capacity is the
// flow the arc carries.
type Arc[T Amount] struct {
	To   int
	Cap  T     // residual capacity
	Cost int64 // per unit of flow
	Edge int   // the caller's index of the edge it stands for; -1 on a twin
}

// Network is a flow network of arc pairs, solved for max flow by Dinic's
// algorithm. A node's arcs are tried in the order they were added.
type Network[T Amount] struct {
	Arcs []Arc[T]
	Out  [][]int // arc indices leaving each node

	// Dust is the most room an arc may have and still count as closed to
	// MaxFlow: 0 on integer msat; the toolkit's real-valued networks set 1,
	// so that amounts below 1 msat are ignored.
	Dust T

	level, cursor, queue []int // MaxFlow's work space, kept between solves
}

// NewNetwork is an empty network of n nodes.
func NewNetwork[T Amount](nodes int) *Network[T] {
	return &Network[T]{Out: make([][]int, nodes)}
}

// AddArc adds an arc and its residual twin.
func (f *Network[T]) AddArc(from, to int, capacity T, cost int64, edge int) {
	f.Out[from] = append(f.Out[from], len(f.Arcs))
	f.Arcs = append(f.Arcs, Arc[T]{To: to, Cap: capacity, Cost: cost, Edge: edge})
	f.Out[to] = append(f.Out[to], len(f.Arcs))
	f.Arcs = append(f.Arcs, Arc[T]{To: from, Cost: -cost, Edge: -1})
}

// Reset sets every arc's capacity anew, capacity(edge) on an arc (at most 0
// closes it) and none on its twin, so that one network built for a fixed
// topology serves many solves without being built again.
func (f *Network[T]) Reset(capacity func(edge int) T) {
	for i := 0; i < len(f.Arcs); i += 2 {
		f.Arcs[i].Cap, f.Arcs[i+1].Cap = max(capacity(f.Arcs[i].Edge), 0), 0
	}
}

// Flow is the flow an arc pair carries: its twin's capacity.
func (f *Network[T]) Flow(arc int) T { return f.Arcs[arc^1].Cap }

// MaxFlow sends up to want units from s to t, as much as the capacities
// allow (Dinic's algorithm), and returns the value sent: the max flow when
// want is more than the network carries, and want as soon as it fits.
func (f *Network[T]) MaxFlow(s, t int, want T) T {
	n := len(f.Out)
	f.level, f.cursor = resize(f.level, n), resize(f.cursor, n)
	var sent T
	for sent < want && f.levels(s, t) {
		clear(f.cursor)
		for sent < want {
			pushed := f.augment(s, t, want-sent)
			if pushed <= 0 {
				break
			}
			sent += pushed
		}
	}
	return sent
}

// levels numbers nodes by their distance from s over arcs with room; false
// when t is out of reach.
func (f *Network[T]) levels(s, t int) bool {
	for i := range f.level {
		f.level[i] = -1
	}
	f.level[s] = 0
	f.queue = append(f.queue[:0], s)
	for i := 0; i < len(f.queue); i++ {
		u := f.queue[i]
		for _, ai := range f.Out[u] {
			if a := f.Arcs[ai]; a.Cap > f.Dust && f.level[a.To] < 0 {
				f.level[a.To] = f.level[u] + 1
				f.queue = append(f.queue, a.To)
			}
		}
	}
	return f.level[t] >= 0
}

// augment pushes up to limit from u toward t along the level graph;
// cursor[u] is the position of the next of u's arcs to try.
func (f *Network[T]) augment(u, t int, limit T) T {
	if u == t {
		return limit
	}
	for ; f.cursor[u] < len(f.Out[u]); f.cursor[u]++ {
		ai := f.Out[u][f.cursor[u]]
		a := f.Arcs[ai]
		if a.Cap <= f.Dust || f.level[a.To] != f.level[u]+1 {
			continue
		}
		if pushed := f.augment(a.To, t, min(limit, a.Cap)); pushed > 0 {
			f.Arcs[ai].Cap -= pushed
			f.Arcs[ai^1].Cap += pushed
			return pushed
		}
	}
	return 0
}

// resize is s with length n, reusing its storage when it can.
func resize(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}
