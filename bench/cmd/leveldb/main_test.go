package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestQuick runs the harness small and checks its report: every engine's
// figures, the database's levels, and no correctness failure.
func TestQuick(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := mainErr([]string{"-quick", "-dir", t.TempDir(), "-keys", "30000"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	report := out.String()
	for _, want := range []string{"| open, ms |", "| full forward scan, ns/entry |", "| Get of a present key, ns/op |", "| Get of an absent key, ns/op |", "| full forward scan, CPU time", "ours, read-ahead on", "L0 ", "tables", "Correctness:"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Log(report)
	}
}

// TestFlags rejects bad flags.
func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"-keys", "0"}, {"-impls", "pebble"}, {"extra"}} {
		var out, errOut bytes.Buffer
		if err := mainErr(args, &out, &errOut); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
