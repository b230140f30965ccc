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

// report turns a forwarding outcome into what the sender learns, degraded as
// drawn. Successes are always reported truthfully, and so are the sender's
// own (local) failures; a shift that would leave the remote part of the
// route is not applied. It returns the kind actually applied.
func (w *World) report(rt *route.Route, out forwardOutcome,
	draw attributionDraw) (*routing.SimAttemptResult, string) {

	if out.failIdx < 0 {
		return &routing.SimAttemptResult{FailureSourceIdx: -1}, degradeNone
	}
	res := &routing.SimAttemptResult{
		Failure:          out.failure,
		FailureSource:    routeNode(rt, out.failIdx),
		FailureSourceIdx: out.failIdx,
	}
	if out.failIdx == 0 {
		return res, degradeNone
	}
	idx := out.failIdx
	switch draw.kind {
	case degradeStripped:
		res.Failure = routing.UnreadableFailure{}
		res.FailureSource = w.offRouteNode(rt, draw.nodeSeed)
		res.FailureSourceIdx = -1
		return res, degradeStripped
	case degradeShiftBefore:
		if idx-1 >= 1 {
			res.FailureSource, res.FailureSourceIdx = routeNode(rt, idx-1), idx-1
			return res, degradeShiftBefore
		}
	case degradeShiftAfter:
		if idx+1 <= len(rt.Hops) {
			res.FailureSource, res.FailureSourceIdx = routeNode(rt, idx+1), idx+1
			return res, degradeShiftAfter
		}
	}
	return res, degradeNone
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
