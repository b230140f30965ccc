package realnet

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
	"github.com/routesim-evolve/routesim/scenario"
	"github.com/routesim-evolve/routesim/sim"
)

// MaxLineBytes bounds one request line: a real graph of 10,000 nodes and
// 50,000 channels fits many times over.
const MaxLineBytes = 256 << 20

// Errors of a session, in one block.
var (
	// ErrProtocol is a line that is not one request of the protocol.
	ErrProtocol = errors.New("realnet: bad request")

	// ErrNoPayment is a request or report outside a payment.
	ErrNoPayment = errors.New("realnet: no payment begun")
)

// Serve answers the driver's requests on in with the routers factory
// makes, one per payment, until in ends. It returns nil at the end of the
// input, or the error that ended the session (ErrProtocol wrapped).
func Serve(in io.Reader, out io.Writer, factory routing.RouterFactory) error {
	s := &session{factory: factory, enc: json.NewEncoder(out)}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<20), MaxLineBytes)
	for sc.Scan() {
		var req Request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return s.fatal(fmt.Errorf("%w: %v", ErrProtocol, err))
		}
		answer, err := s.handle(&req)
		if err != nil {
			return s.fatal(err)
		}
		if err := s.enc.Encode(answer); err != nil {
			return err
		}
	}
	return sc.Err()
}

// session is one driver's connection: the router of the payment under way.
type session struct {
	factory routing.RouterFactory
	enc     *json.Encoder
	router  routing.SimRouter
}

func (s *session) fatal(err error) error {
	_ = s.enc.Encode(Answer{Error: err.Error()})
	return err
}

// handle answers one request; an error is a protocol error that ends the
// session, while the router's own errors are answers.
func (s *session) handle(req *Request) (Answer, error) {
	if req.kinds() != 1 {
		return Answer{}, fmt.Errorf("%w: exactly one of begin, request, report, end", ErrProtocol)
	}
	if req.Begin != nil {
		return s.begin(req.Begin)
	}
	if s.router == nil {
		return Answer{}, ErrNoPayment
	}
	switch {
	case req.Ask != nil:
		return s.ask(req.Ask), nil
	case req.Report != nil:
		return s.report(req.Report)
	default:
		return s.end(req.End), nil
	}
}

// kinds is how many of the request's fields are set.
func (r *Request) kinds() int {
	n := 0
	for _, set := range []bool{r.Begin != nil, r.Ask != nil, r.Report != nil, r.End != nil} {
		if set {
			n++
		}
	}
	return n
}

// end tells the router how its payment ended, if it asks to be told, and
// closes the payment.
func (s *session) end(e *End) Answer {
	if obs, ok := s.router.(routing.PaymentEndObserver); ok {
		obs.PaymentEnded(&routing.SimPaymentOutcome{
			Success:   e.Success,
			Delivered: lnwire.MilliSatoshi(e.DeliveredMsat),
			Fees:      lnwire.MilliSatoshi(e.FeesMsat),
			Released:  e.Released,
		})
	}
	s.router = nil
	return Answer{OK: true}
}

func (s *session) begin(b *Begin) (Answer, error) {
	if err := b.Graph.Validate(); err != nil {
		return Answer{}, fmt.Errorf("%w: graph: %v", ErrProtocol, err)
	}
	view, err := sim.NewGraphView(&b.Graph, time.Unix(b.UnixTime, 0).UTC(), b.BlockHeight)
	if err != nil {
		return Answer{}, fmt.Errorf("%w: graph: %v", ErrProtocol, err)
	}
	source, err := scenario.ParseNodeID(b.Source)
	if err != nil {
		return Answer{}, fmt.Errorf("%w: source: %v", ErrProtocol, err)
	}
	local := make(map[uint64]lnwire.MilliSatoshi, len(b.LocalBalancesMsat))
	for scid, msat := range b.LocalBalancesMsat {
		id, err := scenario.ParseSCID(scid)
		if err != nil {
			return Answer{}, fmt.Errorf("%w: local balance %q: %v", ErrProtocol, scid, err)
		}
		local[id] = lnwire.MilliSatoshi(msat)
	}
	spec, err := b.Payment.spec()
	if err != nil {
		return Answer{}, err
	}
	router, err := s.factory(view, source, local, spec)
	if err != nil {
		return Answer{Error: "router: " + err.Error()}, nil
	}
	s.router = router
	return Answer{OK: true}, nil
}

func (p *Payment) spec() (*routing.SimPaymentSpec, error) {
	target, err := scenario.ParseNodeID(p.Target)
	if err != nil {
		return nil, fmt.Errorf("%w: payment target: %v", ErrProtocol, err)
	}
	addr, err := hex.DecodeString(p.PaymentAddr)
	if err != nil || len(addr) != 32 {
		return nil, fmt.Errorf("%w: payment_addr: want 32 bytes of hex", ErrProtocol)
	}
	spec := &routing.SimPaymentSpec{
		Index: p.Index, Target: target, Amount: lnwire.MilliSatoshi(p.AmountMsat),
		FeeLimit: lnwire.MilliSatoshi(p.FeeLimitMsat), MaxParts: p.MaxParts,
		MaxAttempts: p.MaxAttempts, FinalCLTVDelta: p.FinalCLTVDelta,
		CltvLimit: p.CltvLimit, Atomic: p.Atomic,
	}
	copy(spec.PaymentAddr[:], addr)
	return spec, nil
}

// ask is the router's route for the amount, or its refusal as an answer.
func (s *session) ask(a *Ask) Answer {
	rt, err := s.router.RequestRoute(lnwire.MilliSatoshi(a.AmountMsat), a.InFlight)
	if err != nil {
		return Answer{Error: "router: " + err.Error()}
	}
	if rt == nil {
		return Answer{Error: "router: no route and no error"}
	}
	out := routeOut(rt)
	if l, ok := s.router.(routing.RouteLabeler); ok {
		out.Label = l.RouteLabel(rt)
	}
	return Answer{Route: out}
}

func (s *session) report(r *Report) (Answer, error) {
	rt, err := routeIn(&r.Route)
	if err != nil {
		return Answer{}, err
	}
	result := &routing.SimAttemptResult{FailureSourceIdx: -1}
	if f := r.Failure; f != nil {
		msg, err := failureMessage(f)
		if err != nil {
			return Answer{}, err
		}
		result.Failure = msg
		result.FailureSourceIdx = f.SourceIndex
		switch {
		case f.SourceIndex == 0:
			result.FailureSource = rt.SourcePubKey
		case f.SourceIndex > 0 && f.SourceIndex <= len(rt.Hops):
			result.FailureSource = rt.Hops[f.SourceIndex-1].PubKeyBytes
		default:
			result.FailureSourceIdx = -1
		}
	}
	if err := s.router.ReportAttempt(r.AttemptID, rt, result); err != nil {
		return Answer{Error: "router: " + err.Error()}, nil
	}
	return Answer{OK: true}, nil
}

// routeOut is the wire form of a router's route.
func routeOut(rt *route.Route) *Route {
	out := &Route{
		TotalTimeLock:   rt.TotalTimeLock,
		TotalAmountMsat: uint64(rt.TotalAmount),
		Source:          hex.EncodeToString(rt.SourcePubKey[:]),
		Hops:            make([]Hop, len(rt.Hops)),
	}
	for i, h := range rt.Hops {
		out.Hops[i] = Hop{
			PubKey:           hex.EncodeToString(h.PubKeyBytes[:]),
			SCID:             scenario.FormatSCID(h.ChannelID),
			AmtToForwardMsat: uint64(h.AmtToForward),
			OutgoingTimeLock: h.OutgoingTimeLock,
		}
	}
	return out
}

// routeIn is the route a report names, as the router's types hold it.
func routeIn(r *Route) (*route.Route, error) {
	src, err := scenario.ParseNodeID(r.Source)
	if err != nil {
		return nil, fmt.Errorf("%w: route source: %v", ErrProtocol, err)
	}
	rt := &route.Route{
		TotalTimeLock: r.TotalTimeLock,
		TotalAmount:   lnwire.MilliSatoshi(r.TotalAmountMsat),
		SourcePubKey:  src,
	}
	for i, h := range r.Hops {
		key, err := scenario.ParseNodeID(h.PubKey)
		if err != nil {
			return nil, fmt.Errorf("%w: hop %d: %v", ErrProtocol, i, err)
		}
		id, err := scenario.ParseSCID(h.SCID)
		if err != nil {
			return nil, fmt.Errorf("%w: hop %d: %v", ErrProtocol, i, err)
		}
		rt.Hops = append(rt.Hops, &route.Hop{
			PubKeyBytes: key, ChannelID: id,
			AmtToForward: lnwire.MilliSatoshi(h.AmtToForwardMsat), OutgoingTimeLock: h.OutgoingTimeLock,
		})
	}
	return rt, nil
}
