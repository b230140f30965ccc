package sim

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/routesim-evolve/routesim/scenario"
)

// shiftSpread is the log-normal sigma of background shift sizes.
const shiftSpread = 0.8

// trafficStream is the background traffic of other participants: a Poisson
// stream of liquidity shifts on remote channels. The stream is a fixed
// sequence of timed events drawn from the seed; the clock decides how much
// of it has been played, so two routers see the same events.
type trafficStream struct {
	rng        *rand.Rand
	net        *Network
	remote     []int // channels the sender is not an end of
	perSecond  float64
	medianMsat float64
	next       time.Time
	played     int

	// observe, when set, sees every event as it is played (for tests).
	observe func(trafficEvent)
}

// trafficEvent is one background shift: up to amt from end dir of channel.
type trafficEvent struct {
	at      time.Time
	channel int
	dir     int
	amt     lnwire.MilliSatoshi
}

func newTrafficStream(sc *scenario.Scenario, net *Network, source int) *trafficStream {
	t := &trafficStream{
		rng:        newStream(sc.Seed, streamTraffic),
		net:        net,
		perSecond:  sc.Traffic.EventsPerHour / 3600,
		medianMsat: sc.Traffic.MedianShiftSat * 1000,
		next:       sc.StartTime,
	}
	for i := range net.channels {
		if net.channels[i].direction(source) < 0 {
			t.remote = append(t.remote, i)
		}
	}
	t.scheduleNext()
	return t
}

// scheduleNext draws the time of the next event.
func (t *trafficStream) scheduleNext() {
	if t.perSecond <= 0 || len(t.remote) == 0 {
		t.next = time.Time{}
		return
	}
	gap := t.rng.ExpFloat64() / t.perSecond
	t.next = t.next.Add(seconds(gap))
}

// playUntil applies every event up to and including now.
func (t *trafficStream) playUntil(now time.Time) {
	for !t.next.IsZero() && !t.next.After(now) {
		ev := trafficEvent{at: t.next, channel: t.remote[t.rng.IntN(len(t.remote))], dir: t.rng.IntN(2)}
		ev.amt = lnwire.MilliSatoshi(t.medianMsat * math.Exp(shiftSpread*t.rng.NormFloat64()))
		t.net.channels[ev.channel].shift(ev.dir, ev.amt)
		t.played++
		if t.observe != nil {
			t.observe(ev)
		}
		t.scheduleNext()
	}
}
