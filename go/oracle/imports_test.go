package oracle

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

// module is this module's path; its packages live in the directories below
// go.mod under the same names.
const module = "github.com/routesim-evolve/routesim/"

// TestNoToolkitBelow keeps the simulator's ceiling out of a candidate's
// reach: neither the oracle nor the simulator under it (the feasible bound)
// may import, however indirectly, a package a candidate imports from this
// module beyond the routing contract, nor any command's wiring.
func TestNoToolkitBelow(t *testing.T) {
	forbidden := []string{module + "routekit", module + "cmd/"}
	seen := map[string]bool{}
	var walk func(path string, via []string)
	walk = func(path string, via []string) {
		if seen[path] {
			return
		}
		seen[path] = true
		for _, f := range forbidden {
			if strings.HasPrefix(path, f) {
				t.Errorf("%s imports %s", strings.Join(via, " → "), path)
			}
		}
		pkg, err := build.ImportDir(filepath.Join("..", filepath.FromSlash(strings.TrimPrefix(path, module))), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, module) {
				walk(imp, append(via[:len(via):len(via)], path))
			}
		}
	}
	walk(module+"oracle", nil)
	if !seen[module+"sim"] || !seen[module+"internal/flownet"] {
		t.Fatal("the walk missed the simulator or its flow network")
	}
}
