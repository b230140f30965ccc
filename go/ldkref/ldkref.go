// Package ldkref runs LDK's production router (rust-lightning's
// DefaultRouter with its ProbabilisticScorer) inside the simulator, as a
// second reference beside lnd's.
//
// LDK is Rust, so it runs in its own process: the bridge built from
// ldk/ (routesim-ldk), one per scenario run, spoken to over a pipe with
// one JSON object per line each way (protocol.go). The bridge holds LDK's
// network graph and scorer for the whole run, so later payments learn from
// earlier ones, as lnd's mission control does in lndref. This package is
// the simulator's side: it enters the gossip view and the sender's
// channels, turns LDK's paths into lnd's route encoding, and reports each
// attempt's outcome.
//
// docs/ldk-reference.md lists what is LDK's own code and what the bridge
// does in place of LDK's channel manager.
package ldkref

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)

// TraceEnv, when set, has the bridge print what it decides to the
// simulator's standard error.
const TraceEnv = "ROUTESIM_LDK_TRACE"

// maxReplyBytes bounds one line of the bridge's answer: a path of at most
// a few dozen hops.
const maxReplyBytes = 1 << 20

// Reference is LDK's routing stack for one scenario run: the bridge
// process, started at the first payment. Its NewRouter is the run's
// routing.RouterFactory. Close it when the run is over.
type Reference struct {
	bridge string
	self   route.Vertex

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr strings.Builder

	// nodes is the view's node order: the bridge names nodes by index.
	nodes map[route.Vertex]int
	ids   []route.Vertex

	// ends are each channel's nodes, node 1 first.
	ends map[uint64][2]int

	// changed are the channels whose updates failures brought back since
	// the last payment: gossip to hand LDK before the next one.
	changed map[uint64]bool

	// fault is the first failure of the bridge itself; it ends the run.
	fault error
}

// New prepares LDK's reference for a run whose payments are sent by self;
// bridge is the routesim-ldk binary.
func New(bridge string, self route.Vertex) (*Reference, error) {
	if bridge == "" {
		return nil, errors.New("ldkref: no bridge binary (build ldk/ and pass --ldk-bridge)")
	}
	return &Reference{bridge: bridge, self: self, changed: make(map[uint64]bool)}, nil
}

// NewRouter makes the router of one payment. It is the run's
// routing.RouterFactory.
func (r *Reference) NewRouter(view routing.SimNetworkView, source route.Vertex,
	localBalances map[uint64]lnwire.MilliSatoshi,
	spec *routing.SimPaymentSpec) (routing.SimRouter, error) {

	if source != r.self {
		return nil, fmt.Errorf("ldkref: the run is for %x, the payment is from %x", r.self[:], source[:])
	}
	if r.cmd == nil {
		if err := r.start(view); err != nil {
			return nil, r.fail(err)
		}
	}
	if r.fault != nil {
		return nil, r.fault
	}
	if err := r.gossip(view); err != nil {
		return nil, err
	}
	msg, err := r.payment(view, source, localBalances, spec)
	if err != nil {
		return nil, r.fail(err)
	}
	if _, err := r.call(msg); err != nil {
		return nil, err
	}
	return &paymentRouter{ref: r, view: view, spec: spec, height: view.BlockHeight()}, nil
}

// start runs the bridge and enters the gossip view.
func (r *Reference) start(view routing.SimNetworkView) error {
	msg, err := r.graph(view)
	if err != nil {
		return err
	}
	r.cmd = exec.Command(r.bridge)
	r.cmd.Stderr = &limitedWriter{w: &r.stderr, n: 64 << 10}
	if os.Getenv(TraceEnv) != "" {
		r.cmd.Stderr = os.Stderr
	}
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		return err
	}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	r.stdout = bufio.NewReaderSize(out, 64<<10)
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("ldkref: starting the bridge %s: %w", r.bridge, err)
	}
	_, err = r.call(msg)
	return err
}

// call sends one request and reads its answer. A request the bridge calls
// malformed, or a bridge that stops answering, is a fault of the harness:
// it ends the run.
func (r *Reference) call(msg any) (*reply, error) {
	if r.fault != nil {
		return nil, r.fault
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return nil, r.fail(err)
	}
	if _, err := r.stdin.Write(append(data, '\n')); err != nil {
		return nil, r.fail(fmt.Errorf("writing to the bridge: %w", err))
	}
	line, err := r.readLine()
	if err != nil {
		return nil, r.fail(fmt.Errorf("reading from the bridge: %w", err))
	}
	var rep reply
	if err := json.Unmarshal(line, &rep); err != nil {
		return nil, r.fail(fmt.Errorf("the bridge's answer %q: %w", clip(line), err))
	}
	if rep.Error != "" {
		return nil, r.fail(fmt.Errorf("the bridge refused %s: %s", clip(data), rep.Error))
	}
	return &rep, nil
}

func (r *Reference) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, isPrefix, err := r.stdout.ReadLine()
		if err != nil {
			return nil, err
		}
		line = append(line, chunk...)
		if len(line) > maxReplyBytes {
			return nil, fmt.Errorf("an answer over %d bytes", maxReplyBytes)
		}
		if !isPrefix {
			return line, nil
		}
	}
}

// fail records the bridge's first fault, with what it printed.
func (r *Reference) fail(err error) error {
	if r.fault == nil {
		if text := strings.TrimSpace(r.stderr.String()); text != "" {
			err = fmt.Errorf("%w (bridge stderr: %s)", err, text)
		}
		r.fault = fmt.Errorf("ldkref: %w", err)
	}
	return r.fault
}

// Close ends the bridge and returns the run's fault, if any: a run whose
// bridge failed has no result.
func (r *Reference) Close() error {
	if r.cmd == nil {
		return r.fault
	}
	_ = r.stdin.Close()
	err := r.cmd.Wait()
	r.cmd = nil
	if r.fault != nil {
		return r.fault
	}
	if err != nil {
		return r.fail(fmt.Errorf("the bridge exited: %w", err))
	}
	return nil
}

func clip(b []byte) string {
	const most = 200
	if len(b) <= most {
		return string(b)
	}
	return string(b[:most]) + "…"
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	keep := min(len(p), l.n)
	if keep > 0 {
		if _, err := l.w.Write(p[:keep]); err != nil {
			return 0, err
		}
		l.n -= keep
	}
	return len(p), nil
}
