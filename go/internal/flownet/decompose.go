package flownet

import "math"

// FlowArc is an arc carrying Units of a flow from From to To.
type FlowArc struct {
	From, To int32
	Units    int64
}

// UnitPath is one path of a decomposed flow: the indices of its arcs and
// the units it carries.
type UnitPath struct {
	Arcs  []int32
	Units int64
}

// Decompose splits a flow from s to t into paths. Each path walks from s
// along, at every node, the first arc (in the order of arcs) that still
// carries flow to a node not yet on the path, and carries the least flow
// left on its arcs; the first walk that cannot reach t ends the split.
func Decompose(arcs []FlowArc, s, t int32) []UnitPath {
	left := make([]int64, len(arcs))
	out := map[int32][]int32{}
	for k, a := range arcs {
		left[k] = a.Units
		if a.Units > 0 {
			out[a.From] = append(out[a.From], int32(k))
		}
	}
	var paths []UnitPath
	for {
		var path []int32
		seen := map[int32]bool{s: true}
		v, units := s, int64(math.MaxInt64)
		for v != t {
			next := int32(-1)
			for _, k := range out[v] {
				if left[k] > 0 && !seen[arcs[k].To] {
					next = k
					break
				}
			}
			if next < 0 {
				return paths
			}
			path = append(path, next)
			units = min(units, left[next])
			v = arcs[next].To
			seen[v] = true
		}
		for _, k := range path {
			left[k] -= units
		}
		paths = append(paths, UnitPath{Arcs: path, Units: units})
	}
}
