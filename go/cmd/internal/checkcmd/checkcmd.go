// Package checkcmd is what the harness's tool commands, candcheck,
// scenariocheck and maxflow, share: how they read their arguments and how
// they print a report, under one convention of exit codes that the Python
// side relies on.
package checkcmd

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
)

// Exit codes of a checking command.
const (
	// ExitOK: everything checked passes.
	ExitOK = 0

	// ExitFindings: the report lists something wrong.
	ExitFindings = 1

	// ExitUsage: bad usage, or a file that could not be read; nothing
	// was judged.
	ExitUsage = 2
)

// NewFlags is the flag set of command name, writing its messages to stderr
// and leaving the exit to the caller.
func NewFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// Parse parses args with fs and returns the positional arguments; ok is
// false when the flags are wrong or argsOK refuses their count, in which
// case usage has been printed to fs's output.
func Parse(fs *flag.FlagSet, args []string, usage string, argsOK func(n int) bool) (files []string, ok bool) {
	if err := fs.Parse(args); err != nil {
		return nil, false
	}
	if !argsOK(fs.NArg()) {
		fmt.Fprintln(fs.Output(), "usage: "+usage)
		return nil, false
	}
	return fs.Args(), true
}

// Print writes report to stdout as indented JSON and returns the exit
// code: ExitOK when passed, ExitFindings when not, ExitUsage (with the
// reason on stderr) when the report cannot be written.
func Print(stdout, stderr io.Writer, name string, report any, passed bool) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(report); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitUsage
	}
	if !passed {
		return ExitFindings
	}
	return ExitOK
}
