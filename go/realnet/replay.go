package realnet

import (
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
	"github.com/routesim-evolve/routesim/scenario"
	"github.com/routesim-evolve/routesim/sim"
)

// Policy is the policy one end of a channel applies: the form a real
// node's own policy and a world's start take (docs/realnet.md).
type Policy struct {
	FeeBaseMsat        uint64 `json:"fee_base_msat"`
	FeeRatePPM         uint64 `json:"fee_rate_ppm"`
	CltvDelta          uint16 `json:"cltv_delta"`
	HtlcMinMsat        uint64 `json:"htlc_min_msat"`
	HtlcMaxMsat        uint64 `json:"htlc_max_msat"`
	Disabled           bool   `json:"disabled"`
	InboundFeeBaseMsat int32  `json:"inbound_fee_base_msat"`
	InboundFeeRatePPM  int32  `json:"inbound_fee_rate_ppm"`
}

// PolicyOf is the JSON form of a policy; nil for none.
func PolicyOf(p *routing.CachedEdgePolicy) *Policy {
	if p == nil {
		return nil
	}
	return &Policy{
		FeeBaseMsat:        uint64(p.FeeBaseMSat),
		FeeRatePPM:         uint64(p.FeeProportionalMillionths),
		CltvDelta:          p.TimeLockDelta,
		HtlcMinMsat:        uint64(p.MinHTLC),
		HtlcMaxMsat:        uint64(p.MaxHTLC),
		Disabled:           p.IsDisabled,
		InboundFeeBaseMsat: p.InboundFeeBaseMSat,
		InboundFeeRatePPM:  p.InboundFeeRate,
	}
}

// edgePolicy is the simulator's form of a policy; nil for none.
func (p *Policy) edgePolicy() *routing.CachedEdgePolicy {
	if p == nil {
		return nil
	}
	return &routing.CachedEdgePolicy{
		HasMaxHTLC:                true,
		IsDisabled:                p.Disabled,
		TimeLockDelta:             p.CltvDelta,
		MinHTLC:                   lnwire.MilliSatoshi(p.HtlcMinMsat),
		MaxHTLC:                   lnwire.MilliSatoshi(p.HtlcMaxMsat),
		FeeBaseMSat:               lnwire.MilliSatoshi(p.FeeBaseMsat),
		FeeProportionalMillionths: lnwire.MilliSatoshi(p.FeeRatePPM),
		InboundFeeBaseMSat:        p.InboundFeeBaseMsat,
		InboundFeeRate:            p.InboundFeeRatePPM,
	}
}

// ErrObserved is an observed attempt that cannot be read.
var ErrObserved = errors.New("realnet: bad observed attempt")

// Observed is one real round as the driver recorded it just before it sent
// its shards: the chain height, the routes in the order sent, the
// receiver's final cltv delta, every channel of the routes' forwarding
// nodes as they showed it, and the peers one of them had no active link to
// (docs/realnet.md, "The agreement table").
type Observed struct {
	Height         uint32            `json:"height"`
	FinalCltvDelta uint16            `json:"final_cltv_delta"`
	Routes         []Route           `json:"routes"`
	Channels       []ObservedChannel `json:"channels"`
	Offline        []string          `json:"offline"`
}

// ObservedChannel is one channel as lnd's ListChannels showed it, with each
// end's own policy; index d of each pair is the end Nodes[d]
// (sim.ObservedChannel says what each number is).
type ObservedChannel struct {
	SCID         string     `json:"scid"`
	Nodes        [2]string  `json:"nodes"`
	CapacitySat  uint64     `json:"capacity_sat"`
	BalanceSat   [2]uint64  `json:"balance_sat"`
	ReserveSat   [2]uint64  `json:"reserve_sat"`
	Funder       int        `json:"funder"`
	CommitFeeSat uint64     `json:"commit_fee_sat"`
	FeePerKw     uint64     `json:"fee_per_kw"`
	DustLimitSat uint64     `json:"dust_limit_sat"`
	InFlight     [2]int     `json:"in_flight"`
	InFlightMsat [2]uint64  `json:"in_flight_msat"`
	MaxHTLCs     [2]int     `json:"max_htlcs"`
	Policies     [2]*Policy `json:"policies"`
}

// Predicted is what the simulator's forwarding rules say of one attempt:
// "arrived" (failure_index -1) or lnrpc's name of the failure, the failing
// node's position (0 the sender) and whether the failure carries a channel
// update.
type Predicted struct {
	Outcome      string `json:"outcome"`
	FailureIndex int    `json:"failure_index"`
	HasUpdate    bool   `json:"has_update"`
}

// RoundPredicted is the prediction of one observed round: one per route,
// in order, or why the round cannot be replayed.
type RoundPredicted struct {
	Predictions []Predicted `json:"predictions"`
	Error       string      `json:"error,omitempty"`
}

// Replay predicts an observed round by the simulator's rules
// (sim.PredictRound).
func Replay(o Observed) ([]Predicted, error) {
	obs, err := o.observation()
	if err != nil {
		return nil, err
	}
	routes := make([]*route.Route, 0, len(o.Routes))
	for i := range o.Routes {
		rt, err := routeIn(&o.Routes[i])
		if err != nil {
			return nil, fmt.Errorf("%w: route %d: %v", ErrObserved, i, err)
		}
		routes = append(routes, rt)
	}
	ps, err := sim.PredictRound(obs, routes, o.FinalCltvDelta)
	if err != nil {
		return nil, err
	}
	out := make([]Predicted, 0, len(ps))
	for _, p := range ps {
		if p.Failure == nil {
			out = append(out, Predicted{Outcome: "arrived", FailureIndex: -1})
			continue
		}
		out = append(out, Predicted{Outcome: CodeName(p.Failure), FailureIndex: p.FailIndex, HasUpdate: p.HasUpdate})
	}
	return out, nil
}

func (o Observed) observation() (sim.Observation, error) {
	if len(o.Routes) == 0 {
		return sim.Observation{}, fmt.Errorf("%w: no routes", ErrObserved)
	}
	src, err := scenario.ParseNodeID(o.Routes[0].Source)
	if err != nil {
		return sim.Observation{}, fmt.Errorf("%w: route source: %v", ErrObserved, err)
	}
	obs := sim.Observation{Height: o.Height, Source: src}
	for _, c := range o.Channels {
		ch, err := c.sim()
		if err != nil {
			return sim.Observation{}, err
		}
		obs.Channels = append(obs.Channels, ch)
	}
	for _, k := range o.Offline {
		v, err := scenario.ParseNodeID(k)
		if err != nil {
			return sim.Observation{}, fmt.Errorf("%w: offline: %v", ErrObserved, err)
		}
		obs.Offline = append(obs.Offline, v)
	}
	return obs, nil
}

func (c ObservedChannel) sim() (sim.ObservedChannel, error) {
	id, err := scenario.ParseSCID(c.SCID)
	if err != nil {
		return sim.ObservedChannel{}, fmt.Errorf("%w: channel %q: %v", ErrObserved, c.SCID, err)
	}
	sat := lnwire.NewMSatFromSatoshis
	out := sim.ObservedChannel{
		ChannelID: id, Capacity: sat(btcutil.Amount(c.CapacitySat)), Funder: c.Funder,
		CommitFee: sat(btcutil.Amount(c.CommitFeeSat)), FeePerKw: c.FeePerKw,
		DustLimit: sat(btcutil.Amount(c.DustLimitSat)), InFlight: c.InFlight, MaxHTLCs: c.MaxHTLCs,
	}
	for d := 0; d < 2; d++ {
		v, err := scenario.ParseNodeID(c.Nodes[d])
		if err != nil {
			return out, fmt.Errorf("%w: channel %s node %d: %v", ErrObserved, c.SCID, d, err)
		}
		out.Nodes[d] = v
		out.Balance[d] = sat(btcutil.Amount(c.BalanceSat[d]))
		out.Reserve[d] = sat(btcutil.Amount(c.ReserveSat[d]))
		out.InFlightAmount[d] = lnwire.MilliSatoshi(c.InFlightMsat[d])
		out.Policy[d] = c.Policies[d].edgePolicy()
		if out.Policy[d] != nil {
			out.Policy[d].ChannelID = id
		}
	}
	return out, nil
}
