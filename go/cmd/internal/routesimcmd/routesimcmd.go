// Package routesimcmd is the routesim command: it plays one scenario file
// through one router and writes the result as JSON. It lives apart from
// package main so that the candidate, which is compiled into package main,
// shares no name with the harness: package main declares only main and the
// candidate's own names.
//
//	routesim [--router candidate|lnd-apriori|lnd-bimodal|ldk|oracle]
//	         [--ldk-bridge BIN] [--out FILE] [--no-timing] [--check]
//	         [--cpuprofile FILE] SCENARIO.json
//	routesim --serve
//
// --serve plays no scenario: it serves the candidate router over standard
// input and output to a driver that plays its payments on real lnd nodes
// (package realnet; docs/realnet.md, "The router protocol").
//
// --cpuprofile writes a CPU profile of the whole run, loading included, for
// `go tool pprof` (docs/performance.md).
//
// Exit codes: 0 done, 2 bad usage or a malformed scenario (the message names
// the file and field), 1 any other failure.
package routesimcmd

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sort"
	"strings"

	"github.com/routesim-evolve/routesim/realnet"
	"github.com/routesim-evolve/routesim/routing"
	"github.com/routesim-evolve/routesim/scenario"
	"github.com/routesim-evolve/routesim/sim"
)

// routerMaker makes the router factory of one scenario run, and a function
// that frees what the factory holds.
// The world is the scenario's, before its first payment: only the trusted
// reference routers look at it (the oracle reads its true state).
type routerMaker func(sc *scenario.Scenario, world *sim.World, opts makerOptions) (routing.RouterFactory, func() error, error)

// makerOptions are the command's settings a router maker may need.
type makerOptions struct {
	// ldkBridge is the routesim-ldk binary the ldk router runs.
	ldkBridge string
}

// routers are the reference routers this binary was built with, added by
// routers_reference.go unless the binary is built with the routesim_nolnd
// tag (as candidate builds are, to keep lnd out of their link); Python's
// registry, routesim_evolve/simulate/routers.py, names the same ones. Run
// adds the candidate.
var routers = map[string]routerMaker{}

// Run is the command: args without the program name, the streams, and the
// candidate router the binary was built with. It returns the exit code.
func Run(args []string, stdout, stderr io.Writer, candidate routing.RouterFactory) int {
	routers["candidate"] = func(*scenario.Scenario, *sim.World, makerOptions) (routing.RouterFactory, func() error, error) {
		return candidate, func() error { return nil }, nil
	}
	fs := flag.NewFlagSet("routesim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	routerName := fs.String("router", "candidate", "router to run: "+strings.Join(routerNames(), ", "))
	out := fs.String("out", "", "write the result here instead of standard output")
	noTiming := fs.Bool("no-timing", false, "leave wall times out, for byte-identical results")
	check := fs.Bool("check", false, "verify conservation of funds after every payment")
	ldkBridge := fs.String("ldk-bridge", "", "the routesim-ldk binary (built from ldk/), for --router ldk")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run (loading included) to this file")
	serve := fs.Bool("serve", false, "serve the candidate router to a real-node driver on stdin/stdout")
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	if *serve {
		return serveCandidate(positional, *routerName, stdout, stderr, candidate)
	}
	if len(positional) != 1 {
		fmt.Fprintln(stderr, "usage: routesim [flags] SCENARIO.json")
		fs.PrintDefaults()
		return 2
	}
	maker, ok := routers[*routerName]
	if !ok {
		fmt.Fprintf(stderr, "routesim: unknown router %q (this binary has: %s)\n",
			*routerName, strings.Join(routerNames(), ", "))
		return 2
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "routesim: --cpuprofile: %v\n", err)
			return 2
		}
		defer stop()
	}
	sc, err := scenario.Load(positional[0])
	if err != nil {
		fmt.Fprintf(stderr, "routesim: %v\n", err)
		var fe *scenario.FieldError
		if errors.As(err, &fe) {
			return 2
		}
		return 1
	}
	res, err := runScenario(sc, maker, makerOptions{ldkBridge: *ldkBridge}, sim.Options{
		RouterName: *routerName, Timing: !*noTiming, CheckConservation: *check,
	})
	if err != nil {
		fmt.Fprintf(stderr, "routesim: %s: %v\n", sc.Path, err)
		return 1
	}
	if err := writeResult(res, *out, stdout); err != nil {
		fmt.Fprintf(stderr, "routesim: %v\n", err)
		return 1
	}
	return 0
}

func runScenario(sc *scenario.Scenario, maker routerMaker, mopts makerOptions,
	opts sim.Options) (*sim.Result, error) {

	world, err := sim.NewWorld(sc)
	if err != nil {
		return nil, err
	}
	factory, closeRouter, err := maker(sc, world, mopts)
	if err != nil {
		return nil, err
	}
	res, err := world.Play(factory, opts)
	if cerr := closeRouter(); err == nil {
		err = cerr
	}
	return res, err
}

// startCPUProfile starts a CPU profile written to path and returns what
// stops it.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func writeResult(res *sim.Result, path string, stdout io.Writer) error {
	data, err := json.MarshalIndent(res, "", " ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if path == "" {
		_, err = stdout.Write(data)
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func routerNames() []string {
	names := make([]string, 0, len(routers))
	for n := range routers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// parseInterspersed parses flags that may stand before or after the
// positional arguments, and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// serveCandidate is --serve: the candidate router served to a real-node
// driver until its input ends. Exit 0 at the end of the input, 2 on a
// request that is not the protocol's or other arguments.
func serveCandidate(positional []string, router string, stdout, stderr io.Writer,
	candidate routing.RouterFactory) int {

	if len(positional) != 0 || router != "candidate" {
		fmt.Fprintln(stderr, "routesim: --serve takes no scenario and serves only the candidate")
		return 2
	}
	if err := realnet.Serve(os.Stdin, stdout, candidate); err != nil {
		fmt.Fprintf(stderr, "routesim --serve: %v\n", err)
		if errors.Is(err, realnet.ErrProtocol) || errors.Is(err, realnet.ErrNoPayment) {
			return 2
		}
		return 1
	}
	return 0
}
