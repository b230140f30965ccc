// Package lndref runs lnd's production routing stack inside the simulator,
// as the reference every candidate router is measured against.
//
// It drives lnd's real exported API, not a copy of it:
//
//   - pathfinding and splitting: a routing.SessionSource whose graph is an
//     adapter over the simulator's gossip view (graph.go), whose link layer
//     reports the sender's own balances (also graph.go), and whose payment
//     sessions do lnd's halving on no path (router.go);
//   - learning: lnd's mission control (routing.NewMissionController) on a
//     temporary bbolt database, with lnd's apriori or bimodal estimator in
//     lnd's default configuration. One mission control lives for a whole
//     scenario run, so later payments learn from earlier ones;
//   - time: mission control's clock is the scenario's virtual clock
//     (clock.go), so penalty half-lives and bimodal decay act over the
//     scenario's minutes and hours;
//   - reproducibility: exact ties between paths, which lnd breaks by Go's
//     map order, are broken by a fixed hash (tiebreak.go).
//
// The simulator's payment loop (sim/payment.go) plays the part of lnd's
// unexported payment lifecycle; docs/lnd-reference.md lists where the two
// differ.
package lndref

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lightningnetwork/lnd/kvdb"
	lndrouting "github.com/lightningnetwork/lnd/routing"
	"github.com/lightningnetwork/lnd/routing/route"
)

// EstimatorKind names one of lnd's probability estimators.
type EstimatorKind string

// The two estimators lnd ships.
const (
	// Apriori is lnd's default estimator ("apriori").
	Apriori EstimatorKind = lndrouting.AprioriEstimatorName

	// Bimodal is lnd's bimodal estimator ("bimodal").
	Bimodal EstimatorKind = lndrouting.BimodalEstimatorName
)

// MinFailureRelaxInterval is the mission control setting used here. lnd's
// production default is routing.DefaultMinFailureRelaxInterval (one
// minute); the reference uses 0, so that a failure at a higher amount
// always replaces the recorded one.
const MinFailureRelaxInterval = time.Duration(0)

// Config configures a reference router.
type Config struct {
	// Estimator picks lnd's estimator; the empty value is Apriori.
	Estimator EstimatorKind

	// Self is the sender: the scenario's source node.
	Self route.Vertex

	// TimeMapping forces the fallback time mapping (estimator wrappers
	// that map wall-clock stamps onto the virtual clock) instead of
	// setting mission control's clock. It exists to test the fallback;
	// the reference leaves it false.
	TimeMapping bool
}

// Reference is lnd's routing stack for one scenario run: one mission
// control shared by the routers of all the run's payments. Its NewRouter is
// the run's routing.RouterFactory. Close it when the run is over.
type Reference struct {
	cfg     Config
	dir     string
	db      kvdb.Backend
	control *lndrouting.MissionController
	mc      *lndrouting.MissionControl
	clock   *virtualClock

	// clockSet is true when mission control reads the virtual clock
	// itself; false when the estimator wrappers map wall-clock stamps.
	clockSet bool

	pathCfg lndrouting.PathFindingConfig
}

// New sets up lnd's mission control on a temporary bbolt database.
func New(cfg Config) (*Reference, error) {
	if cfg.Estimator == "" {
		cfg.Estimator = Apriori
	}
	clk := &virtualClock{}
	est, err := newEstimator(cfg.Estimator, clk)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "routesim-lndref-")
	if err != nil {
		return nil, err
	}
	r := &Reference{cfg: cfg, dir: dir, clock: clk}
	ok := false
	defer func() {
		if !ok {
			_ = r.Close()
		}
	}()

	r.db, err = kvdb.GetBoltBackend(&kvdb.BoltBackendConfig{
		DBPath:         dir,
		DBFileName:     "missioncontrol.db",
		NoFreelistSync: true,
		DBTimeout:      kvdb.DefaultDBTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("lndref: mission control database: %w", err)
	}
	r.control, err = lndrouting.NewMissionController(r.db, cfg.Self,
		&lndrouting.MissionControlConfig{
			Estimator:               est,
			MaxMcHistory:            lndrouting.DefaultMaxMcHistory,
			McFlushInterval:         lndrouting.DefaultMcFlushInterval,
			MinFailureRelaxInterval: MinFailureRelaxInterval,
		})
	if err != nil {
		return nil, fmt.Errorf("lndref: mission control: %w", err)
	}
	if !cfg.TimeMapping {
		r.clockSet = setMissionControlClock(r.control, clk) == nil
	}
	if !r.clockSet {
		clk.startMapping()
	}
	r.mc, err = r.control.GetNamespacedStore(lndrouting.DefaultMissionControlNamespace)
	if err != nil {
		return nil, fmt.Errorf("lndref: mission control: %w", err)
	}

	// lnd's defaults (lnrpc/routerrpc.DefaultConfig, server.go).
	r.pathCfg = lndrouting.PathFindingConfig{
		AttemptCost:    lndrouting.DefaultAttemptCost,
		AttemptCostPPM: lndrouting.DefaultAttemptCostPPM,
		MinProbability: lndrouting.DefaultMinRouteProbability,
	}
	ok = true
	return r, nil
}

// MissionControl is the run's mission control, for inspection.
func (r *Reference) MissionControl() *lndrouting.MissionControl { return r.mc }

// VirtualClock reports whether mission control itself reads the virtual
// clock (true), or the estimator wrappers map its wall-clock stamps (false).
func (r *Reference) VirtualClock() bool { return r.clockSet }

// Close frees the database and removes its directory.
//
// Mission control's store flush goroutine (RunStoreTickers) is never
// started: routing reads only mission control's in-memory state, so the
// results stay queued in memory for the run instead of being flushed to
// the database every second.
func (r *Reference) Close() error {
	r.mc, r.control = nil, nil
	var errs []error
	if r.db != nil {
		errs = append(errs, r.db.Close())
		r.db = nil
	}
	if r.dir != "" {
		errs = append(errs, os.RemoveAll(filepath.Clean(r.dir)))
		r.dir = ""
	}
	return errors.Join(errs...)
}

// newEstimator makes lnd's estimator of the given kind in lnd's default
// configuration, wrapped so that it can see the virtual clock.
func newEstimator(kind EstimatorKind, clk *virtualClock) (lndrouting.Estimator, error) {
	var est lndrouting.Estimator
	var err error
	switch kind {
	case Apriori:
		est, err = lndrouting.NewAprioriEstimator(lndrouting.DefaultAprioriConfig())
	case Bimodal:
		est, err = lndrouting.NewBimodalEstimator(lndrouting.DefaultBimodalConfig())
	default:
		return nil, fmt.Errorf("lndref: unknown estimator %q", kind)
	}
	if err != nil {
		return nil, err
	}
	return &virtualTimeEstimator{Estimator: est, clock: clk}, nil
}
