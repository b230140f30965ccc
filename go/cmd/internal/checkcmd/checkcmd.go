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
	"os"
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

// Main runs a checking command's run on the process's arguments and
// streams, and exits with the code it returns.
func Main(run func(args []string, stdout, stderr io.Writer) int) {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// FilesReport is the report of a command that judges each of its files:
// OK is false when any file fails.
type FilesReport[T any] struct {
	OK    bool `json:"ok"`
	Files []T  `json:"files"`
}

// NewFilesReport is a passing report with room for n files.
func NewFilesReport[T any](n int) FilesReport[T] {
	return FilesReport[T]{OK: true, Files: make([]T, 0, n)}
}

// SomeFiles and OneFile are argument counts for Parse: one file or more,
// exactly one.
func SomeFiles(n int) bool { return n > 0 }

// OneFile is true for exactly one file; see SomeFiles.
func OneFile(n int) bool { return n == 1 }

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
