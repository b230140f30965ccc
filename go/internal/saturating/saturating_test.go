package saturating

import (
	"math"
	"testing"
)

func TestSaturates(t *testing.T) {
	const top = math.MaxUint64
	for _, tc := range []struct {
		name         string
		a, b         uint64
		sum, product uint64
	}{
		{"small", 3, 4, 7, 12},
		{"zero", 0, top, top, 0},
		{"sum at the edge", top - 1, 1, top, top - 1},
		{"sum wraps", top, 1, top, top},
		{"product wraps", 1 << 32, 1 << 32, 1 << 33, top},
	} {
		if got := Add(tc.a, tc.b); got != tc.sum {
			t.Errorf("%s: Add = %d, want %d", tc.name, got, tc.sum)
		}
		if got := Mul(tc.a, tc.b); got != tc.product {
			t.Errorf("%s: Mul = %d, want %d", tc.name, got, tc.product)
		}
	}
}
