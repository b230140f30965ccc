package routekit

import (
	"encoding/json"
	"go/build"
	"os"
	"path/filepath"
	"testing"
)

// TestImportsAllowListed keeps the toolkit inside what a candidate may
// import itself: it is compiled into every candidate, so an import beyond
// the allow-list would hand candidates a way around it.
func TestImportsAllowListed(t *testing.T) {
	allowed := candidateImports(t)
	if !allowed["github.com/routesim-evolve/routesim/routekit"] {
		t.Fatal("the allow-list does not list the toolkit")
	}
	// The package as the go command builds it: every non-test file that
	// its build constraints keep.
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range pkg.Imports {
		if !allowed[path] {
			t.Errorf("%s imports %q, which candidates may not import", pkg.ImportPos[path][0], path)
		}
	}
}

// candidateImports is the allow-list candcheck embeds: the packages a
// candidate may import.
func candidateImports(t *testing.T) map[string]bool {
	f, err := os.Open(filepath.Join("..", "cmd", "candcheck", "allowlist.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var list struct {
		Allowed []string `json:"allowed_imports"`
	}
	if err := json.NewDecoder(f).Decode(&list); err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{}
	for _, p := range list.Allowed {
		allowed[p] = true
	}
	return allowed
}
