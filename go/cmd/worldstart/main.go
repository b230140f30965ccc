// Command worldstart prints a scenario's world as it begins, before its
// first payment: every channel's balances on each side, its funder, its
// HTLC slots and the policies its nodes apply, the nodes that come and go,
// and the background traffic up to the latest end of the last payment. It
// is what routesim_evolve/realnet builds a network of real nodes from, so
// that real nodes play the world the simulator plays:
//
//	worldstart SCENARIO
//
// The report is
//
//	{"ok": true, "files": [{"file": F, "source": K, "channels": [...],
//	  "flaky_nodes": [K, ...], "traffic": [...]}]}
//
// with one channel object per channel of the graph, in the graph's order
// (docs/realnet.md). A scenario played in a hidden world is a scenario
// file written with that world's seed: this command reads only files.
//
// Exit codes: 0 done, 2 bad usage or a file that cannot be loaded.
package main

import (
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/routesim-evolve/routesim/cmd/internal/checkcmd"
	"github.com/routesim-evolve/routesim/realnet"
	"github.com/routesim-evolve/routesim/scenario"
	"github.com/routesim-evolve/routesim/sim"
)

// Channel is one channel as the world begins; index d of each pair is the
// channel's end d (0 is node 1, the smaller key).
type Channel struct {
	SCID         string             `json:"scid"`
	Nodes        [2]string          `json:"nodes"`
	CapacityMsat uint64             `json:"capacity_msat"`
	LocalMsat    [2]uint64          `json:"local_msat"`
	Funder       int                `json:"funder"`
	SlotLimit    [2]int             `json:"slot_limit"`
	BusySlots    [2]int             `json:"busy_slots"`
	Policies     [2]*realnet.Policy `json:"policies"`
}

// FileStart is the start of one scenario file's world.
type FileStart struct {
	File       string    `json:"file"`
	Source     string    `json:"source"`
	Channels   []Channel `json:"channels"`
	FlakyNodes []string  `json:"flaky_nodes"`
	Traffic    []Shift   `json:"traffic"`
}

// Shift is one background traffic event: up to AmountMsat paid by From to
// To over the channel, AtSec after the scenario's start (sim.TrafficEvent).
type Shift struct {
	AtSec      float64 `json:"at_s"`
	SCID       string  `json:"scid"`
	From       string  `json:"from"`
	To         string  `json:"to"`
	AmountMsat uint64  `json:"amount_msat"`
}

// Report is what worldstart prints.
type Report = checkcmd.FilesReport[FileStart]

func main() {
	checkcmd.Main(run)
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := checkcmd.NewFlags("worldstart", stderr)
	files, ok := checkcmd.Parse(fs, args, "worldstart SCENARIO", checkcmd.OneFile)
	if !ok {
		return checkcmd.ExitUsage
	}
	rep := checkcmd.NewFilesReport[FileStart](1)
	start, err := worldStart(files[0])
	if err != nil {
		fmt.Fprintf(stderr, "worldstart: %s: %v\n", files[0], err)
		return checkcmd.ExitUsage
	}
	rep.Files = append(rep.Files, start)
	return checkcmd.Print(stdout, stderr, "worldstart", rep, true)
}

// worldStart loads a scenario and reads its world's start.
func worldStart(file string) (FileStart, error) {
	out := FileStart{File: file, FlakyNodes: []string{}}
	sc, err := scenario.NewLoader().Load(file)
	if err != nil {
		return out, err
	}
	w, err := sim.NewWorld(sc)
	if err != nil {
		return out, err
	}
	src := w.Source()
	out.Source = hex.EncodeToString(src[:])
	for _, c := range w.ChannelStarts() {
		ch := Channel{
			SCID:         scenario.FormatSCID(c.ChannelID),
			CapacityMsat: uint64(c.Capacity),
			LocalMsat:    [2]uint64{uint64(c.Local[0]), uint64(c.Local[1])},
			Funder:       c.Funder,
			SlotLimit:    c.SlotLimit,
			BusySlots:    c.BusySlots,
		}
		for d := 0; d < 2; d++ {
			ch.Nodes[d] = hex.EncodeToString(c.Nodes[d][:])
			ch.Policies[d] = realnet.PolicyOf(c.Policy[d])
		}
		out.Channels = append(out.Channels, ch)
	}
	for _, n := range w.FlakyNodes() {
		out.FlakyNodes = append(out.FlakyNodes, hex.EncodeToString(n[:]))
	}
	out.Traffic = []Shift{}
	for _, ev := range w.TrafficUntil(trafficSpan(sc)) {
		out.Traffic = append(out.Traffic, Shift{
			AtSec: ev.At.Seconds(), SCID: scenario.FormatSCID(ev.ChannelID),
			From: hex.EncodeToString(ev.From[:]), To: hex.EncodeToString(ev.To[:]),
			AmountMsat: uint64(ev.Amount),
		})
	}
	return out, nil
}

// trafficSpan is how far after the scenario's start a real network may need
// the simulator's traffic: to the end of its last payment, at the latest. A
// payment starts at its slot or when the one before ended, and each of its
// rounds (one attempt at least) takes the attempt latency, in which the
// simulator plays the traffic that the driver plays between rounds.
func trafficSpan(sc *scenario.Scenario) time.Duration {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	var rounds int
	for _, p := range sc.Payments {
		rounds += p.Attempts(sc.Defaults)
	}
	n := max(len(sc.Payments)-1, 0)
	return time.Duration(n)*sec(sc.Clock.PaymentIntervalSec) +
		time.Duration(rounds)*sec(sc.Clock.AttemptLatencySec)
}
