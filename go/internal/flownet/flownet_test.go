package flownet

import (
	"reflect"
	"testing"
)

// diamond is 0 → {1, 2} → 3: the upper corridor cheap and thin, the lower
// dear and wide.
func diamond() *Net {
	f := New(4)
	f.AddArc(0, 1, 10, 1, 0)
	f.AddArc(1, 3, 10, 1, 1)
	f.AddArc(0, 2, 30, 5, 2)
	f.AddArc(2, 3, 30, 5, 3)
	return f
}

func TestFlows(t *testing.T) {
	tests := []struct {
		name      string
		solve     func(f *Net) int64
		want      int64 // value sent
		wantUpper int64 // flow on the cheap corridor
	}{
		{"max flow takes both corridors", func(f *Net) int64 { return f.MaxFlow(0, 3, 100) }, 40, 10},
		{"max flow stops at what is wanted", func(f *Net) int64 { return f.MaxFlow(0, 3, 25) }, 25, -1},
		{"min cost fills the cheap corridor first", func(f *Net) int64 { return f.MinCostFlow(0, 3, 15) }, 15, 10},
		{"min cost of a small amount stays cheap", func(f *Net) int64 { return f.MinCostFlow(0, 3, 4) }, 4, 4},
		{"one widest part takes the wide corridor", func(f *Net) int64 { return f.WidestFlow(0, 3, 100, 1) }, 30, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := diamond()
			if got := tt.solve(f); got != tt.want {
				t.Fatalf("sent %d, want %d", got, tt.want)
			}
			if tt.wantUpper >= 0 && f.Flow(0) != tt.wantUpper {
				t.Fatalf("cheap corridor carries %d, want %d", f.Flow(0), tt.wantUpper)
			}
			total := int64(0)
			for _, p := range f.Paths(0, 3) {
				total += p.Value
			}
			if total != tt.want {
				t.Fatalf("paths carry %d, want %d", total, tt.want)
			}
		})
	}
}

// TestLeastCost checks the least cost of an amount on the diamond: the
// cheap corridor (2 a unit) first, then the dear one (10 a unit); an amount
// the network cannot carry has no lower bound to give.
func TestLeastCost(t *testing.T) {
	type leastCost struct {
		cost     uint64
		complete bool
	}
	tests := []struct {
		name   string
		amount int64
		want   leastCost
	}{
		{"within the cheap corridor", 4, leastCost{4 * 2, true}},
		{"both corridors", 15, leastCost{10*2 + 5*10, true}},
		{"more than the network carries", 41, leastCost{10*2 + 30*10, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got leastCost
			got.cost, got.complete = diamond().LeastCost(0, 3, tt.amount)
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestDecompose splits flows into paths, each along the first arc with
// flow left.
func TestDecompose(t *testing.T) {
	tests := []struct {
		name string
		arcs []FlowArc
		want []UnitPath
	}{
		{"two corridors", []FlowArc{{0, 1, 5}, {1, 3, 5}, {0, 2, 3}, {2, 3, 3}},
			[]UnitPath{{Arcs: []int32{0, 1}, Units: 5}, {Arcs: []int32{2, 3}, Units: 3}}},
		{"a narrow arc splits the flow", []FlowArc{{0, 1, 4}, {1, 3, 1}, {1, 2, 3}, {2, 3, 3}},
			[]UnitPath{{Arcs: []int32{0, 1}, Units: 1}, {Arcs: []int32{0, 2, 3}, Units: 3}}},
		{"a cycle reaches nothing", []FlowArc{{0, 1, 2}, {1, 0, 2}}, nil},
	}
	for _, tc := range tests {
		if got := Decompose(tc.arcs, 0, 3); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
