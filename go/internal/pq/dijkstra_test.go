package pq

import (
	"math"
	"slices"
	"testing"
)

// TestDijkstra checks the distances on a small weighted graph, and that
// among equal distances the lowest node settles first.
func TestDijkstra(t *testing.T) {
	// 0 →(4) 1, 0 →(1) 2, 2 →(2) 1, 1 →(1) 3, 2 →(5) 3; 4 is unreachable.
	adj := [][]struct{ to, w int }{
		{{1, 4}, {2, 1}},
		{{3, 1}},
		{{1, 2}, {3, 5}},
		nil,
		nil,
	}
	dist := []int{0, math.MaxInt, math.MaxInt, math.MaxInt, math.MaxInt}
	var order []int
	Dijkstra(0, dist, func(u, du int, reach func(int, int) bool) {
		order = append(order, u)
		for _, e := range adj[u] {
			reach(e.to, du+e.w)
		}
	})
	if want := []int{0, 3, 1, 4, math.MaxInt}; !slices.Equal(dist, want) {
		t.Errorf("dist %v, want %v", dist, want)
	}
	if want := []int{0, 2, 1, 3}; !slices.Equal(order, want) {
		t.Errorf("settled %v, want %v", order, want)
	}

	// Two nodes at the same distance settle lowest first.
	dist = []int{0, math.MaxInt, math.MaxInt}
	order = nil
	Dijkstra(0, dist, func(u, du int, reach func(int, int) bool) {
		order = append(order, u)
		if u == 0 {
			reach(2, 1)
			reach(1, 1)
		}
	})
	if want := []int{0, 1, 2}; !slices.Equal(order, want) {
		t.Errorf("settled %v, want %v", order, want)
	}
}
