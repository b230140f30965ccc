package sim

import (
	"bytes"
	"fmt"
	"maps"

	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// MaxRouteHops is the longest route a payment may use (routing.MaxRouteHops,
// the one definition).
const MaxRouteHops = routing.MaxRouteHops

// takeRoute returns the simulator's own deep copy of a route a router
// returned, or what makes it unusable. The router keeps its memory and may
// go on writing to it (from another goroutine, too): from here on the
// payment validates, forwards, attributes and records only this copy.
func takeRoute(rt *route.Route) (*route.Route, string) {
	if rt == nil {
		return nil, "route is nil"
	}
	// Read the hop slice once: every check below is of this header, so
	// a writer racing the copy cannot swap it between check and use.
	hops := rt.Hops
	switch {
	case len(hops) == 0:
		return nil, "route has no hops"
	case len(hops) > MaxRouteHops:
		return nil, fmt.Sprintf("route has %d hops, more than the onion's %d",
			len(hops), MaxRouteHops)
	}
	c := *rt
	c.Hops = make([]*route.Hop, len(hops))
	for i, h := range hops {
		if h == nil {
			return nil, fmt.Sprintf("hop %d is nil", i)
		}
		c.Hops[i] = copyHop(h)
	}
	c.FirstHopWireCustomRecords = maps.Clone(rt.FirstHopWireCustomRecords)
	return &c, ""
}

// copyRoute is a deep copy of a route the simulator made or took: what a
// router is handed back, so that nothing it writes reaches the payment.
func copyRoute(rt *route.Route) *route.Route {
	c := *rt
	c.Hops = make([]*route.Hop, len(rt.Hops))
	for i, h := range rt.Hops {
		c.Hops[i] = copyHop(h)
	}
	c.FirstHopWireCustomRecords = maps.Clone(rt.FirstHopWireCustomRecords)
	return &c
}

// copyHop deep-copies a hop: lnd's Hop.Copy, plus the byte slices and the
// custom records it shares.
func copyHop(h *route.Hop) *route.Hop {
	c := h.Copy()
	c.CustomRecords = maps.Clone(h.CustomRecords)
	c.Metadata = bytes.Clone(h.Metadata)
	c.EncryptedData = bytes.Clone(h.EncryptedData)
	return c
}
