// Command realreplay predicts real attempts by the simulator's forwarding
// rules: for each round a driver played on real lnd nodes, with the
// channel state the routes' nodes showed just before it, it prints what
// the simulator's rules say would have happened to each of its shards
// (go/sim/replay.go). It is how routesim_evolve/realnet builds its
// per-attempt agreement table.
//
//	realreplay < observed.jsonl
//
// Each input line is one observed round (realnet.Observed); each output
// line is its prediction (realnet.RoundPredicted), in the same order. A
// round that cannot be replayed gets "error" set, so that one bad line
// does not hide the others.
//
// Exit codes: 0 done, 2 bad usage or unreadable input.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/routesim-evolve/routesim/realnet"
)

// maxLine is the longest observed attempt read: one attempt's channels
// take a few KiB; a line past this is not an observation.
const maxLine = 16 << 20

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 0 {
		fmt.Fprintln(stderr, "usage: realreplay < observed.jsonl")
		return 2
	}
	in := bufio.NewScanner(stdin)
	in.Buffer(make([]byte, 0, 64<<10), maxLine)
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		if err := enc.Encode(predict(in.Bytes())); err != nil {
			fmt.Fprintf(stderr, "realreplay: %v\n", err)
			return 2
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(stderr, "realreplay: reading input: %v\n", err)
		return 2
	}
	return 0
}

// predict is one line's prediction, or why it has none.
func predict(line []byte) realnet.RoundPredicted {
	var o realnet.Observed
	if err := json.Unmarshal(line, &o); err != nil {
		return realnet.RoundPredicted{Predictions: []realnet.Predicted{}, Error: "unreadable observation: " + err.Error()}
	}
	ps, err := realnet.Replay(o)
	if err != nil {
		return realnet.RoundPredicted{Predictions: []realnet.Predicted{}, Error: err.Error()}
	}
	return realnet.RoundPredicted{Predictions: ps}
}
