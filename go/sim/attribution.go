package sim

import (
	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// Degradation kinds of a failure report.
const (
	degradeNone        = "none"
	degradeStripped    = "stripped"
	degradeShiftBefore = "shift_before"
	degradeShiftAfter  = "shift_after"
)

// attributionDraw is the degradation drawn for one attempt. It depends only
// on the seed, the payment index and the attempt index, never on the
// outcome, so that two routers' k-th attempts draw alike.
type attributionDraw struct {
	kind     string
	nodeSeed uint64 // picks the off-route node of a stripped failure
}

func (w *World) drawAttribution(payment, attempt int) attributionDraw {
	a := w.sc.Attribution
	if !a.Enabled() {
		return attributionDraw{kind: degradeNone}
	}
	rng := newStream(w.sc.Seed, streamAttribution, uint64(payment), uint64(attempt))
	u, nodeSeed := rng.Float64(), rng.Uint64()
	kind := degradeNone
	switch {
	case u < a.StrippedRate:
		kind = degradeStripped
	case u < a.StrippedRate+a.ShiftBeforeRate:
		kind = degradeShiftBefore
	case u < a.StrippedRate+a.ShiftBeforeRate+a.ShiftAfterRate:
		kind = degradeShiftAfter
	}
	return attributionDraw{kind: kind, nodeSeed: nodeSeed}
}

// learnedUpdate is a channel update a failure report carries, and the
// channel and direction it is about: what the sender applies to its view.
type learnedUpdate struct {
	update  *lnwire.ChannelUpdate1
	channel int
	dir     int
}

// report turns a forwarding outcome into what the sender learns, degraded as
// drawn. Successes are always reported truthfully, and so are the sender's
// own (local) failures; a shift that would leave the remote part of the
// route is not applied. It returns the kind actually applied and the
// channel update the report carries (nil for none): a shifted report
// carries the blamed node's own update, never the one of the channel that
// really failed, which would undo the shift.
func (w *World) report(rt *route.Route, out forwardOutcome,
	draw attributionDraw) (*routing.SimAttemptResult, string, *learnedUpdate) {

	if out.failIdx < 0 {
		return &routing.SimAttemptResult{FailureSourceIdx: -1}, degradeNone, nil
	}
	res := &routing.SimAttemptResult{
		Failure:          out.failure,
		FailureSource:    routeNode(rt, out.failIdx),
		FailureSourceIdx: out.failIdx,
	}
	truth := out.learned()
	if out.failIdx == 0 {
		return res, degradeNone, truth
	}
	idx := out.failIdx
	blamed := -1
	switch draw.kind {
	case degradeStripped:
		res.Failure = routing.UnreadableFailure{}
		res.FailureSource = w.offRouteNode(rt, draw.nodeSeed)
		res.FailureSourceIdx = -1
		return res, degradeStripped, nil
	case degradeShiftBefore:
		if idx-1 >= 1 {
			blamed = idx - 1
		}
	case degradeShiftAfter:
		if idx+1 <= len(rt.Hops) {
			blamed = idx + 1
		}
	}
	if blamed < 0 {
		return res, degradeNone, truth
	}
	res.FailureSource, res.FailureSourceIdx = routeNode(rt, blamed), blamed
	learned := w.blamedUpdate(rt, out, blamed)
	if out.update != nil {
		res.Failure = withUpdate(out.failure, learned)
	}
	return res, draw.kind, learned
}

// learned is the update a truthful report of out carries, if any.
func (out forwardOutcome) learned() *learnedUpdate {
	if out.update == nil {
		return nil
	}
	return &learnedUpdate{update: out.update, channel: out.updateCh, dir: out.updateDir}
}

// blamedUpdate is the update a report blaming position idx carries where
// the real failure carried one: the actual policy of the channel the blamed
// node forwards over on the route, stamped as the real one was; nil where
// the real failure carried none, or the blamed node is the receiver.
func (w *World) blamedUpdate(rt *route.Route, out forwardOutcome, idx int) *learnedUpdate {
	if out.update == nil || idx >= len(rt.Hops) {
		return nil
	}
	ci := w.net.chanIndex[rt.Hops[idx].ChannelID]
	c := &w.net.channels[ci]
	d := c.direction(w.net.nodeIndex[routeNode(rt, idx)])
	return &learnedUpdate{update: c.channelUpdate(d, out.update.Timestamp), channel: ci, dir: d}
}

// withUpdate is msg carrying learned's update instead of its own; a
// failure about a channel that names none (the receiver blamed) is a
// temporary_channel_failure without an update.
func withUpdate(msg lnwire.FailureMessage, learned *learnedUpdate) lnwire.FailureMessage {
	if learned == nil {
		return lnwire.NewTemporaryChannelFailure(nil)
	}
	upd := learned.update
	switch m := msg.(type) {
	case *lnwire.FailFeeInsufficient:
		return lnwire.NewFeeInsufficient(m.HtlcMsat, *upd)
	case *lnwire.FailAmountBelowMinimum:
		return lnwire.NewAmountBelowMinimum(m.HtlcMsat, *upd)
	case *lnwire.FailIncorrectCltvExpiry:
		return lnwire.NewIncorrectCltvExpiry(m.CltvExpiry, *upd)
	case *lnwire.FailChannelDisabled:
		return lnwire.NewChannelDisabled(uint16(upd.ChannelFlags), *upd)
	case *lnwire.FailExpiryTooSoon:
		return lnwire.NewExpiryTooSoon(*upd)
	}
	return lnwire.NewTemporaryChannelFailure(upd)
}

// routeNode is the node at position idx of rt: the sender at 0, Hops[idx-1]
// after.
func routeNode(rt *route.Route, idx int) route.Vertex {
	if idx == 0 {
		return rt.SourcePubKey
	}
	return rt.Hops[idx-1].PubKeyBytes
}

// offRouteNode picks, from seed, a node that is not on rt.
func (w *World) offRouteNode(rt *route.Route, seed uint64) route.Vertex {
	on := map[route.Vertex]bool{rt.SourcePubKey: true}
	for _, h := range rt.Hops {
		on[h.PubKeyBytes] = true
	}
	nodes := w.net.nodes
	start := int(seed % uint64(len(nodes)))
	for k := range nodes {
		if n := nodes[(start+k)%len(nodes)]; !on[n] {
			return n
		}
	}
	// Every node is on the route: blame an id that is no node at all.
	return route.Vertex{}
}

// failureName is the snake_case name of a failure's code, as results and
// feedback show it.
func failureName(f lnwire.FailureMessage) string {
	if f == nil {
		return ""
	}
	if _, ok := f.(routing.UnreadableFailure); ok {
		return "unreadable"
	}
	return codeName(f.Code())
}

// codeName turns lnd's CamelCase code name into snake_case.
func codeName(c lnwire.FailCode) string {
	name := c.String()
	var b []byte
	for i := 0; i < len(name); i++ {
		ch := name[i]
		if ch >= 'A' && ch <= 'Z' {
			if i > 0 {
				b = append(b, '_')
			}
			ch += 'a' - 'A'
		}
		b = append(b, ch)
	}
	return string(b)
}
