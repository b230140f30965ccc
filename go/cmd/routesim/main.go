// Command routesim plays one scenario file through one router and writes the
// result as JSON; cmd/internal/routesimcmd is the command, documented there.
//
// Package main holds only main and the router compiled into this binary
// (candidate_impl.go, the file a candidate replaces), so that a candidate
// can name nothing of the harness.
package main

import (
	"os"

	"github.com/routesim-evolve/routesim/cmd/internal/routesimcmd"
)

func main() {
	os.Exit(routesimcmd.Run(os.Args[1:], os.Stdout, os.Stderr, newCandidateRouter))
}
