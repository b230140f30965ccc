// Command maxflow prints, for every payment of each scenario file, the
// largest amount its sender could send to its target in the scenario's
// world at the start, before any payment (sim.World.MaxFlowTo), so that
// the corpus generator can size payments by what the network holds:
//
//	maxflow [-balances] SCENARIO...
//
// The report is
//
//	{"ok": true, "files": [{"file": F, "max_flow_msat": [M, ...]}, ...]}
//
// with one M per payment, in the scenario's order. With -balances each file
// also gets "balances": {SCID: [B1, B2], ...}, what each end of every
// channel can send at the start (B1 from lnd's node 1, the smaller key): the
// world a candidate must not be able to rebuild, for the harness's tests of
// replay attacks. A file that cannot be
// loaded is a usage error: the generator checks the files it wrote first.
//
// Exit codes: 0 done, 2 bad usage or a file that cannot be loaded.
package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/routesim-evolve/routesim/cmd/internal/checkcmd"
	"github.com/routesim-evolve/routesim/scenario"
	"github.com/routesim-evolve/routesim/sim"
)

// FileFlows is the flows of one scenario file.
type FileFlows struct {
	File        string               `json:"file"`
	MaxFlowMsat []uint64             `json:"max_flow_msat"`
	Balances    map[string][2]uint64 `json:"balances,omitempty"`
}

// Report is what maxflow prints.
type Report = checkcmd.FilesReport[FileFlows]

func main() {
	checkcmd.Main(run)
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := checkcmd.NewFlags("maxflow", stderr)
	balances := fs.Bool("balances", false, "also print every channel's balances at the start")
	files, ok := checkcmd.Parse(fs, args, "maxflow [-balances] SCENARIO...", checkcmd.SomeFiles)
	if !ok {
		return checkcmd.ExitUsage
	}
	loader := scenario.NewLoader()
	rep := checkcmd.NewFilesReport[FileFlows](len(files))
	for _, file := range files {
		flows, err := startingFlows(loader, file, *balances)
		if err != nil {
			fmt.Fprintf(stderr, "maxflow: %s: %v\n", file, err)
			return checkcmd.ExitUsage
		}
		rep.Files = append(rep.Files, flows)
	}
	return checkcmd.Print(stdout, stderr, "maxflow", rep, true)
}

// startingFlows is the max flow to each payment's target of one scenario
// and, when asked, every channel's balances.
func startingFlows(loader *scenario.Loader, file string, balances bool) (FileFlows, error) {
	out := FileFlows{File: file}
	sc, err := loader.Load(file)
	if err != nil {
		return out, err
	}
	w, err := sim.NewWorld(sc)
	if err != nil {
		return out, err
	}
	out.MaxFlowMsat = make([]uint64, len(sc.Payments))
	for i, p := range sc.Payments {
		target, err := scenario.ParseNodeID(p.Target)
		if err != nil {
			return out, err
		}
		out.MaxFlowMsat[i] = uint64(w.MaxFlowTo(target))
	}
	if balances {
		out.Balances = make(map[string][2]uint64)
		for id, b := range w.Balances() {
			out.Balances[strconv.FormatUint(id, 10)] = [2]uint64{uint64(b[0]), uint64(b[1])}
		}
	}
	return out, nil
}
