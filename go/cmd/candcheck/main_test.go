package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// header opens every test candidate; line 1 is the package clause.
const header = "package main\n\n"

// contract is a minimal newCandidateRouter, appended where a test is not
// about it.
const contract = `
func newCandidateRouter(view routing.SimNetworkView, source route.Vertex,
	localBalances map[uint64]lnwire.MilliSatoshi,
	spec *routing.SimPaymentSpec) (routing.SimRouter, error) {
	return nil, nil
}
`

// imports are the contract's own imports.
const imports = `import (
	"github.com/lightningnetwork/lnd/lnwire"
	"github.com/lightningnetwork/lnd/routing/route"
	"github.com/routesim-evolve/routesim/routing"
)
`

func policy(t *testing.T) *Policy {
	t.Helper()
	p, err := loadPolicy(allowlistJSON)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheck(t *testing.T) {
	// main is what the routesim command's other files declare; harnessRun
	// stands for any name a future harness file might add.
	foreign := map[string]bool{"main": true, "harnessRun": true}
	cases := []struct {
		name string
		src  string
		rule string // "" when the candidate passes
		line int
		want string // in the message
	}{
		{"clean", header + imports + contract, "", 0, ""},
		{"seed-style std imports", header + "import (\n\t\"container/heap\"\n\t\"errors\"\n\t\"math/rand/v2\"\n)\n" + imports + contract, "", 0, ""},
		{"toolkit", header + "import \"github.com/routesim-evolve/routesim/routekit\"\n" + imports + contract, "", 0, ""},
		{"os", header + "import \"os\"\n" + imports + contract, RuleImport, 3, `"os" is forbidden`},
		{"os/exec", header + "import \"os/exec\"\n" + imports + contract, RuleImport, 3, `"os/exec" is forbidden`},
		{"net", header + "import \"net\"\n" + imports + contract, RuleImport, 3, `"net" is forbidden`},
		{"net/http", header + "import \"net/http\"\n" + imports + contract, RuleImport, 3, `"net/http" is forbidden`},
		{"syscall", header + "import \"syscall\"\n" + imports + contract, RuleImport, 3, `"syscall" is forbidden`},
		{"unsafe", header + "import \"unsafe\"\n" + imports + contract, RuleImport, 3, `"unsafe" is forbidden`},
		{"cgo", header + "// #include <stdlib.h>\nimport \"C\"\n" + imports + contract, RuleImport, 4, `"C" is forbidden`},
		{"plugin", header + "import \"plugin\"\n" + imports + contract, RuleImport, 3, `"plugin" is forbidden`},
		{"reflect", header + "import \"reflect\"\n" + imports + contract, RuleImport, 3, `"reflect" is forbidden`},
		{"runtime/debug", header + "import \"runtime/debug\"\n" + imports + contract, RuleImport, 3, `"runtime/debug" is forbidden`},
		{"io/ioutil", header + "import \"io/ioutil\"\n" + imports + contract, RuleImport, 3, "forbidden"},
		{"renamed os", header + "import x \"os\"\n" + imports + contract, RuleImport, 3, `"os" is forbidden`},
		{"sim internals", header + "import \"github.com/routesim-evolve/routesim/sim\"\n" + imports + contract, RuleImport, 3, "hidden liquidity"},
		{"unlisted", header + "import \"encoding/json\"\n" + imports + contract, RuleImport, 3, "not on the allow-list"},
		{"linkname", header + imports + "\n//go:linkname nanotime runtime.nanotime\nfunc nanotime() int64\n" + contract, RuleDirective, 9, "//go:linkname"},
		{"embed", header + imports + "\n//go:embed secret.txt\nvar s string\n" + contract, RuleDirective, 9, "//go:embed"},
		{"generate", header + "//go:generate rm -rf /\n" + imports + contract, RuleDirective, 3, "//go:generate"},
		{"noinline", header + imports + contract + "\n//go:noinline\nfunc f() {}\n", RuleDirective, 15, "//go:noinline"},
		{"build constraint", "//go:build ignore\n\n" + header + imports + contract, RuleDirective, 1, "//go:build"},
		{"plus build", "// +build ignore\n\n" + header + imports + contract, RuleDirective, 1, "+build"},
		{"plus build without a space", "//+build ignore\n\n" + header + imports + contract, RuleDirective, 1, "+build"},
		{"plus build in a block comment", "/* +build ignore */\n\n" + header + imports + contract, RuleDirective, 1, "+build"},
		{"line directive in a block comment", header + imports + "/*line other.go:1*/\n" + contract, RuleDirective, 8, "/*line"},
		{"cgo flags", header + "/*\n#cgo LDFLAGS: -lm\n*/\n" + imports + contract, RuleDirective, 3, "#cgo"},
		{"line directive", header + imports + "//line other.go:1\n" + contract, RuleDirective, 8, "//line"},
		{"init", header + imports + contract + "\nfunc init() {}\n", RuleReserved, 15, "func init"},
		{"main", header + imports + contract + "\nfunc main() {}\n", RuleReserved, 15, "func main"},
		{"no contract", header + "func helper() {}\n", RuleContract, 1, "newCandidateRouter"},
		{"package", "package routing\n\n" + imports + contract, RulePackage, 1, "package main"},
		{"syntax", header + imports + contract + "\nfunc broken( {\n", RuleSyntax, 15, ""},
		{"calling main", header + imports + contract + "\nfunc g() { main() }\n", RuleForeign, 15, "main belongs"},
		{"harness function", header + imports + contract + "\nfunc g() { _ = harnessRun(nil) }\n", RuleForeign, 15, "harnessRun belongs"},
		{"harness name as a composite-literal key", header + imports + contract +
			"\nvar m = map[any]int{harnessRun: 1}\n", RuleForeign, 15, "harnessRun belongs"},
		{"harness name as a method value", header + imports + contract +
			"\nvar f = []any{0: harnessRun}\n", RuleForeign, 15, "harnessRun belongs"},
		// The rule is lexical: even a field that only shares the spelling is
		// refused (the harness's names are few and distinctive).
		{"a field spelled like a harness name", header + imports + contract +
			"\ntype t struct{ harnessRun int }\n", RuleForeign, 15, "harnessRun belongs"},
		{"dot import", header + "import . \"time\"\n" + imports + contract + "\nvar t0 = Now()\n", RuleImport, 3, "import . \"time\""},
		{"dot import of an allowed package", header + "import . \"math\"\n" + imports + contract, RuleImport, 3, "import ."},
		{"wall clock", header + "import \"time\"\n" + imports + contract + "\nvar t0 = time.Now()\n", RuleNondeterm, 16, "time.Now"},
		{"renamed wall clock", header + "import clock \"time\"\n" + imports + contract + "\nfunc f() { clock.Sleep(1) }\n", RuleNondeterm, 16, "time.Sleep"},
		{"global rand", header + "import \"math/rand\"\n" + imports + contract + "\nfunc f() int { return rand.Intn(3) }\n", RuleNondeterm, 16, "math/rand.Intn"},
		{"global rand v2", header + "import \"math/rand/v2\"\n" + imports + contract + "\nvar f = rand.IntN\n", RuleNondeterm, 16, "math/rand/v2.IntN"},
		{"seeded rand and durations are fine", header + "import (\n\t\"math/rand/v2\"\n\t\"time\"\n)\n" + imports + contract +
			"\nvar r = rand.New(rand.NewPCG(1, 2))\nvar d = 3 * time.Second\nfunc g(t time.Time) time.Time { return t.Add(d) }\n", "", 0, ""},
		{"a local variable named like the package", header + "import \"time\"\n" + imports + contract +
			"\ntype clk struct{}\nfunc (clk) Now() int { return 1 }\nfunc g() time.Duration { time := clk{}; _ = time.Now(); return 0 }\n", "", 0, ""},
		{"package-level initialiser is allowed", header + "import \"math/rand\"\n" + imports + contract +
			"\nvar rng = rand.New(rand.NewSource(1))\nvar _ = func() int { return 1 }()\n", "", 0, ""},
	}
	p := policy(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Check([]byte(tc.src), p, foreign)
			if tc.rule == "" {
				if len(got) != 0 {
					t.Fatalf("want no findings, got %+v", got)
				}
				return
			}
			for _, f := range got {
				if f.Rule == tc.rule && f.Line == tc.line && strings.Contains(f.Message, tc.want) {
					return
				}
			}
			t.Fatalf("want a %s finding on line %d containing %q, got %+v", tc.rule, tc.line, tc.want, got)
		})
	}
}

func TestFindingText(t *testing.T) {
	src := header + "import \"os\"\n" + imports + contract
	got := Check([]byte(src), policy(t), nil)
	if len(got) != 1 || got[0].Text != `import "os"` || got[0].Column != 8 {
		t.Fatalf("got %+v", got)
	}
}

func TestLongLinesAreClipped(t *testing.T) {
	long := strings.Repeat("x", 400_000)
	src := header + "import \"" + long + "\"\n" + imports + contract
	got := Check([]byte(src), policy(t), nil)
	if len(got) != 1 || len(got[0].Text) > maxQuote+8 || len(got[0].Message) > maxQuote+8 {
		t.Fatalf("a finding quotes %d and %d bytes", len(got[0].Text), len(got[0].Message))
	}
}

func TestSizeLimit(t *testing.T) {
	p := policy(t)
	src := header + imports + contract + "// " + strings.Repeat("x", p.MaxSourceBytes) + "\n"
	got := Check([]byte(src), p, nil)
	if len(got) != 1 || got[0].Rule != RuleSize {
		t.Fatalf("got %+v", got)
	}
}

// TestSeedCandidate runs the command on the repository's seed candidate
// with the real routesim directory: it must pass.
func TestSeedCandidate(t *testing.T) {
	dir := filepath.Join("..", "routesim")
	var out, errOut bytes.Buffer
	code := run([]string{"-pkgdir", dir, filepath.Join(dir, candidateFile)}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errOut.String())
	}
	var rep Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || !rep.OK {
		t.Fatalf("report %s: %v", out.String(), err)
	}
}

// TestHarnessNames checks -pkgdir collects the names of the routesim
// command's other files: only main, since the harness lives in its own
// package.
func TestHarnessNames(t *testing.T) {
	names, err := packageNames(filepath.Join("..", "routesim"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || !names["main"] {
		t.Fatalf("package main's other files declare %v; want only main", names)
	}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(nil, &out, &errOut); code != 2 {
		t.Fatalf("exit %d", code)
	}
	missing := filepath.Join(t.TempDir(), "none.go")
	if code := run([]string{missing}, &out, &errOut); code != 2 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("unexpected file")
	}
}
