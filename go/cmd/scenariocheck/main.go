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
	"errors"
	"io"

	"github.com/routesim-evolve/routesim/cmd/internal/checkcmd"
	"github.com/routesim-evolve/routesim/scenario"
)

// FileVerdict is the verdict on one file.
type FileVerdict struct {
	File  string               `json:"file"`
	Graph string               `json:"graph,omitempty"`
	Error *scenario.FieldError `json:"error"`
}

// Report is what scenariocheck prints.
type Report = checkcmd.FilesReport[FileVerdict]

func main() {
	checkcmd.Main(run)
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := checkcmd.NewFlags("scenariocheck", stderr)
	graphs := fs.Bool("graph", false, "the files are graph files, not scenario files")
	files, ok := checkcmd.Parse(fs, args, "scenariocheck [-graph] FILE...", checkcmd.SomeFiles)
	if !ok {
		return checkcmd.ExitUsage
	}
	rep := check(files, *graphs)
	return checkcmd.Print(stdout, stderr, "scenariocheck", rep, rep.OK)
}

func check(files []string, graphs bool) Report {
	loader := scenario.NewLoader()
	rep := checkcmd.NewFilesReport[FileVerdict](len(files))
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
