package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

const examples = "../../../docs/examples/"

func TestRun(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		code  int
		rules []string // per file, "" for valid
	}{
		{"scenarios", []string{examples + "base-example.json", examples + "drift-example.json"}, 0, []string{"", ""}},
		{"graph", []string{"-graph", examples + "graph-small.json"}, 0, []string{""}},
		{"graph read as scenario", []string{examples + "graph-small.json"}, 1, []string{"unknown-field"}},
		{"missing file", []string{examples + "nowhere.json"}, 1, []string{"read"}},
		{"no file", nil, 2, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != tc.code {
				t.Fatalf("exit %d, want %d (%s)", code, tc.code, stderr.String())
			}
			if tc.code == 2 {
				return
			}
			var rep Report
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.OK != (tc.code == 0) || len(rep.Files) != len(tc.rules) {
				t.Fatalf("report %+v", rep)
			}
			for i, want := range tc.rules {
				got := rep.Files[i]
				if (got.Error == nil) != (want == "") || (got.Error != nil && got.Error.Rule != want) {
					t.Fatalf("file %d: %+v, want rule %q", i, got.Error, want)
				}
				if want == "" && tc.args[0] != "-graph" && got.Graph != examples+"graph-small.json" {
					t.Fatalf("file %d names graph %q", i, got.Graph)
				}
			}
		})
	}
}
