// Package oracletest decides whether a test against a real peer (LevelDB
// 1.23, RocksDB 7.8.3 or 10.5.1, Debian's tools) runs. Such tests compile
// C++ or start node and drive the peer for seconds to a minute each, so a
// plain `go test ./...` skips them and checks the golden files the peers
// wrote instead; they run under SSTABLE_LONG_TESTS=1 (as CI sets it) or
// when their peer is required (SSTABLE_REQUIRE_LEVELDB=1,
// SSTABLE_REQUIRE_ROCKSDB=1), and a required peer that is missing fails
// the test instead of skipping it.
package oracletest

import (
	"fmt"
	"os"
	"testing"
)

// Long reports whether the long tests were asked for
// (SSTABLE_LONG_TESTS set to anything but the empty string).
func Long() bool { return os.Getenv("SSTABLE_LONG_TESTS") != "" }

// Gate skips t unless the long tests were asked for or requireEnv (such
// as "SSTABLE_REQUIRE_ROCKSDB") is "1". peer names what the test reads
// against, for the skip message.
func Gate(t testing.TB, requireEnv, peer string) {
	t.Helper()
	if Long() || os.Getenv(requireEnv) == "1" {
		return
	}
	t.Skipf("skipping the tests against %s: they run with SSTABLE_LONG_TESTS=1 or %s=1 (CI sets both); the golden files check the same reads", peer, requireEnv)
}

// Missing reports that something the test needs (msg, formatted with
// args) is not installed: it fails t when requireEnv is "1", else skips
// it, with hint (how to install it) in the message.
func Missing(t testing.TB, requireEnv, peer, hint, msg string, args ...any) {
	t.Helper()
	m := fmt.Sprintf(msg, args...)
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("%s=1 but %s", requireEnv, m)
	}
	t.Skipf("skipping the tests against %s: %s (%s; %s=1 makes this a failure)", peer, m, hint, requireEnv)
}
