package sim

import (
	"math"
	"testing"
	"time"

	"github.com/routesim-evolve/routesim/scenario"
)

// TestFlakyPeers checks the schedules the peers rule draws: the sender
// never flaky, a share of the other nodes flaky, each offline about
// offline/(online+offline) of the time, and the same schedule however it
// is asked (the draws depend on nothing but the seed and the node).
func TestFlakyPeers(t *testing.T) {
	sc := lineScenario(60, 1_000_000, testPolicy(1000, 100, 40), 1)
	sc.Rules = &scenario.Rules{Peers: scenario.Peers{FlakyShare: 0.5, OnlineMeanSec: 3000, OfflineMeanSec: 1000}}
	w := mustWorld(t, sc)
	if w.peers[w.source] != nil {
		t.Fatal("the sender is flaky")
	}
	flaky, offline, samples := 0, 0, 0
	start := sc.StartTime
	for node, s := range w.peers {
		if s == nil {
			continue
		}
		flaky++
		for k := 0; k < 2000; k++ {
			samples++
			if !w.online(node, start.Add(time.Duration(k)*time.Minute)) {
				offline++
			}
		}
	}
	if flaky < 15 || flaky > 45 {
		t.Fatalf("%d of 59 nodes flaky, want about half", flaky)
	}
	if share := float64(offline) / float64(samples); math.Abs(share-0.25) > 0.05 {
		t.Fatalf("offline %.3f of the time, want about 0.25", share)
	}
	// Asked backwards, or first far ahead, a fresh world says the same.
	again := mustWorld(t, sc)
	for node := len(again.peers) - 1; node >= 0; node-- {
		for k := 1999; k >= 0; k -= 7 {
			at := start.Add(time.Duration(k) * time.Minute)
			if again.online(node, at) != w.online(node, at) {
				t.Fatalf("node %d at %v: schedules differ with the order of questions", node, at)
			}
		}
	}
	if plain := mustWorld(t, lineScenario(60, 1_000_000, testPolicy(1000, 100, 40), 1)); plain.peers != nil {
		t.Fatal("peers drawn without the rule")
	}
}

// TestOfflineThrough checks the bound's question: offline at the start and
// no flip up to the end, both included.
func TestOfflineThrough(t *testing.T) {
	w := balancedLine(t, 4, 1000)
	setOffline(w, 2)
	back := w.now.Add(time.Minute)
	w.peers[2].flips[0] = back
	for _, tc := range []struct {
		end  time.Time
		want bool
	}{
		{w.now, true},
		{back.Add(-time.Nanosecond), true},
		{back, false},
	} {
		if got := w.offlineThrough(2, w.now, tc.end); got != tc.want {
			t.Errorf("offline through %v: %v, want %v", tc.end.Sub(w.now), got, tc.want)
		}
	}
	if w.offlineThrough(1, w.now, back) {
		t.Error("a node without a schedule is offline")
	}
}
