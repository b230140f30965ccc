package routekit

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsAllowListed keeps the toolkit inside what a candidate may
// import itself: it is compiled into every candidate, so an import beyond
// the allow-list would hand candidates a way around it.
func TestImportsAllowListed(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "cmd", "candcheck", "allowlist.json"))
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Allowed []string `json:"allowed_imports"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{}
	for _, p := range list.Allowed {
		allowed[p] = true
	}
	if !allowed["github.com/routesim-evolve/routesim/routekit"] {
		t.Fatal("the allow-list does not list the toolkit")
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[path] {
				t.Errorf("%s imports %q, which candidates may not import", name, path)
			}
		}
	}
}
