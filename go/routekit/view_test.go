package routekit

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// testChannel is one channel of a test graph: nodes by small number, node 1
// the smaller, and each direction's policy (nil: none announced).
type testChannel struct {
	scid     uint64
	a, b     byte
	capSat   int64
	fromA    *routing.CachedEdgePolicy
	fromB    *routing.CachedEdgePolicy
	disabled bool
}

// pol is a policy with a base fee (msat) and a rate (ppm).
func pol(base, ppm lnwire.MilliSatoshi) *routing.CachedEdgePolicy {
	return &routing.CachedEdgePolicy{FeeBaseMSat: base, FeeProportionalMillionths: ppm,
		TimeLockDelta: 40, MaxHTLC: 1 << 50}
}

// vertex is test node n's key; the order of keys is the order of numbers.
func vertex(n byte) route.Vertex {
	var v route.Vertex
	v[0], v[32] = 2, n
	return v
}

// fakeView is a SimNetworkView over fixed channels.
type fakeView struct {
	nodes []route.Vertex
	chans map[route.Vertex][]*routing.DirectedChannel
	now   time.Time
}

func (v *fakeView) ForEachNode(cb func(route.Vertex) error) error {
	for _, n := range v.nodes {
		if err := cb(n); err != nil {
			return err
		}
	}
	return nil
}

func (v *fakeView) ForEachNodeDirectedChannel(n route.Vertex,
	cb func(*routing.DirectedChannel) error) error {
	for _, ch := range v.chans[n] {
		c := *ch
		if err := cb(&c); err != nil {
			return err
		}
	}
	return nil
}

func (v *fakeView) FetchNodeFeatures(route.Vertex) *lnwire.FeatureVector { return nil }
func (v *fakeView) Now() time.Time                                       { return v.now }
func (v *fakeView) BlockHeight() uint32                                  { return 800_000 }

// addChannel lists a channel at both ends. fromX is X's policy, which the
// other end reads as its InPolicy.
func (v *fakeView) addChannel(scid uint64, x, y route.Vertex, capSat int64,
	fromX, fromY *routing.CachedEdgePolicy) {

	xIsNode1 := string(x[:]) < string(y[:])
	if fromX != nil {
		fromX.ChannelID, fromX.IsNode1 = scid, xIsNode1
	}
	if fromY != nil {
		fromY.ChannelID, fromY.IsNode1 = scid, !xIsNode1
	}
	listed := func(own, in *routing.CachedEdgePolicy, isNode1 bool, other route.Vertex) *routing.DirectedChannel {
		dc := &routing.DirectedChannel{ChannelID: scid, IsNode1: isNode1, OtherNode: other,
			Capacity: capSat, OutPolicySet: own != nil, InPolicy: in}
		if own != nil { // the listed node's inbound fee, from its own policy
			dc.InboundFeeBaseMSat, dc.InboundFeeRate = own.InboundFeeBaseMSat, own.InboundFeeRate
		}
		return dc
	}
	v.chans[x] = append(v.chans[x], listed(fromX, fromY, xIsNode1, y))
	v.chans[y] = append(v.chans[y], listed(fromY, fromX, !xIsNode1, x))
}

func newTestView(nodes byte, chans []testChannel) *fakeView {
	v := &fakeView{chans: map[route.Vertex][]*routing.DirectedChannel{},
		now: time.Unix(1_700_000_000, 0)}
	for n := byte(0); n < nodes; n++ {
		v.nodes = append(v.nodes, vertex(n))
	}
	for _, c := range chans {
		if c.disabled {
			if c.fromA != nil {
				c.fromA.IsDisabled = true
			}
		}
		v.addChannel(c.scid, vertex(c.a), vertex(c.b), c.capSat, c.fromA, c.fromB)
	}
	return v
}

// realGraph is the 2021 mainnet graph of ../shared/data as a view, or a
// skip when the data is absent.
func realGraph(tb testing.TB) *fakeView {
	tb.Helper()
	path := filepath.Join("..", "..", "..", "shared", "data", "ln-listchannels-2021-04-16.json.gz")
	f, err := os.Open(path)
	if err != nil {
		tb.Skipf("the 2021 mainnet graph is absent (%s): real-graph benchmarks skipped", path)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var doc struct {
		Channels []struct {
			Source, Destination string
			ShortChannelID      string `json:"short_channel_id"`
			Satoshis            int64
			Base                uint64 `json:"base_fee_millisatoshi"`
			PPM                 uint64 `json:"fee_per_millionth"`
			Delay               uint16
			Active              bool
			MinMsat             any `json:"htlc_minimum_msat"`
			MaxMsat             any `json:"htlc_maximum_msat"`
		}
	}
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		tb.Fatal(err)
	}
	type half struct {
		x, y route.Vertex
		cap  int64
		pol  *routing.CachedEdgePolicy
	}
	byScid := map[string][]half{}
	seen := map[route.Vertex]bool{}
	for _, c := range doc.Channels {
		x, errX := route.NewVertexFromStr(c.Source)
		y, errY := route.NewVertexFromStr(c.Destination)
		if errX != nil || errY != nil {
			continue
		}
		p := &routing.CachedEdgePolicy{FeeBaseMSat: lnwire.MilliSatoshi(c.Base),
			FeeProportionalMillionths: lnwire.MilliSatoshi(c.PPM), TimeLockDelta: c.Delay,
			MinHTLC: msatOf(c.MinMsat), MaxHTLC: msatOf(c.MaxMsat), IsDisabled: !c.Active}
		if p.MaxHTLC == 0 {
			p.MaxHTLC = lnwire.MilliSatoshi(c.Satoshis) * 1000
		}
		byScid[c.ShortChannelID] = append(byScid[c.ShortChannelID], half{x, y, c.Satoshis, p})
		seen[x], seen[y] = true, true
	}
	v := &fakeView{chans: map[route.Vertex][]*routing.DirectedChannel{},
		now: time.Unix(1_618_565_600, 0)}
	for n := range seen {
		v.nodes = append(v.nodes, n)
	}
	sort.Slice(v.nodes, func(i, j int) bool { return string(v.nodes[i][:]) < string(v.nodes[j][:]) })
	keys := make([]string, 0, len(byScid))
	for k := range byScid {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		h := byScid[k]
		var fromY *routing.CachedEdgePolicy
		if len(h) > 1 {
			fromY = h[1].pol
		}
		v.addChannel(uint64(i+1), h[0].x, h[0].y, h[0].cap, h[0].pol, fromY)
	}
	return v
}

// msatOf reads a listchannels amount: a number or a string "123msat".
func msatOf(x any) lnwire.MilliSatoshi {
	switch t := x.(type) {
	case float64:
		return lnwire.MilliSatoshi(t)
	case string:
		var n uint64
		for _, r := range t {
			if r < '0' || r > '9' {
				break
			}
			n = n*10 + uint64(r-'0')
		}
		return lnwire.MilliSatoshi(n)
	}
	return 0
}
