package routekit

import (
	"encoding/json"
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportsAllowListed keeps the toolkit inside what a candidate may
// import itself, and the module's own algorithms (internal/...), which the
// simulator shares and which in turn import nothing but the standard
// library and each other: the toolkit is compiled into every candidate, so
// an import beyond these would hand candidates a way around the allow-list.
func TestImportsAllowListed(t *testing.T) {
	allowed := candidateImports(t)
	if !allowed["github.com/routesim-evolve/routesim/routekit"] {
		t.Fatal("the allow-list does not list the toolkit")
	}
	for _, path := range imports(t, ".") {
		if !allowed[path] && !isNeutral(t, path) {
			t.Errorf("the toolkit imports %q, which candidates may not import", path)
		}
	}
}

// internalPrefix is where the module's neutral algorithms live.
const internalPrefix = "github.com/routesim-evolve/routesim/internal/"

// isNeutral reports whether path is one of the module's algorithms that
// imports, transitively, only the standard library.
func isNeutral(t *testing.T, path string) bool {
	rest, ok := strings.CutPrefix(path, internalPrefix)
	if !ok {
		return false
	}
	for _, imp := range imports(t, filepath.Join("..", "internal", filepath.FromSlash(rest))) {
		if strings.Contains(strings.Split(imp, "/")[0], ".") && !isNeutral(t, imp) {
			t.Errorf("%s imports %q: the toolkit and the simulator share it, so it may "+
				"import only the standard library", path, imp)
		}
	}
	return true
}

// imports is what the package in dir imports, as the go command builds it:
// every non-test file that its build constraints keep.
func imports(t *testing.T, dir string) []string {
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	return pkg.Imports
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
