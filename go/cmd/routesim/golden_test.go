package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// goldenResults lists, one per line, the sha256 of a result, the scenario
// (relative to the repository's root) and the router that played it.
const goldenResults = "testdata/golden-results.txt"

// TestResultsMatchGolden plays fixed scenario and router pairs and wants
// every result byte-identical to the one recorded in goldenResults: a
// refactor of the simulator, the toolkit or the reference routers must move
// no result. A change meant to move results rewrites the file with
// ROUTESIM_UPDATE_GOLDEN=1 go test ./cmd/routesim -run Golden.
func TestResultsMatchGolden(t *testing.T) {
	data, err := os.ReadFile(goldenResults)
	if err != nil {
		t.Fatal(err)
	}
	update := os.Getenv("ROUTESIM_UPDATE_GOLDEN") == "1"
	var rewritten bytes.Buffer
	lines := bufio.NewScanner(bytes.NewReader(data))
	for lines.Scan() {
		line := lines.Text()
		fields := strings.Fields(line)
		if strings.HasPrefix(line, "#") || len(fields) == 0 {
			rewritten.WriteString(line + "\n")
			continue
		}
		if len(fields) != 3 {
			t.Fatalf("%s: want sha256, scenario and router: %q", goldenResults, line)
		}
		want, scenario, router := fields[0], fields[1], fields[2]
		var out, stderr bytes.Buffer
		args := []string{"--no-timing", "--check", "--router", router, "../../../" + scenario}
		if code := run(args, &out, &stderr); code != 0 {
			t.Fatalf("%s on %s: exit %d: %s", router, scenario, code, stderr.String())
		}
		sum := sha256.Sum256(out.Bytes())
		got := hex.EncodeToString(sum[:])
		if got != want && !update {
			t.Errorf("%s on %s: result sha256 %s, recorded %s", router, scenario, got, want)
		}
		rewritten.WriteString(got + "  " + scenario + " " + router + "\n")
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	if update {
		if err := os.WriteFile(goldenResults, rewritten.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
