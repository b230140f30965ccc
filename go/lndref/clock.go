package lndref

import (
	"errors"
	"reflect"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/lightningnetwork/lnd/clock"
	"github.com/lightningnetwork/lnd/lnwire"
	lndrouting "github.com/lightningnetwork/lnd/routing"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// Time in lnd's mission control
//
// Mission control stamps every result with its clock (mcConfig.clock, set
// to clock.NewDefaultClock() in NewMissionController) and passes that
// clock's Now to the estimator on every probability query. The same stamps
// drive the one-minute second-chance interval for policy failures
// (minSecondChanceInterval) and MinFailureRelaxInterval. The clock is not
// part of the exported MissionControlConfig; lnd's own tests replace it by
// assigning the unexported field (missioncontrol_test.go:
// ctx.mcController.cfg.clock = ctx.clock).
//
// The reference does what lnd's tests do: setMissionControlClock puts a
// clock reading the scenario's virtual time into that field (through
// reflect, as the field is unexported). Then every stamp, every `now` the
// estimators see, the second-chance interval and the relax interval are on
// the virtual clock, as if lnd ran in the scenario's time. The one liberty
// taken is ResultAge: queries read the clock a millisecond after the
// virtual instant at which results are stamped (see there).
//
// Should the field ever be missing (another lnd version), the reference
// falls back to a time mapping: the estimator wrappers below replace `now`
// by the virtual time and map each stored wall-clock stamp to the virtual
// time of the report that made it (each report call is bracketed by wall
// readings). That fallback cannot reach the second-chance and relax
// intervals, which then stay on the wall clock.

// ResultAge is how much later than a result's report mission control is
// next queried. lnd stamps a result when its lifecycle handles it and
// queries mission control a few milliseconds later, when it looks for the
// next route; the simulator reports a round's results and asks for the
// next routes at the same virtual instant. Were the age exactly zero, the
// bimodal estimator would ignore a fresh failure recorded at amount 0
// (node failures, unreadable failures): at age zero its decayed fail
// amount is 0, which it treats as no information, while at any positive
// age it rules out every amount above a few msat, as in lnd. So mission
// control stamps reports at the virtual time and estimates at the virtual
// time plus ResultAge. One millisecond moves nothing else measurably (the
// apriori penalty half-life is an hour, the bimodal decay time a week).
const ResultAge = time.Millisecond

// virtualClock is a clock.Clock reading the scenario's virtual time from the
// gossip view of the run: the view's time while a result is reported,
// ResultAge later otherwise.
type virtualClock struct {
	mu        sync.Mutex
	view      routing.SimNetworkView
	reporting bool

	// mapping is on in the fallback mode; marks then holds, for each
	// report made to mission control, the wall-clock interval of the call
	// and the virtual time it happened at, in call order.
	mapping bool
	marks   []timeMark
}

var _ clock.Clock = (*virtualClock)(nil)

// timeMark is one report to mission control: mission control stamped it
// with a wall time in [from, to]; it happened at virtual time at.
type timeMark struct {
	from, to time.Time
	at       time.Time
}

// setView makes the clock read view's time.
func (c *virtualClock) setView(view routing.SimNetworkView) {
	c.mu.Lock()
	c.view = view
	c.mu.Unlock()
}

// Now is the virtual time while a result is reported, ResultAge later
// otherwise (the zero time before any view was set).
func (c *virtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reporting {
		return c.virtualLocked()
	}
	return c.queryTimeLocked()
}

// virtualLocked is the view's time.
func (c *virtualClock) virtualLocked() time.Time {
	if c.view == nil {
		return time.Time{}
	}
	return c.view.Now()
}

// queryTimeLocked is the time mission control is queried at.
func (c *virtualClock) queryTimeLocked() time.Time {
	if c.view == nil {
		return time.Time{}
	}
	return c.view.Now().Add(ResultAge)
}

// TickAfter is part of clock.Clock; mission control does not call it. It
// ticks after d of wall time.
func (c *virtualClock) TickAfter(d time.Duration) <-chan time.Time {
	return time.After(d)
}

// startMapping switches the fallback mode on.
func (c *virtualClock) startMapping() {
	c.mu.Lock()
	c.mapping = true
	c.mu.Unlock()
}

// report runs one report to mission control, during which the clock reads
// the view's time; in the fallback mode it records the wall-clock interval
// the report's stamp falls in.
func (c *virtualClock) report(f func()) {
	c.mu.Lock()
	mapping := c.mapping
	c.reporting = true
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.reporting = false
		c.mu.Unlock()
	}()
	if !mapping {
		f()
		return
	}
	from := time.Now().Round(0)
	f()
	to := time.Now().Round(0)
	c.mu.Lock()
	c.marks = append(c.marks, timeMark{from: from, to: to, at: c.virtualLocked()})
	c.mu.Unlock()
}

// estimatorInputs turns what mission control hands an estimator into
// virtual time. With mission control on the virtual clock they already
// are; in the fallback mode now becomes the virtual time and every stamp
// the virtual time of the report that made it.
func (c *virtualClock) estimatorInputs(now time.Time,
	results lndrouting.NodeResults) (time.Time, lndrouting.NodeResults) {

	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.mapping {
		return now, results
	}
	mapped := make(lndrouting.NodeResults, len(results))
	for node, r := range results {
		r.FailTime = c.mapStampLocked(r.FailTime)
		r.SuccessTime = c.mapStampLocked(r.SuccessTime)
		mapped[node] = r
	}
	return c.queryTimeLocked(), mapped
}

// mapStampLocked maps a wall-clock stamp to the virtual time of the report
// whose call interval holds it (the last report started before it). The
// zero time, which means "never", stays zero.
func (c *virtualClock) mapStampLocked(wall time.Time) time.Time {
	if wall.IsZero() || len(c.marks) == 0 {
		return wall
	}
	i := sort.Search(len(c.marks), func(i int) bool {
		return c.marks[i].from.After(wall)
	}) - 1
	if i < 0 {
		i = 0
	}
	return c.marks[i].at
}

// setMissionControlClock sets mission control's clock, as lnd's own tests
// do, so that mission control stamps results with, and estimates at, the
// virtual time. All of a controller's namespaces share its config, so the
// clock reaches every MissionControl it made or will make.
func setMissionControlClock(ctrl *lndrouting.MissionController, clk clock.Clock) error {
	cfg := reflect.ValueOf(ctrl).Elem().FieldByName("cfg")
	if !cfg.IsValid() || cfg.Kind() != reflect.Pointer || cfg.IsNil() {
		return errors.New("lndref: MissionController has no cfg pointer")
	}
	field := cfg.Elem().FieldByName("clock")
	want := reflect.TypeFor[clock.Clock]()
	if !field.IsValid() || field.Type() != want || !field.CanAddr() {
		return errors.New("lndref: mission control config has no clock.Clock field")
	}
	// The field is unexported: write it through its address.
	target := reflect.NewAt(want, unsafe.Pointer(field.UnsafeAddr())).Elem()
	target.Set(reflect.ValueOf(clk))
	return nil
}

// virtualTimeEstimator is one of lnd's estimators (apriori or bimodal)
// seeing virtual time; everything but the two probability queries is the
// wrapped estimator's own.
type virtualTimeEstimator struct {
	lndrouting.Estimator
	clock *virtualClock
}

// PairProbability is lnd's, at virtual time.
func (e *virtualTimeEstimator) PairProbability(now time.Time,
	results lndrouting.NodeResults, toNode route.Vertex,
	amt lnwire.MilliSatoshi, capacity btcutil.Amount) float64 {

	now, results = e.clock.estimatorInputs(now, results)
	return e.Estimator.PairProbability(now, results, toNode, amt, capacity)
}

// LocalPairProbability is lnd's, at virtual time.
func (e *virtualTimeEstimator) LocalPairProbability(now time.Time,
	results lndrouting.NodeResults, toNode route.Vertex) float64 {

	now, results = e.clock.estimatorInputs(now, results)
	return e.Estimator.LocalPairProbability(now, results, toNode)
}
