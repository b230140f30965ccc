package sim

// The test routers: a scripted one, and a plain fewest-hop one.

import (
	"fmt"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// scriptedRouter returns the routes of a script, one per request, and
// records the results and the payment outcomes it is told.
type scriptedRouter struct {
	routes  []*route.Route
	next    int
	results []*routing.SimAttemptResult
	ended   []routing.SimPaymentOutcome
}

func (r *scriptedRouter) PaymentEnded(outcome *routing.SimPaymentOutcome) {
	r.ended = append(r.ended, *outcome)
}

func (r *scriptedRouter) RequestRoute(lnwire.MilliSatoshi, uint32) (*route.Route, error) {
	if r.next >= len(r.routes) {
		return nil, fmt.Errorf("script exhausted")
	}
	r.next++
	return r.routes[r.next-1], nil
}

func (r *scriptedRouter) ReportAttempt(_ uint64, _ *route.Route, res *routing.SimAttemptResult) error {
	r.results = append(r.results, res)
	return nil
}

// hopRouter is a plain test router: fewest-hop paths over the gossip view,
// fees and time locks from the announced policies, avoiding every channel
// that failed, halving the shard after each failure.
type hopRouter struct {
	view   routing.SimNetworkView
	source route.Vertex
	spec   *routing.SimPaymentSpec
	avoid  map[uint64]bool
	shard  lnwire.MilliSatoshi
}

func newHopRouter(view routing.SimNetworkView, source route.Vertex,
	_ map[uint64]lnwire.MilliSatoshi, spec *routing.SimPaymentSpec) (routing.SimRouter, error) {

	return &hopRouter{view: view, source: source, spec: spec,
		avoid: map[uint64]bool{}, shard: spec.Amount}, nil
}

func (r *hopRouter) RequestRoute(amt lnwire.MilliSatoshi, _ uint32) (*route.Route, error) {
	amt = min(amt, r.shard)
	// Breadth-first search backward from the target.
	type step struct {
		next    route.Vertex
		channel uint64
		policy  *routing.CachedEdgePolicy
	}
	prev := map[route.Vertex]step{r.spec.Target: {}}
	queue := []route.Vertex{r.spec.Target}
	for len(queue) > 0 && !hasKey(prev, r.source) {
		n := queue[0]
		queue = queue[1:]
		_ = r.view.ForEachNodeDirectedChannel(n, func(ch *routing.DirectedChannel) error {
			if _, seen := prev[ch.OtherNode]; seen || r.avoid[ch.ChannelID] ||
				ch.InPolicy == nil || ch.InPolicy.IsDisabled {
				return nil
			}
			prev[ch.OtherNode] = step{next: n, channel: ch.ChannelID, policy: ch.InPolicy}
			queue = append(queue, ch.OtherNode)
			return nil
		})
	}
	if !hasKey(prev, r.source) {
		return nil, fmt.Errorf("no path")
	}
	var path []step
	for v := r.source; v != r.spec.Target; v = prev[v].next {
		path = append(path, prev[v])
	}
	n := len(path)
	amount := make([]lnwire.MilliSatoshi, n)
	lock := make([]uint32, n)
	amount[n-1], lock[n-1] = amt, r.view.BlockHeight()+uint32(r.spec.FinalCLTVDelta)
	for k := n - 2; k >= 0; k-- {
		amount[k] = amount[k+1] + path[k+1].policy.ComputeFee(amount[k+1])
		lock[k] = lock[k+1] + uint32(path[k+1].policy.TimeLockDelta)
	}
	hops := make([]*route.Hop, n)
	for i := range hops {
		hops[i] = &route.Hop{PubKeyBytes: path[i].next, ChannelID: path[i].channel,
			AmtToForward: amt, OutgoingTimeLock: lock[n-1]}
		if i+1 < n {
			hops[i].AmtToForward, hops[i].OutgoingTimeLock = amount[i+1], lock[i+1]
		}
	}
	return route.NewRouteFromHops(amount[0], lock[0], r.source, hops)
}

func (r *hopRouter) ReportAttempt(_ uint64, rt *route.Route, res *routing.SimAttemptResult) error {
	if res.Failure == nil {
		return nil
	}
	if idx := res.FailureSourceIdx; idx >= 0 && idx < len(rt.Hops) {
		r.avoid[rt.Hops[idx].ChannelID] = true
	}
	r.shard = max(r.shard/2, 1_000_000)
	return nil
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}
