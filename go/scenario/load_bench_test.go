package scenario

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLoadGraph loads a graph of a 2026 mainnet snapshot's size (15k
// nodes, 50k channels, both policies announced) from a file, as every
// routesim process does before its first payment. bench/bench_load.py runs
// it and prints the figures.
func BenchmarkLoadGraph(b *testing.B) {
	path := filepath.Join(b.TempDir(), "graph.json")
	data, err := json.Marshal(syntheticGraph(15_000, 50_000, 1))
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := LoadGraph(path); err != nil {
			b.Fatal(err)
		}
	}
}

// syntheticGraph is a valid graph of the given size: channels between
// random distinct nodes, each with two policies of mainnet-like values.
func syntheticGraph(nodes, channels int, seed uint64) *Graph {
	rng := rand.New(rand.NewPCG(seed, 0))
	g := &Graph{Format: FormatGraph}
	for i := range nodes {
		g.Nodes = append(g.Nodes, Node{ID: fmt.Sprintf("02%064x", i), Alias: fmt.Sprintf("node-%d", i)})
	}
	policy := func(capacity int64) *Policy {
		most := uint64(capacity) * 1000 * uint64(1+rng.IntN(99)) / 100
		return &Policy{FeeBaseMsat: uint32(rng.IntN(2000)), FeeRatePPM: uint32(rng.IntN(3000)),
			CltvDelta: uint16(40 + rng.IntN(104)), HtlcMinMsat: 1000, HtlcMaxMsat: &most}
	}
	for i := range channels {
		a := rng.IntN(nodes)
		z := (a + 1 + rng.IntN(nodes-1)) % nodes
		capacity := int64(20_000 + rng.IntN(10_000_000))
		g.Channels = append(g.Channels, Channel{
			SCID:  fmt.Sprintf("%dx%dx%d", 600_000+i/1000, i%1000, i%4),
			Node1: g.Nodes[a].ID, Node2: g.Nodes[z].ID, CapacitySat: capacity,
			Policy1: policy(capacity), Policy2: policy(capacity),
		})
	}
	return g
}
