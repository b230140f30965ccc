package flownet

import "testing"

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
	tests := []struct {
		name     string
		want     int64
		cost     uint64
		complete bool
	}{
		{"within the cheap corridor", 4, 4 * 2, true},
		{"both corridors", 15, 10*2 + 5*10, true},
		{"more than the network carries", 41, 10*2 + 30*10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cost, complete := diamond().LeastCost(0, 3, tt.want)
			if cost != tt.cost || complete != tt.complete {
				t.Errorf("cost %d complete %v, want %d %v", cost, complete, tt.cost, tt.complete)
			}
		})
	}
}
