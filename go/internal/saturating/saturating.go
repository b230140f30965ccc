// Package saturating is saturating arithmetic on msat amounts and flow
// costs: a sum or product that would wrap around 2^64 stays at the largest
// value instead, so a huge fee or capacity can never pass a limit by
// wrapping.
package saturating

import "math"

// Add is a + b, or the largest uint64 when that would wrap.
func Add[T ~uint64](a, b T) T {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

// Mul is a · b, or the largest uint64 when that would wrap.
func Mul[T ~uint64](a, b T) T {
	if a != 0 && b > math.MaxUint64/a {
		return math.MaxUint64
	}
	return a * b
}
