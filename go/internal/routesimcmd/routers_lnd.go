//go:build !routesim_nolnd

package routesimcmd

// lnd's production routing stack as reference routers. Candidate builds use
// the routesim_nolnd tag to keep lnd's routing package out of their link.

import (
	"github.com/routesim-evolve/routesim/lndref"
	"github.com/routesim-evolve/routesim/routing"
	"github.com/routesim-evolve/routesim/scenario"
)

func init() {
	routers["lnd-apriori"] = lndRouter(lndref.Apriori)
	routers["lnd-bimodal"] = lndRouter(lndref.Bimodal)
}

// lndRouter makes one mission control per scenario run, shared by the
// routers of all its payments, and frees it when the run is over.
func lndRouter(kind lndref.EstimatorKind) routerMaker {
	return func(sc *scenario.Scenario) (routing.RouterFactory, func() error, error) {
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
