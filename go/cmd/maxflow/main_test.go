package main

import (
	"bytes"
	"encoding/json"
	"testing"
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
