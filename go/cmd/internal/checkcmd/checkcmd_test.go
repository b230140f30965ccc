package checkcmd

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	one := func(n int) bool { return n == 1 }
	tests := []struct {
		name      string
		args      []string
		wantOK    bool
		wantFiles []string
		wantErr   string
	}{
		{"one file", []string{"a.go"}, true, []string{"a.go"}, ""},
		{"flag and file", []string{"-v", "a.go"}, true, []string{"a.go"}, ""},
		{"no file", nil, false, nil, "usage: check [-v] FILE"},
		{"two files", []string{"a.go", "b.go"}, false, nil, "usage: check [-v] FILE"},
		{"unknown flag", []string{"-x", "a.go"}, false, nil, "flag provided but not defined: -x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			fs := NewFlags("check", &stderr)
			fs.Bool("v", false, "verbose")
			files, ok := Parse(fs, tt.args, "check [-v] FILE", one)
			if ok != tt.wantOK || strings.Join(files, ",") != strings.Join(tt.wantFiles, ",") {
				t.Fatalf("Parse = %v, %v; want %v, %v", files, ok, tt.wantFiles, tt.wantOK)
			}
			if !strings.Contains(stderr.String(), tt.wantErr) || (tt.wantErr == "") != (stderr.Len() == 0) {
				t.Fatalf("stderr %q, want %q", stderr.String(), tt.wantErr)
			}
		})
	}
}

func TestPrint(t *testing.T) {
	tests := []struct {
		name       string
		report     any
		passed     bool
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"passed", map[string]bool{"ok": true}, true, ExitOK, "{\n \"ok\": true\n}\n", ""},
		{"findings", map[string]bool{"ok": false}, false, ExitFindings, "{\n \"ok\": false\n}\n", ""},
		{"unwritable", math.Inf(1), true, ExitUsage, "", "check: json: unsupported value: +Inf\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Print(&stdout, &stderr, "check", tt.report, tt.passed)
			if code != tt.wantCode || stdout.String() != tt.wantStdout || stderr.String() != tt.wantStderr {
				t.Fatalf("Print = %d, %q, %q; want %d, %q, %q", code, stdout.String(), stderr.String(),
					tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
		})
	}
}
