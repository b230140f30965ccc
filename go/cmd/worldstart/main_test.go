package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestWorldstart(t *testing.T) {
	tests := []struct {
		name string
		args []string
		exit int
	}{
		{"an example scenario", []string{"../../../docs/examples/base-example.json"}, 0},
		{"no file", nil, 2},
		{"two files", []string{"a.json", "b.json"}, 2},
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
			if !rep.OK || len(rep.Files) != 1 || len(rep.Files[0].Channels) == 0 {
				t.Fatalf("report %+v", rep)
			}
			for _, c := range rep.Files[0].Channels {
				// Both ends' balances make the capacity: nothing is in
				// flight before the first payment.
				if c.LocalMsat[0]+c.LocalMsat[1] != c.CapacityMsat {
					t.Errorf("%s: balances %v do not sum to %d", c.SCID, c.LocalMsat, c.CapacityMsat)
				}
				if c.Funder != 0 && c.Funder != 1 {
					t.Errorf("%s: funder %d with the example's rules on", c.SCID, c.Funder)
				}
			}
		})
	}
}
