package sim

import (
	"math/rand/v2"
	"sort"
	"time"
)

// Flaky peers (scenario.Peers): a node whose next peer is offline cannot
// forward to it. lnd's switch finds no link for the outgoing channel
// (htlcswitch's handlePacketAdd: getLinkByMapping) and fails the HTLC with
// unknown_next_peer, without a channel update, before any check of
// CheckHtlcForward; the sender's own switch does the same for its first
// hop. A peer offline longer than lnd's chan-disable-timeout (20 minutes)
// would also see its channels announced disabled; the corpus's short
// outages stay within it, and long-gone nodes are the graph's disabled
// policies.

// peerSchedule is when one flaky node is online: it starts online or not
// and flips at each time in flips, drawn as far ahead as anyone asked.
type peerSchedule struct {
	rng             *rand.Rand
	start           time.Time
	onlineAtStart   bool
	flips           []time.Time
	onMean, offMean float64 // seconds
}

// drawPeers picks the flaky nodes (never the sender) and starts each one's
// schedule from its own stream, so that what one node does depends on
// nothing else.
func (w *World) drawPeers() {
	r := w.sc.Rules
	if r == nil || r.Peers.FlakyShare <= 0 {
		return
	}
	p := r.Peers
	up := p.OnlineMeanSec / (p.OnlineMeanSec + p.OfflineMeanSec) // the share of time online
	pick := newStream(w.sc.Seed, streamPeers)
	w.peers = make([]*peerSchedule, len(w.net.nodes))
	for i := range w.peers {
		if pick.Float64() >= p.FlakyShare || i == w.source {
			continue
		}
		rng := newStream(w.sc.Seed, streamPeers, uint64(i))
		w.peers[i] = &peerSchedule{rng: rng, start: w.sc.StartTime, onlineAtStart: rng.Float64() < up,
			onMean: p.OnlineMeanSec, offMean: p.OfflineMeanSec}
	}
}

// offlineThroughout is the schedule of a node that is offline from start
// on, for as long as anyone asks of a replay (replay.go): its one flip lies
// past any time a replay reads, so no draw is ever made.
func offlineThroughout(start time.Time) *peerSchedule {
	return &peerSchedule{start: start, flips: []time.Time{start.Add(100 * 365 * 24 * time.Hour)}}
}

// online reports whether node is online at t.
func (w *World) online(node int, t time.Time) bool {
	if w.peers == nil || w.peers[node] == nil {
		return true
	}
	return w.peers[node].onlineAt(t)
}

// offlineThrough reports whether node is offline from a to b, both
// included: no HTLC can reach it in that time.
func (w *World) offlineThrough(node int, a, b time.Time) bool {
	if w.peers == nil || w.peers[node] == nil {
		return false
	}
	s := w.peers[node]
	flips := s.flipsUpTo(a)
	return !s.onlineAfter(flips) && s.flipsUpTo(b) == flips
}

// onlineAt reports whether the node is online at t.
func (s *peerSchedule) onlineAt(t time.Time) bool {
	return s.onlineAfter(s.flipsUpTo(t))
}

// onlineAfter reports whether the node is online after its first n flips.
func (s *peerSchedule) onlineAfter(n int) bool {
	return s.onlineAtStart == (n%2 == 0)
}

// flipsUpTo counts the flips at or before t, drawing the schedule that far.
func (s *peerSchedule) flipsUpTo(t time.Time) int {
	for len(s.flips) == 0 || !s.flips[len(s.flips)-1].After(t) {
		last, online := s.start, s.onlineAtStart
		if n := len(s.flips); n > 0 {
			last, online = s.flips[n-1], s.onlineAfter(n)
		}
		mean := s.offMean
		if online {
			mean = s.onMean
		}
		s.flips = append(s.flips, last.Add(seconds(s.rng.ExpFloat64()*mean)))
	}
	return sort.Search(len(s.flips), func(i int) bool { return s.flips[i].After(t) })
}
