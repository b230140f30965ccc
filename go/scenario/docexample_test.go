package scenario

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// checkDocExample checks that docs/examples/NAME is doc as Go writes it
// today, for a Python parity test to read; ROUTESIM_UPDATE_EXAMPLE=1 writes
// it anew. run is the test that writes it (for the message).
func checkDocExample(t *testing.T, name, run string, doc any) {
	t.Helper()
	out, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, '\n')
	path := examples + name
	if os.Getenv("ROUTESIM_UPDATE_EXAMPLE") == "1" {
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want) {
		t.Errorf("%s is not what Go computes: run ROUTESIM_UPDATE_EXAMPLE=1 go test "+
			"./scenario -run %s", path, run)
	}
}
