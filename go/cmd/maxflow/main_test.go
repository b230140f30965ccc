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
// TestBalancesAddUpToEachChannelsCapacity checks -balances: what each end
// can send. Without rules the two ends hold the whole capacity; with the
// rules real nodes enforce, each end keeps its reserve back, so the two
// add up to at most the capacity less one reserve.
func TestBalancesAddUpToEachChannelsCapacity(t *testing.T) {
	tests := []struct {
		file  string
		rules bool
	}{
		{"drift-example.json", false},
		{"base-example.json", true},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := "../../../docs/examples/" + tc.file
			var out, errOut bytes.Buffer
			if got := run([]string{"-balances", path}, &out, &errOut); got != 0 {
				t.Fatalf("exit %d: %s", got, errOut.String())
			}
			var rep Report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			sc, err := scenario.NewLoader().Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if (sc.Rules != nil) != tc.rules {
				t.Fatalf("%s: rules block present %v, want %v", tc.file, sc.Rules != nil, tc.rules)
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
				capacity := uint64(c.CapacitySat) * 1000
				want := b[0]+b[1] == capacity
				if tc.rules {
					reserve := max(capacity/100/1000, sc.Rules.DustLimitSat) * 1000
					want = b[0]+b[1] <= capacity-reserve
				}
				if !ok || !want {
					t.Errorf("channel %s: balances %v, capacity %d sat", c.SCID, b, c.CapacitySat)
				}
			}
		})
	}
}
