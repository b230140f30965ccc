package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/routesim-evolve/routesim/scenario"
)

func TestMaxflow(t *testing.T) {
	tests := []struct {
		name string
		args []string
		exit int
	}{
		{"an example scenario", []string{"../../../docs/examples/base-example.json"}, 0},
		{"no file", nil, 2},
		{"a file that is not there", []string{"missing.json"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if got := run(tt.args, &out, &errOut); got != tt.exit {
				t.Fatalf("exit %d, want %d (%s)", got, tt.exit, errOut.String())
			}
			if tt.exit != 0 {
				return
			}
			var rep Report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			if !rep.OK || len(rep.Files) != 1 || len(rep.Files[0].MaxFlowMsat) != 12 {
				t.Fatalf("report %+v", rep)
			}
			for i, f := range rep.Files[0].MaxFlowMsat {
				if f == 0 {
					t.Errorf("payment %d: no flow to its target", i)
				}
			}
		})
	}
}

// TestBalancesAddUpToEachChannelsCapacity checks -balances against the graph:
// one entry per channel, whose two ends hold exactly its capacity.
func TestBalancesAddUpToEachChannelsCapacity(t *testing.T) {
	var out, errOut bytes.Buffer
	if got := run([]string{"-balances", "../../../docs/examples/base-example.json"}, &out,
		&errOut); got != 0 {
		t.Fatalf("exit %d: %s", got, errOut.String())
	}
	var rep Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.NewLoader().Load("../../../docs/examples/base-example.json")
	if err != nil {
		t.Fatal(err)
	}
	got := rep.Files[0].Balances
	if len(got) != len(sc.Graph.Channels) {
		t.Fatalf("%d balances for %d channels", len(got), len(sc.Graph.Channels))
	}
	for _, c := range sc.Graph.Channels {
		id, err := scenario.ParseSCID(c.SCID)
		if err != nil {
			t.Fatal(err)
		}
		b, ok := got[strconv.FormatUint(id, 10)]
		if !ok || b[0]+b[1] != uint64(c.CapacitySat)*1000 {
			t.Errorf("channel %s: balances %v, capacity %d sat", c.SCID, b, c.CapacitySat)
		}
	}
}
