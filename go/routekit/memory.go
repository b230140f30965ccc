package routekit

import (
	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// Memory is what a router keeps across the payments of a scenario: the
// graph, a searcher on it, the beliefs, the settings every payment starts
// with, and what it saw of the world's behaviour. Keep one at package level;
// the simulator makes a router per payment and each starts with Begin.
type Memory struct {
	Graph    *Graph
	Searcher *Searcher
	Beliefs  *Beliefs
	Settings Settings

	// Unreadable counts the unreadable failures seen: evidence that
	// failure attribution is degraded.
	Unreadable int

	// Payments counts the payments begun.
	Payments int

	last *Payment
}

// NewMemory makes an empty memory on beliefs, with the default settings
// for the rest; the graph is read on the first Begin.
func NewMemory(beliefs *Beliefs) *Memory {
	return &Memory{Beliefs: beliefs, Settings: settingsOf(beliefs)}
}

// NewMemoryWith makes an empty memory whose beliefs take s's prior and
// half-life; the graph is read on the first Begin.
func NewMemoryWith(s Settings) *Memory {
	return &Memory{Beliefs: NewBeliefs(s.Prior, s.HalfLife), Settings: s}
}

// Begin starts a payment: the previous one is over (its held shards settle
// if it completed), the graph is read on first use and pointed at this
// payment's view.
func (m *Memory) Begin(view routing.SimNetworkView, source route.Vertex,
	local map[uint64]lnwire.MilliSatoshi, spec *routing.SimPaymentSpec) (*Payment, error) {

	if m.last != nil {
		m.last.Finish()
	}
	if m.Graph == nil {
		m.Graph = NewGraph(view)
		m.Searcher = NewSearcher(m.Graph)
	}
	p, err := NewPayment(m.Graph, m.Beliefs, view, source, local, spec)
	if err != nil {
		return nil, err
	}
	p.memory, p.searcher, p.Settings = m, m.Searcher, m.Settings
	m.last = p
	m.Payments++
	return p, nil
}

// Shortest searches the cheapest path for q with the memory's searcher.
func (m *Memory) Shortest(q *Query) *Path { return m.Searcher.Shortest(q) }
