package sim

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// vandal wraps an honest router and, once the honest router is done with
// each object the simulator handed over, writes to every field of it: the
// spec, the local balances, every gossip record, each route after it was
// returned (at the next call, as a goroutine would after the check), and
// each route and result it was told about. The honest router sees clean
// copies, so a simulator that keeps nothing of the router's reach must
// produce byte-identical results with and without the vandal.
type vandal struct {
	inner    routing.SimRouter
	spec     *routing.SimPaymentSpec
	balances map[uint64]lnwire.MilliSatoshi
	returned []*route.Route
}

// vandalView hands the honest router a copy of each record, then spoils the
// record the simulator gave.
type vandalView struct{ routing.SimNetworkView }

func (v vandalView) ForEachNodeDirectedChannel(node route.Vertex,
	cb func(*routing.DirectedChannel) error) error {

	return v.SimNetworkView.ForEachNodeDirectedChannel(node, func(ch *routing.DirectedChannel) error {
		clean := *ch
		if ch.InPolicy != nil {
			policy := *ch.InPolicy
			clean.InPolicy = &policy
		}
		err := cb(&clean)
		spoilChannel(ch)
		return err
	})
}

func spoilChannel(ch *routing.DirectedChannel) {
	ch.ChannelID, ch.IsNode1, ch.OtherNode = 0, !ch.IsNode1, route.Vertex{7}
	ch.Capacity, ch.OutPolicySet = math.MaxInt64, !ch.OutPolicySet
	if p := ch.InPolicy; p != nil {
		*p = routing.CachedEdgePolicy{ChannelID: 1, IsDisabled: !p.IsDisabled,
			TimeLockDelta: 1, MaxHTLC: 1, HasMaxHTLC: true}
	}
}

func newVandal(view routing.SimNetworkView, source route.Vertex,
	balances map[uint64]lnwire.MilliSatoshi, spec *routing.SimPaymentSpec) (routing.SimRouter, error) {

	clean := *spec
	inner, err := newHopRouter(vandalView{view}, source, nil, &clean)
	v := &vandal{inner: inner, spec: spec, balances: balances}
	v.spoil()
	return v, err
}

// spoil writes to everything the simulator handed over so far.
func (v *vandal) spoil() {
	*v.spec = routing.SimPaymentSpec{Index: 99, Amount: 0, FeeLimit: math.MaxUint64,
		MaxParts: math.MaxUint32, MaxAttempts: math.MaxInt, CltvLimit: math.MaxUint32,
		Atomic: !v.spec.Atomic, Target: route.Vertex{9}, FinalCLTVDelta: 1}
	for id := range v.balances {
		v.balances[id] = math.MaxUint64
	}
	v.balances[12345] = 1
	for _, rt := range v.returned {
		spoilRoute(rt)
	}
}

func spoilRoute(rt *route.Route) {
	for _, h := range rt.Hops {
		if h == nil {
			continue // spoiled before
		}
		h.AmtToForward, h.ChannelID, h.OutgoingTimeLock = 1, 0, 0
		h.PubKeyBytes = route.Vertex{3}
	}
	rt.TotalAmount, rt.TotalTimeLock, rt.SourcePubKey = 1, 0, route.Vertex{4}
	rt.Hops = append(rt.Hops, nil)
}

func (v *vandal) RequestRoute(amt lnwire.MilliSatoshi, inFlight uint32) (*route.Route, error) {
	v.spoil()
	rt, err := v.inner.RequestRoute(amt, inFlight)
	if rt != nil {
		v.returned = append(v.returned, rt)
	}
	return rt, err
}

func (v *vandal) ReportAttempt(id uint64, rt *route.Route, res *routing.SimAttemptResult) error {
	v.spoil()
	err := v.inner.ReportAttempt(id, rt, res)
	spoilRoute(rt)
	*res = routing.SimAttemptResult{FailureSourceIdx: 99}
	return err
}

// TestVandalChangesNothing is the mutation test: in every arena, a router
// that writes to every field of every object it is handed gets exactly the
// result of the same router that writes nothing.
func TestVandalChangesNothing(t *testing.T) {
	for _, name := range exampleScenarios {
		t.Run(name, func(t *testing.T) {
			sc := loadExample(t, name)
			honest, err := Run(sc, newHopRouter, Options{RouterName: "r", CheckConservation: true})
			if err != nil {
				t.Fatal(err)
			}
			spoiled, err := Run(sc, newVandal, Options{RouterName: "r", CheckConservation: true})
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(honest)
			got, _ := json.Marshal(spoiled)
			if !bytes.Equal(want, got) {
				t.Fatalf("the vandal changed the result:\nhonest  %+v\nvandal  %+v",
					honest.Totals, spoiled.Totals)
			}
			if honest.Totals.Succeeded == 0 || honest.Totals.Attempts == 0 {
				t.Fatalf("the honest router did nothing: %+v", honest.Totals)
			}
		})
	}
}
