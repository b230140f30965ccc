package ldkref

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/scenario"
	"github.com/routesim-evolve/routesim/sim"
	"github.com/routesim-evolve/routesim/sim/simtest"
)

// BridgeEnv names the routesim-ldk binary the tests run; unset, they build
// it from ../../ldk with cargo.
const BridgeEnv = "ROUTESIM_LDK_BRIDGE"

var bridgeBuild struct {
	once sync.Once
	path string
	err  error
	skip string
}

// bridgePath is the bridge binary: $ROUTESIM_LDK_BRIDGE, or one cargo builds
// once for the whole test binary. Without either, the test is skipped, or
// fails when $CI is set: a CI run must not pass without the bridge.
func bridgePath(t *testing.T) string {
	t.Helper()
	bridgeBuild.once.Do(func() {
		if path := os.Getenv(BridgeEnv); path != "" {
			if _, err := os.Stat(path); err != nil {
				bridgeBuild.err = fmt.Errorf("$%s: %w", BridgeEnv, err)
			}
			bridgeBuild.path = path
			return
		}
		if _, err := exec.LookPath("cargo"); err != nil {
			bridgeBuild.skip = fmt.Sprintf("no LDK bridge: set $%s to a routesim-ldk binary, "+
				"or put cargo on PATH to build it from ldk/", BridgeEnv)
			return
		}
		bridgeBuild.path, bridgeBuild.err = cargoBuild()
	})
	switch {
	case bridgeBuild.err != nil:
		t.Fatal(bridgeBuild.err)
	case bridgeBuild.skip != "" && os.Getenv("CI") != "":
		t.Fatalf("%s ($CI is set: not skipping)", bridgeBuild.skip)
	case bridgeBuild.skip != "":
		t.Skip(bridgeBuild.skip)
	}
	return bridgeBuild.path
}

// cargoBuild builds the bridge in release mode and returns the executable
// cargo reports, wherever its target directory is.
func cargoBuild() (string, error) {
	manifest := filepath.Join("..", "..", "ldk", "Cargo.toml")
	cmd := exec.Command("cargo", "build", "--release", "--manifest-path", manifest,
		"--message-format=json-render-diagnostics")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("cargo build --release --manifest-path %s: %w\n%s", manifest, err, stderr.String())
	}
	var exe string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var msg struct {
			Reason     string  `json:"reason"`
			Executable *string `json:"executable"`
			Target     struct {
				Name string `json:"name"`
			} `json:"target"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) == nil && msg.Reason == "compiler-artifact" &&
			msg.Target.Name == "routesim-ldk" && msg.Executable != nil {
			exe = *msg.Executable
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("reading cargo's messages: %w", err)
	}
	if exe == "" {
		return "", errors.New("cargo build reported no routesim-ldk executable")
	}
	return exe, nil
}

// loadScenario loads a scenario file relative to the repository's root.
func loadScenario(t *testing.T, rel string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Load(filepath.Join("..", "..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// runLDK plays sc through a fresh LDK reference on the given bridge, the
// way routesim does: NewWorld, Play, Close. It returns the result and the
// fault Close reports.
func runLDK(t *testing.T, sc *scenario.Scenario, bridge string) (*sim.Result, error) {
	t.Helper()
	self, err := scenario.ParseNodeID(sc.Source)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := New(bridge, self)
	if err != nil {
		t.Fatal(err)
	}
	world, err := sim.NewWorld(sc)
	if err != nil {
		t.Fatal(err)
	}
	res, err := world.Play(ref.NewRouter, sim.Options{RouterName: "ldk", CheckConservation: true})
	cerr := ref.Close()
	if err != nil {
		t.Fatalf("Play: %v (Close: %v)", err, cerr)
	}
	return res, cerr
}

// checkResult checks a run's bookkeeping: every payment ended for a reason
// a working router gives, within its limits.
func checkResult(t *testing.T, sc *scenario.Scenario, res *sim.Result) {
	t.Helper()
	if len(res.Payments) != len(sc.Payments) {
		t.Fatalf("%d payment results for %d payments", len(res.Payments), len(sc.Payments))
	}
	for i, p := range res.Payments {
		switch p.FailureReason {
		case sim.ReasonNone, sim.ReasonRouterGaveUp, sim.ReasonAttemptsExhausted:
		default:
			t.Errorf("payment %d: failure reason %q (%s)", i, p.FailureReason, p.Error)
		}
		if p.FeeMsat > p.FeeLimitMsat {
			t.Errorf("payment %d: fee %d over the limit %d", i, p.FeeMsat, p.FeeLimitMsat)
		}
		if p.Success != (p.DeliveredMsat == p.AmountMsat) {
			t.Errorf("payment %d: success %v, delivered %d of %d", i, p.Success, p.DeliveredMsat, p.AmountMsat)
		}
		if len(p.AttemptLog) != p.Attempts {
			t.Errorf("payment %d: %d attempts, %d logged", i, p.Attempts, len(p.AttemptLog))
		}
	}
}

var exampleScenarios = []string{
	"docs/examples/base-example.json",
	"docs/examples/drift-example.json",
	"docs/examples/atomic-example.json",
	"docs/examples/attribution-example.json",
	"corpus/test/base-001.json",
	"corpus/test/attribution-001.json",
}

// forEachExample runs test on every example scenario, in parallel
// subtests, with the scenario loaded afresh and the bridge's path.
func forEachExample(t *testing.T, test func(t *testing.T, rel, bridge string, sc *scenario.Scenario)) {
	bridge := bridgePath(t)
	for _, rel := range exampleScenarios {
		t.Run(filepath.Base(rel), func(t *testing.T) {
			t.Parallel()
			test(t, rel, bridge, loadScenario(t, rel))
		})
	}
}

// TestRunsAreWholeAndReproducible plays whole scenarios through LDK: the
// bridge reports no fault, at least one payment is delivered, and a second
// run gives the same result byte for byte.
func TestRunsAreWholeAndReproducible(t *testing.T) {
	forEachExample(t, func(t *testing.T, rel, bridge string, sc *scenario.Scenario) {
		first, err := runLDK(t, sc, bridge)
		if err != nil {
			t.Fatalf("the run's fault: %v", err)
		}
		checkResult(t, sc, first)
		if first.Totals.Succeeded == 0 || first.Totals.DeliveredMsat == 0 {
			t.Errorf("nothing delivered: %+v", first.Totals)
		}
		t.Logf("%d/%d succeeded, %d attempts, fee %.1f ppm", first.Totals.Succeeded,
			first.Totals.Payments, first.Totals.Attempts, first.Totals.FeePPM)
		second, err := runLDK(t, loadScenario(t, rel), bridge)
		if err != nil {
			t.Fatalf("the second run's fault: %v", err)
		}
		if a, b := simtest.ResultJSON(t, first), simtest.ResultJSON(t, second); !bytes.Equal(a, b) {
			t.Errorf("two runs differ:\n%s\n%s", a, b)
		}
	})
}

// TestRoutesRespectThePolicies: with gossip that is never stale, LDK's
// routes, converted to lnd's encoding, pay every hop the fee and cltv delta
// it announced, so no attempt fails for either, and every route's time lock
// lies between the receiver's final delta and the payment's cltv limit.
func TestRoutesRespectThePolicies(t *testing.T) {
	forEachExample(t, func(t *testing.T, rel, bridge string, sc *scenario.Scenario) {
		sc.Gossip.StaleShare = 0
		res, err := runLDK(t, sc, bridge)
		if err != nil {
			t.Fatalf("the run's fault: %v", err)
		}
		checkResult(t, sc, res)
		const blockInterval = 10 * time.Minute
		interval := time.Duration(sc.Clock.PaymentIntervalSec * float64(time.Second))
		now := sc.StartTime
		attempts := 0
		for i, p := range res.Payments {
			// The payment starts at its slot, or when the one before
			// ended, whichever is later.
			if slot := sc.StartTime.Add(time.Duration(i) * interval); slot.After(now) {
				now = slot
			}
			height := sc.BlockHeight + uint32(now.Sub(sc.StartTime)/blockInterval)
			lowest := height + 1 + uint32(sc.Defaults.FinalCLTVDelta)
			limit := height + sc.Defaults.CltvLimitDelta
			for k, a := range p.AttemptLog {
				attempts++
				switch a.Outcome {
				case "fee_insufficient", "incorrect_cltv_expiry":
					t.Errorf("payment %d attempt %d: %s with exact gossip: %+v", i, k, a.Outcome, a)
				}
				if a.TimeLock < lowest || a.TimeLock > limit {
					t.Errorf("payment %d attempt %d: time lock %d outside [%d, %d]",
						i, k, a.TimeLock, lowest, limit)
				}
			}
			now = now.Add(time.Duration(p.ElapsedSec * float64(time.Second)))
		}
		if attempts == 0 {
			t.Error("no attempt at all")
		}
	})
}

// TestNewNeedsABridge: New refuses an empty bridge path, naming the flag.
func TestNewNeedsABridge(t *testing.T) {
	self := route.Vertex{2}
	for _, tc := range []struct {
		bridge string
		ok     bool
	}{
		{bridge: "", ok: false},
		{bridge: "/nonexistent/routesim-ldk", ok: true}, // found out at the first payment
		{bridge: "routesim-ldk", ok: true},
	} {
		ref, err := New(tc.bridge, self)
		switch {
		case tc.ok && err != nil:
			t.Errorf("New(%q): %v", tc.bridge, err)
		case !tc.ok && err == nil:
			t.Errorf("New(%q): no error", tc.bridge)
		case !tc.ok && !strings.Contains(err.Error(), "--ldk-bridge"):
			t.Errorf("New(%q): %q does not say how to give the bridge", tc.bridge, err)
		case tc.ok:
			// Nothing ran: closing is no fault.
			if err := ref.Close(); err != nil {
				t.Errorf("New(%q): Close before any payment: %v", tc.bridge, err)
			}
		}
	}
}

// TestBrokenBridgeFailsTheRun: a bridge that cannot be started, exits or
// answers nonsense makes the run fail with an error from Close (as routesim
// reports it), and every payment fails with that fault, none for a reason
// of LDK's own.
func TestBrokenBridgeFailsTheRun(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cases := []struct {
		name   string
		bridge string
		want   string
		unix   bool
	}{
		{name: "not there", bridge: filepath.Join(dir, "no-such-routesim-ldk"), want: "starting the bridge"},
		{name: "a directory", bridge: dir, want: "starting the bridge"},
		{name: "exits at once", bridge: script("exits", "exit 3"), want: "the bridge", unix: true},
		{name: "answers nonsense", bridge: script("nonsense", "while read l; do echo nonsense; done"),
			want: "the bridge's answer", unix: true},
		{name: "refuses", bridge: script("refuses", `while read l; do echo '{"error":"boom"}'; done`),
			want: "boom", unix: true},
		{name: "answers nothing useful", bridge: script("empty", "while read l; do echo '{}'; done"),
			want: "neither a path nor a reason", unix: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.unix && runtime.GOOS == "windows" {
				t.Skip("needs /bin/sh")
			}
			sc := loadScenario(t, "docs/examples/base-example.json")
			res, err := runLDK(t, sc, tc.bridge)
			if err == nil {
				t.Fatalf("the run of a broken bridge has no fault: %+v", res.Totals)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "ldkref: ") {
				t.Errorf("fault %q does not say %q", err, tc.want)
			}
			if res.Totals.Succeeded != 0 || res.Totals.DeliveredMsat != 0 {
				t.Errorf("a broken bridge delivered: %+v", res.Totals)
			}
			// A payment may end as the router giving up, but for the
			// fault, never for a reason of LDK's own.
			for i, p := range res.Payments {
				if p.FailureReason == sim.ReasonNone || !strings.HasPrefix(p.Error, "ldkref: ") {
					t.Errorf("payment %d: %q (%s): not the bridge's fault",
						i, p.FailureReason, p.Error)
				}
			}
		})
	}
}

// TestRouteConversion: LDK's path in lnd's encoding. Hop k's fee_msat is
// what node k charges for the next channel (the last hop's, the amount
// delivered), its cltv_delta what node k adds (the last hop's, the final
// delta); LDK builds HTLC locks from the next block.
func TestRouteConversion(t *testing.T) {
	const height = 800_000
	self := route.Vertex{0x02, 0xaa}
	ids := []route.Vertex{self, {0x02, 1}, {0x02, 2}, {0x03, 3}}
	type hop struct {
		node int
		scid uint64
		amt  lnwire.MilliSatoshi
		lock uint32
	}
	for _, tc := range []struct {
		name      string
		hops      []hopMsg
		total     lnwire.MilliSatoshi
		totalLock uint32
		want      []hop
		err       string
	}{
		{
			name: "three hops",
			hops: []hopMsg{
				{SCID: 11, Node: 1, FeeMsat: 100, CltvDelta: 40},
				{SCID: 12, Node: 2, FeeMsat: 50, CltvDelta: 80},
				{SCID: 13, Node: 3, FeeMsat: 1_000_000, CltvDelta: 144},
			},
			total: 1_000_150, totalLock: height + 1 + 40 + 80 + 144,
			want: []hop{
				{node: 1, scid: 11, amt: 1_000_050, lock: height + 1 + 80 + 144},
				{node: 2, scid: 12, amt: 1_000_000, lock: height + 1 + 144},
				{node: 3, scid: 13, amt: 1_000_000, lock: height + 1 + 144},
			},
		},
		{
			name:  "one hop",
			hops:  []hopMsg{{SCID: 21, Node: 3, FeeMsat: 5_000, CltvDelta: 52}},
			total: 5_000, totalLock: height + 1 + 52,
			want: []hop{{node: 3, scid: 21, amt: 5_000, lock: height + 1 + 52}},
		},
		{
			name: "free hops",
			hops: []hopMsg{
				{SCID: 31, Node: 2, FeeMsat: 0, CltvDelta: 0},
				{SCID: 32, Node: 1, FeeMsat: 7, CltvDelta: 18},
			},
			total: 7, totalLock: height + 1 + 18,
			want: []hop{
				{node: 2, scid: 31, amt: 7, lock: height + 1 + 18},
				{node: 1, scid: 32, amt: 7, lock: height + 1 + 18},
			},
		},
		{name: "empty", err: "empty path"},
		{name: "unknown node", hops: []hopMsg{{SCID: 1, Node: 4, FeeMsat: 1, CltvDelta: 1}}, err: "node 4"},
		{name: "negative node", hops: []hopMsg{{SCID: 1, Node: -1, FeeMsat: 1, CltvDelta: 1}}, err: "node -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := &Reference{self: self, ids: ids}
			p := &paymentRouter{ref: ref, height: height}
			rt, err := p.route(&pathMsg{ID: 7, Hops: tc.hops})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rt.SourcePubKey != self || rt.TotalAmount != tc.total || rt.TotalTimeLock != tc.totalLock {
				t.Errorf("route from %x: total %d, lock %d; want %d, %d",
					rt.SourcePubKey[:2], rt.TotalAmount, rt.TotalTimeLock, tc.total, tc.totalLock)
			}
			if len(rt.Hops) != len(tc.want) {
				t.Fatalf("%d hops, want %d", len(rt.Hops), len(tc.want))
			}
			for k, w := range tc.want {
				h := rt.Hops[k]
				got := hop{scid: h.ChannelID, amt: h.AmtToForward, lock: h.OutgoingTimeLock, node: -1}
				for i, id := range ids {
					if id == h.PubKeyBytes {
						got.node = i
					}
				}
				if got != w {
					t.Errorf("hop %d: %+v, want %+v", k, got, w)
				}
			}
			if fee := rt.TotalFees(); fee != tc.total-tc.want[len(tc.want)-1].amt {
				t.Errorf("fee %d", fee)
			}
		})
	}
}

// TestAllowsMPP: a receiver that announced no features is taken to allow
// MPP, as lndref does; one that announced some must list MPP.
func TestAllowsMPP(t *testing.T) {
	for _, tc := range []struct {
		name string
		fv   *lnwire.FeatureVector
		want bool
	}{
		{"nil", nil, true},
		{"empty", lnwire.EmptyFeatureVector(), true},
		{"mpp optional", lnwire.NewFeatureVector(lnwire.NewRawFeatureVector(lnwire.MPPOptional), lnwire.Features), true},
		{"mpp required", lnwire.NewFeatureVector(lnwire.NewRawFeatureVector(lnwire.MPPRequired), lnwire.Features), true},
		{"no mpp", lnwire.NewFeatureVector(lnwire.NewRawFeatureVector(lnwire.TLVOnionPayloadRequired), lnwire.Features), false},
	} {
		if got := allowsMPP(tc.fv); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
