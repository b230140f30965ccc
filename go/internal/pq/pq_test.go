package pq

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPopsInOrder pushes shuffled values, some repeated, with pops in
// between, and wants every pop to be the least value queued.
func TestPopsInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 10, 1000} {
		q := New(func(a, b int) bool { return a < b })
		var queued []int
		for i := 0; i < n; i++ {
			v := rng.IntN(n/2 + 1)
			q.Push(v)
			queued = append(queued, v)
			if rng.IntN(3) == 0 {
				queued = popLeast(t, q, queued)
			}
		}
		for q.Len() > 0 {
			queued = popLeast(t, q, queued)
		}
		if len(queued) != 0 {
			t.Errorf("n=%d: %d values never popped", n, len(queued))
		}
	}
}

func popLeast(t *testing.T, q *Queue[int], queued []int) []int {
	t.Helper()
	least := slices.Min(queued)
	if got := q.Pop(); got != least {
		t.Fatalf("popped %d, the least queued is %d", got, least)
	}
	i := slices.Index(queued, least)
	return slices.Delete(queued, i, i+1)
}
