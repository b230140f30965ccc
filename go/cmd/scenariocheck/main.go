// Command scenariocheck validates scenario or graph files with the rules the
// simulator applies when it loads them (package scenario), and prints its
// verdict as JSON, so that tools in other languages check files by the same
// rules instead of their own copy:
//
//	scenariocheck [-graph] FILE...
//
// Without -graph every FILE is a scenario file, checked with the graph it
// names (each graph read once); with -graph every FILE is a graph file. The
// report is
//
//	{"ok": bool, "files": [{"file": F, "graph": G, "error": E}, ...]}
//
// in the order given, where G is the graph file a valid scenario names and E
// is null or the first problem found: {"file", "field", "rule", "message"}
// (E's file is the graph file when the problem lies there).
//
// Exit codes: 0 every file is valid, 1 some file is not, 2 bad usage.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/routesim-evolve/routesim/scenario"
)

// FileVerdict is the verdict on one file.
type FileVerdict struct {
	File  string               `json:"file"`
	Graph string               `json:"graph,omitempty"`
	Error *scenario.FieldError `json:"error"`
}

// Report is what scenariocheck prints.
type Report struct {
	OK    bool          `json:"ok"`
	Files []FileVerdict `json:"files"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("scenariocheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	graphs := fs.Bool("graph", false, "the files are graph files, not scenario files")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: scenariocheck [-graph] FILE...")
		return 2
	}
	rep := check(fs.Args(), *graphs)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(rep); err != nil {
		fmt.Fprintf(stderr, "scenariocheck: %v\n", err)
		return 2
	}
	if !rep.OK {
		return 1
	}
	return 0
}

func check(files []string, graphs bool) Report {
	loader := scenario.NewLoader()
	rep := Report{OK: true, Files: make([]FileVerdict, 0, len(files))}
	for _, file := range files {
		v := FileVerdict{File: file}
		var err error
		if graphs {
			_, err = loader.LoadGraph(file)
		} else {
			var sc *scenario.Scenario
			if sc, err = loader.Load(file); err == nil {
				v.Graph = sc.Graph.Path
			}
		}
		if err != nil {
			rep.OK = false
			if !errors.As(err, &v.Error) {
				v.Error = &scenario.FieldError{File: file, Rule: scenario.RuleRead, Msg: err.Error()}
			}
		}
		rep.Files = append(rep.Files, v)
	}
	return rep
}
