package realnet

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
	"github.com/routesim-evolve/routesim/scenario"
)

const (
	keyA = "02" + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	keyB = "03" + "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// directRouter sends everything over the sender's first channel to the
// target and remembers what it was told.
type directRouter struct {
	view   routing.SimNetworkView
	source route.Vertex
	spec   *routing.SimPaymentSpec
	told   []*routing.SimAttemptResult
	ended  *routing.SimPaymentOutcome
}

var lastRouter *directRouter

func newDirect(view routing.SimNetworkView, source route.Vertex,
	_ map[uint64]lnwire.MilliSatoshi, spec *routing.SimPaymentSpec) (routing.SimRouter, error) {
	lastRouter = &directRouter{view: view, source: source, spec: spec}
	return lastRouter, nil
}

func (r *directRouter) RequestRoute(amt lnwire.MilliSatoshi, _ uint32) (*route.Route, error) {
	var rt *route.Route
	err := r.view.ForEachNodeDirectedChannel(r.source, func(c *routing.DirectedChannel) error {
		if rt == nil && c.OtherNode == r.spec.Target {
			rt = &route.Route{
				TotalTimeLock: r.view.BlockHeight() + uint32(r.spec.FinalCLTVDelta),
				TotalAmount:   amt, SourcePubKey: r.source,
				Hops: []*route.Hop{{PubKeyBytes: c.OtherNode, ChannelID: c.ChannelID,
					AmtToForward: amt, OutgoingTimeLock: r.view.BlockHeight() + uint32(r.spec.FinalCLTVDelta)}},
			}
		}
		return nil
	})
	if err == nil && rt == nil {
		err = errors.New("no channel to the target")
	}
	return rt, err
}

func (r *directRouter) ReportAttempt(_ uint64, _ *route.Route, res *routing.SimAttemptResult) error {
	r.told = append(r.told, res)
	return nil
}

func (r *directRouter) PaymentEnded(o *routing.SimPaymentOutcome) { r.ended = o }

func graph() scenario.Graph {
	return scenario.Graph{
		Format: "routesim-graph/1",
		Nodes:  []scenario.Node{{ID: keyA}, {ID: keyB}},
		Channels: []scenario.Channel{{SCID: "101x1x0", Node1: keyA, Node2: keyB, CapacitySat: 1_000_000,
			Policy1: &scenario.Policy{FeeBaseMsat: 1000, FeeRatePPM: 1, CltvDelta: 40, HtlcMinMsat: 1000},
			Policy2: &scenario.Policy{FeeBaseMsat: 1000, FeeRatePPM: 1, CltvDelta: 40, HtlcMinMsat: 1000}}},
	}
}

func lines(t *testing.T, reqs ...Request) string {
	t.Helper()
	var b strings.Builder
	for _, r := range reqs {
		raw, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
		b.WriteByte('\n')
	}
	return b.String()
}

func begin() *Begin {
	return &Begin{
		Graph: graph(), UnixTime: 1_700_000_000, BlockHeight: 500, Source: keyA,
		LocalBalancesMsat: map[string]uint64{"101x1x0": 600_000_000},
		Payment: Payment{Target: keyB, AmountMsat: 50_000_000, FeeLimitMsat: 10_000, MaxParts: 4,
			MaxAttempts: 10, FinalCLTVDelta: 40, CltvLimit: 2516, PaymentAddr: strings.Repeat("ab", 32)},
	}
}

func TestServeAPayment(t *testing.T) {
	var out bytes.Buffer
	sent := Route{TotalTimeLock: 540, TotalAmountMsat: 50_000_000, Source: keyA,
		Hops: []Hop{{PubKey: keyB, SCID: "101x1x0", AmtToForwardMsat: 50_000_000, OutgoingTimeLock: 540}}}
	in := lines(t,
		Request{Begin: begin()},
		Request{Ask: &Ask{AmountMsat: 50_000_000}},
		Request{Report: &Report{AttemptID: 7, Route: sent, Failure: &Failure{
			Code: "TEMPORARY_CHANNEL_FAILURE", SourceIndex: 0,
			Update: &ChannelUpdate{SCID: "101x1x0", TimeLockDelta: 40, BaseFee: 1000}}}},
		Request{Report: &Report{AttemptID: 8, Route: sent}},
		Request{End: &End{Success: true, DeliveredMsat: 50_000_000}},
	)
	if err := Serve(strings.NewReader(in), &out, newDirect); err != nil {
		t.Fatal(err)
	}
	var answers []Answer
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var a Answer
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatal(err)
		}
		answers = append(answers, a)
	}
	if len(answers) != 5 || answers[1].Route == nil {
		t.Fatalf("answers %+v", answers)
	}
	if got := answers[1].Route; got.Hops[0].SCID != "101x1x0" || got.Hops[0].AmtToForwardMsat != 50_000_000 {
		t.Errorf("route %+v", got)
	}
	r := lastRouter
	if len(r.told) != 2 || r.ended == nil || !r.ended.Success {
		t.Fatalf("router told %+v, ended %+v", r.told, r.ended)
	}
	fail, ok := r.told[0].Failure.(*lnwire.FailTemporaryChannelFailure)
	if !ok || fail.Update == nil || r.told[0].FailureSourceIdx != 0 || r.told[0].FailureSource != r.source {
		t.Errorf("failure %+v", r.told[0])
	}
	if r.told[1].Failure != nil || r.told[1].FailureSourceIdx != -1 {
		t.Errorf("settled %+v", r.told[1])
	}
}

func TestServeRefusesWhatIsNotTheProtocol(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"not JSON", "{\n", ErrProtocol},
		{"two requests in one line", lines(t, Request{Ask: &Ask{}, End: &End{}}), ErrProtocol},
		{"a request before begin", lines(t, Request{Ask: &Ask{AmountMsat: 1}}), ErrNoPayment},
		{"a bad payment address", lines(t, Request{Begin: func() *Begin {
			b := begin()
			b.Payment.PaymentAddr = "00"
			return b
		}()}), ErrProtocol},
		{"an update-carrying code without its update", lines(t, Request{Begin: begin()},
			Request{Report: &Report{Route: Route{Source: keyA}, Failure: &Failure{Code: "FEE_INSUFFICIENT"}}}),
			ErrProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := Serve(strings.NewReader(tt.in), &out, newDirect)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if !strings.Contains(out.String(), `"error"`) {
				t.Errorf("no error answer: %q", out.String())
			}
		})
	}
}

func TestFailureCodes(t *testing.T) {
	upd := &ChannelUpdate{SCID: "1x2x3", BaseFee: 5}
	tests := []struct {
		code string
		want lnwire.FailCode
	}{
		{"TEMPORARY_CHANNEL_FAILURE", lnwire.CodeTemporaryChannelFailure},
		{"UNKNOWN_NEXT_PEER", lnwire.CodeUnknownNextPeer},
		{"FEE_INSUFFICIENT", lnwire.CodeFeeInsufficient},
		{"INCORRECT_CLTV_EXPIRY", lnwire.CodeIncorrectCltvExpiry},
		{"EXPIRY_TOO_SOON", lnwire.CodeExpiryTooSoon},
		{"CHANNEL_DISABLED", lnwire.CodeChannelDisabled},
		{"AMOUNT_BELOW_MINIMUM", lnwire.CodeAmountBelowMinimum},
		{"INCORRECT_OR_UNKNOWN_PAYMENT_DETAILS", lnwire.CodeIncorrectOrUnknownPaymentDetails},
		{"MPP_TIMEOUT", lnwire.CodeMPPTimeout},
		{"EXPIRY_TOO_FAR", lnwire.CodeExpiryTooFar},
		{"UNREADABLE_FAILURE", 0},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			msg, err := failureMessage(&Failure{Code: tt.code, Update: upd})
			if err != nil {
				t.Fatal(err)
			}
			if msg.Code() != tt.want {
				t.Errorf("code %v, want %v", msg.Code(), tt.want)
			}
		})
	}
}
