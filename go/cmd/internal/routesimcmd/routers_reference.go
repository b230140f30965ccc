//go:build !routesim_nolnd

package routesimcmd

// The reference routers: lnd's and LDK's production routing stacks, and
// the clairvoyant oracle that shows the ceiling. Candidate builds use the
// routesim_nolnd tag to keep them out of their link.

import (
	"github.com/routesim-evolve/routesim/ldkref"
	"github.com/routesim-evolve/routesim/lndref"
	"github.com/routesim-evolve/routesim/oracle"
	"github.com/routesim-evolve/routesim/routing"
	"github.com/routesim-evolve/routesim/scenario"
	"github.com/routesim-evolve/routesim/sim"
)

func init() {
	routers["lnd-apriori"] = lndRouter(lndref.Apriori)
	routers["lnd-bimodal"] = lndRouter(lndref.Bimodal)
	routers["ldk"] = ldkRouter
	routers["oracle"] = func(_ *scenario.Scenario, world *sim.World, _ makerOptions) (routing.RouterFactory, func() error, error) {
		return oracle.NewFactory(world), func() error { return nil }, nil
	}
}

// lndRouter makes one mission control per scenario run, shared by the
// routers of all its payments, and frees it when the run is over.
func lndRouter(kind lndref.EstimatorKind) routerMaker {
	return func(sc *scenario.Scenario, _ *sim.World, _ makerOptions) (routing.RouterFactory, func() error, error) {
		self, err := scenario.ParseNodeID(sc.Source)
		if err != nil {
			return nil, nil, err
		}
		ref, err := lndref.New(lndref.Config{Estimator: kind, Self: self})
		if err != nil {
			return nil, nil, err
		}
		return ref.NewRouter, ref.Close, nil
	}
}

// ldkRouter runs one LDK bridge per scenario run, whose graph and scorer
// serve all its payments, and ends it when the run is over.
func ldkRouter(sc *scenario.Scenario, _ *sim.World, opts makerOptions) (routing.RouterFactory, func() error, error) {
	self, err := scenario.ParseNodeID(sc.Source)
	if err != nil {
		return nil, nil, err
	}
	ref, err := ldkref.New(opts.ldkBridge, self)
	if err != nil {
		return nil, nil, err
	}
	return ref.NewRouter, ref.Close, nil
}
