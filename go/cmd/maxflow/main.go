// Command maxflow prints, for every payment of each scenario file, the
// largest amount its sender could send to its target in the scenario's
// world at the start, before any payment (sim.World.MaxFlowTo), so that
// the corpus generator can size payments by what the network holds:
//
//	maxflow SCENARIO...
//
// The report is
//
//	{"ok": true, "files": [{"file": F, "max_flow_msat": [M, ...]}, ...]}
//
// with one M per payment, in the scenario's order. A file that cannot be
// loaded is a usage error: the generator checks the files it wrote first.
//
// Exit codes: 0 done, 2 bad usage or a file that cannot be loaded.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/routesim-evolve/routesim/internal/checkcmd"
	"github.com/routesim-evolve/routesim/scenario"
	"github.com/routesim-evolve/routesim/sim"
)

// FileFlows is the flows of one scenario file.
type FileFlows struct {
	File        string   `json:"file"`
	MaxFlowMsat []uint64 `json:"max_flow_msat"`
}

// Report is what maxflow prints.
type Report struct {
	OK    bool        `json:"ok"`
	Files []FileFlows `json:"files"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := checkcmd.NewFlags("maxflow", stderr)
	files, ok := checkcmd.Parse(fs, args, "maxflow SCENARIO...", func(n int) bool { return n > 0 })
	if !ok {
		return checkcmd.ExitUsage
	}
	loader := scenario.NewLoader()
	rep := Report{OK: true, Files: make([]FileFlows, 0, len(files))}
	for _, file := range files {
		flows, err := startingFlows(loader, file)
		if err != nil {
			fmt.Fprintf(stderr, "maxflow: %s: %v\n", file, err)
			return checkcmd.ExitUsage
		}
		rep.Files = append(rep.Files, FileFlows{File: file, MaxFlowMsat: flows})
	}
	return checkcmd.Print(stdout, stderr, "maxflow", rep, true)
}

// startingFlows is the max flow to each payment's target of one scenario.
func startingFlows(loader *scenario.Loader, file string) ([]uint64, error) {
	sc, err := loader.Load(file)
	if err != nil {
		return nil, err
	}
	w, err := sim.NewWorld(sc)
	if err != nil {
		return nil, err
	}
	flows := make([]uint64, len(sc.Payments))
	for i, p := range sc.Payments {
		target, err := scenario.ParseNodeID(p.Target)
		if err != nil {
			return nil, err
		}
		flows[i] = uint64(w.MaxFlowTo(target))
	}
	return flows, nil
}
