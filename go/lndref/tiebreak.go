package lndref

import (
	"github.com/btcsuite/btcd/btcutil"
	"github.com/lightningnetwork/lnd/lnwire"
	lndrouting "github.com/lightningnetwork/lnd/routing"
	"github.com/lightningnetwork/lnd/routing/route"
)

// TieBreak is the relative amount by which pathfinding's probabilities are
// nudged to make lnd's choice between equally good paths reproducible.
//
// lnd's findPath relaxes the edges into a node by ranging over a Go map
// (nodeEdgeUnifier.edgeUnifiers), and the distance heap pops equal
// distances in insertion order, so among paths of exactly equal distance
// and probability the one lnd returns depends on Go's randomised map
// iteration: two runs of one scenario can differ (they do on a graph of
// identical parallel paths). The reference therefore scales the
// probability of each node pair by 1 − TieBreak·h(from, to), h a fixed
// hash of the pair in [0, 1). Equal paths through different pairs then
// differ by about 1e-9 of their distance, and lnd picks one of them the
// same way every run. No choice between paths whose distances differ by
// more than about a billionth moves.
const TieBreak = 1e-9

// tieBreakMC is mission control as lnd's pathfinding queries it, with
// TieBreak applied. Reports pass through unchanged.
type tieBreakMC struct {
	*lndrouting.MissionControl
}

var _ lndrouting.MissionControlQuerier = tieBreakMC{}

// GetProbability is mission control's estimate, nudged by TieBreak.
func (m tieBreakMC) GetProbability(fromNode, toNode route.Vertex,
	amt lnwire.MilliSatoshi, capacity btcutil.Amount) float64 {

	p := m.MissionControl.GetProbability(fromNode, toNode, amt, capacity)
	return p * (1 - TieBreak*pairHash(fromNode, toNode))
}

// pairHash is FNV-1a of the pair, mapped onto [0, 1).
func pairHash(from, to route.Vertex) float64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for _, v := range [2]route.Vertex{from, to} {
		for _, b := range v {
			h ^= uint64(b)
			h *= prime
		}
	}
	return float64(h>>11) / (1 << 53)
}
