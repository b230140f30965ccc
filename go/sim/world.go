package sim

import (
	"math"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/scenario"
)

// blockInterval is the virtual time one block takes.
const blockInterval = 10 * time.Minute

// World is a scenario's network in motion: hidden balances drawn, stale
// gossip applied, the virtual clock and the background traffic.
type World struct {
	sc      *scenario.Scenario
	net     *Network
	source  int
	now     time.Time
	traffic *trafficStream

	// peers is each node's online schedule (peers.go); nil for a node
	// always online, and nil in all when no node is flaky.
	peers []*peerSchedule
}

// NewWorld builds the world of a scenario: it draws every hidden balance and
// every stale policy from the scenario's seed.
func NewWorld(sc *scenario.Scenario) (*World, error) {
	net, err := newNetwork(sc.Graph)
	if err != nil {
		return nil, err
	}
	src, _ := scenario.ParseNodeID(sc.Source)
	w := &World{
		sc:     sc,
		net:    net,
		source: net.nodeIndex[src],
		now:    sc.StartTime,
	}
	w.drawBalances()
	w.setLocalBalances()
	w.drawStaleGossip()
	w.applySenderPolicies()
	w.drawRules()
	w.drawPeers()
	w.traffic = newTrafficStream(sc, net, w.source)
	return w, nil
}

// drawBalances gives every channel a hidden balance: bimodal (lnd's model,
// funds mostly on one side) or, for a uniform share of channels, uniform.
// Every channel takes its draws in channel order, so the draws do not depend
// on anything but the seed and the graph.
func (w *World) drawBalances() {
	rng := newStream(w.sc.Seed, streamLiquidity)
	liq := w.sc.Liquidity
	for i := range w.net.channels {
		c := &w.net.channels[i]
		capSat := float64(c.capacity / 1000)
		uniform, side, u := rng.Float64(), rng.Float64(), rng.Float64()
		var sat float64
		if uniform < liq.UniformShare {
			sat = u * capSat
		} else {
			sat = truncatedExp(u, liq.BimodalScaleSat, capSat)
			if side < 0.5 {
				sat = capSat - sat
			}
		}
		c.setBalance(lnwire.MilliSatoshi(sat * 1000))
	}
}

// truncatedExp is the inverse CDF of an exponential with scale s truncated
// to [0, c]. The two terms of lnd's bimodal density have equal mass on
// [0, c], so picking a side at random and drawing this gives the bimodal.
func truncatedExp(u, s, c float64) float64 {
	x := -s * math.Log1p(-u*(-math.Expm1(-c/s)))
	return math.Min(math.Max(x, 0), c)
}

// setLocalBalances gives the source's channels their balances: from the
// scenario where listed, else uniform over the capacity. The source knows
// them; the router is told.
func (w *World) setLocalBalances() {
	rng := newStream(w.sc.Seed, streamLocal)
	for _, ci := range w.net.adjacent[w.source] {
		c := &w.net.channels[ci]
		d := c.direction(w.source)
		amt := lnwire.MilliSatoshi(rng.Float64() * float64(c.capacity))
		if listed, ok := w.sc.Local[scenario.FormatSCID(c.id)]; ok {
			amt = lnwire.MilliSatoshi(listed)
		}
		if d == 1 {
			amt = c.capacity - amt
		}
		c.setBalance(amt)
	}
}

// drawStaleGossip makes a share of announced policies out of date: the
// forwarding node really charges a higher fee or asks for a larger cltv
// delta than its announcement says.
func (w *World) drawStaleGossip() {
	g := w.sc.Gossip
	rng := newStream(w.sc.Seed, streamGossip)
	for i := range w.net.channels {
		c := &w.net.channels[i]
		for d := 0; d < 2; d++ {
			stale, kind := rng.Float64(), rng.Float64()
			if c.actual[d] == nil || stale >= g.StaleShare {
				continue
			}
			p := c.actual[d]
			if kind < 0.5 {
				rate := float64(p.FeeProportionalMillionths) * g.StaleFeeRateFactor
				p.FeeProportionalMillionths = lnwire.MilliSatoshi(math.Ceil(rate))
				p.FeeBaseMSat += lnwire.MilliSatoshi(g.StaleBaseFeeAddMsat)
			} else {
				p.TimeLockDelta += g.StaleCltvAdd
			}
		}
	}
}

// applySenderPolicies makes the scenario's sender_policies the sender's
// announced and actual policies: exact, never stale (a node knows its own).
func (w *World) applySenderPolicies() {
	for scid, p := range w.sc.SenderPolicies {
		id, _ := scenario.ParseSCID(scid)
		c := &w.net.channels[w.net.chanIndex[id]]
		d := c.direction(w.source)
		pol := p
		c.announced[d] = policyOf(c.id, d == 0, &pol, c.capacity)
		actual := *c.announced[d]
		c.actual[d] = &actual
	}
}

// Now is the virtual time.
func (w *World) Now() time.Time { return w.now }

// BlockHeight is the scenario's block height plus the blocks mined since it
// started.
func (w *World) BlockHeight() uint32 {
	return w.sc.BlockHeight + uint32(w.now.Sub(w.sc.StartTime)/blockInterval)
}

// advanceTo moves the clock forward to t (never back) and plays the
// background traffic of the time that passed.
func (w *World) advanceTo(t time.Time) {
	if t.After(w.now) {
		w.now = t
	}
	w.traffic.playUntil(w.now)
}

// advance moves the clock forward by d.
func (w *World) advance(d time.Duration) {
	w.advanceTo(w.now.Add(d))
}

// sourceVertex is the sender's node id.
func (w *World) sourceVertex() route.Vertex {
	return w.net.nodes[w.source]
}

// localBalances is what the sender can send over each of its channels now
// (its links' bandwidth, as lnd's pathfinding reads it: nothing to an
// offline peer).
func (w *World) localBalances() map[uint64]lnwire.MilliSatoshi {
	out := make(map[uint64]lnwire.MilliSatoshi)
	for _, ci := range w.net.adjacent[w.source] {
		c := &w.net.channels[ci]
		d := c.direction(w.source)
		out[c.id] = c.bandwidth(d)
		if !w.online(c.nodes[1-d], w.now) {
			out[c.id] = 0 // no link to an offline peer
		}
	}
	return out
}

// seconds turns a count of seconds from the scenario into a duration.
func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second))
}

// Balances is what each end of every channel can send now in one HTLC (its
// bandwidth: the balance less what the rules keep back), by channel id:
// [0] from the end with the smaller public key (lnd's node 1), [1] from the
// other. It is the world a clairvoyant router would read; the harness's
// tests use it to build a candidate that replays a world it was not given.
func (w *World) Balances() map[uint64][2]lnwire.MilliSatoshi {
	out := make(map[uint64][2]lnwire.MilliSatoshi, len(w.net.channels))
	for i := range w.net.channels {
		c := &w.net.channels[i]
		out[c.id] = [2]lnwire.MilliSatoshi{c.bandwidth(0), c.bandwidth(1)}
	}
	return out
}
