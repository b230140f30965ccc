// Package simtest holds helpers for the tests of packages that play
// scenarios through the simulator (package sim), such as the reference
// routers'.
package simtest

import (
	"encoding/json"
	"testing"

	"github.com/routesim-evolve/routesim/sim"
)

// ResultJSON is res as JSON, the form in which two runs of a scenario must
// agree byte for byte to be reproducible; it fails t when res cannot be
// encoded.
func ResultJSON(t testing.TB, res *sim.Result) []byte {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
