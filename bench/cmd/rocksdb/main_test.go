package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// needRocksDB skips the test without g++ and RocksDB's library, unless
// SSTABLE_REQUIRE_ROCKSDB=1 (as in CI) makes that a failure.
func needRocksDB(t *testing.T) {
	t.Helper()
	_, gxx := exec.LookPath("g++")
	_, lib := os.Stat("/usr/include/rocksdb/sst_file_reader.h")
	if gxx == nil && lib == nil {
		return
	}
	msg := "no g++ or no RocksDB headers (install g++ and Debian's librocksdb-dev)"
	if os.Getenv("SSTABLE_REQUIRE_ROCKSDB") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// TestQuick runs the harness small and checks its report: every engine's
// figures on both tables and on the database, Pebble's refusal of the
// format_version 5 table, and no correctness failure.
func TestQuick(t *testing.T) {
	needRocksDB(t)
	var out, errOut bytes.Buffer
	if err := mainErr([]string{"-quick", "-tmp", t.TempDir(), "-keys", "30000", "-tables", "fv5,fv2,db"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	report := out.String()
	for _, want := range []string{"#### fv5", "#### fv2", "| full forward scan, ns/entry |", "| full forward scan, CPU time (all threads), ns/entry |",
		"| SeekGE to a present key, ns/op |", "| Get of a present key, ns/op |", "| Get of an absent key, ns/op |",
		"format_version 5, xxh3, Snappy", "format_version 2, crc32c, Snappy", "Pebble v2.1.7 on fv5: sstable.NewReader:", "Correctness:",
		"#### db", "| open, ms |", "a write-ahead log of", "holding 150 writes", "Correctness (db):"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// Every engine has a figure in every row of its tables: no "–" cells.
	for _, line := range strings.Split(report, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| figure") && strings.Contains(line, "| – |") {
			t.Errorf("missing figure: %s", line)
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Log(report)
	}
}

// TestFlags rejects bad flags.
func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"-keys", "0"}, {"-opens", "0"}, {"-impls", "goleveldb"}, {"-tables", "fv3"}, {"-pebble-get", "x"}, {"extra"}} {
		var out, errOut bytes.Buffer
		if err := mainErr(args, &out, &errOut); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
