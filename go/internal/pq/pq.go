// Package pq is a binary min-heap of plain values, and the Dijkstra search
// on it that the simulator and flownet share. Unlike container/heap
// it stores its items unboxed, so a push allocates nothing once the queue
// has grown; on the 2021 mainnet graph the feasible bound pushes millions
// of items a scenario.
package pq

// Queue holds items with the least under less on top. When less is a total
// order, items pop in one order whatever order they were pushed in.
type Queue[T any] struct {
	items []T
	less  func(a, b T) bool
}

// New is an empty queue ordered by less.
func New[T any](less func(a, b T) bool) *Queue[T] {
	return &Queue[T]{less: less}
}

// Len is the number of items queued.
func (q *Queue[T]) Len() int { return len(q.items) }

// Reset empties the queue, keeping its storage.
func (q *Queue[T]) Reset() { q.items = q.items[:0] }

// Push adds x.
func (q *Queue[T]) Push(x T) {
	q.items = append(q.items, x)
	i := len(q.items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !q.less(q.items[i], q.items[parent]) {
			break
		}
		q.items[i], q.items[parent] = q.items[parent], q.items[i]
		i = parent
	}
}

// Pop removes and returns the least item; the queue must not be empty.
func (q *Queue[T]) Pop() T {
	top := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items = q.items[:last]
	i := 0
	for {
		least, left, right := i, 2*i+1, 2*i+2
		if left < last && q.less(q.items[left], q.items[least]) {
			least = left
		}
		if right < last && q.less(q.items[right], q.items[least]) {
			least = right
		}
		if least == i {
			return top
		}
		q.items[i], q.items[least] = q.items[least], q.items[i]
		i = least
	}
}
