package rocksdb_test

// Golden tables written by RocksDB 7.8.3 (the oracle's -small run,
// testdata/golden/oracle-7.8.3/regen.sh), with what RocksDB read from
// them: the checks of TestRocksDBOracle, without RocksDB installed.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstkit/sstable/rocksdb"
)

func TestRocksDBGolden(t *testing.T) {
	dir := filepath.Join("testdata", "golden", "oracle-7.8.3")
	tables, stacks := readOracleManifest(t, dir)
	// The corpus must keep covering the matrix: each of these seen in at
	// least one table.
	seen := map[string]bool{}
	for _, tb := range tables {
		for _, k := range []string{"fv", "checksum", "compression", "index", "comparator"} {
			seen[k+"="+tb.opt[k]] = true
		}
		seen["filter="+strings.Split(tb.opt["filter"], ":")[0]] = true
		if tb.opt["prefix"] != "-" && tb.opt["prefix"] != "" {
			seen["prefix"] = true
		}
		if tb.opt["dict"] != "" && tb.opt["dict"] != "0" {
			seen["dict="+tb.opt["compression"]] = true
		}
		if tb.opt["ingested"] == "1" {
			seen["ingested"] = true
		}
		d := readOracleDump(t, filepath.Join(dir, tb.name+".dump"))
		for _, e := range d.entries {
			seen["kind="+e.kind.String()] = true
		}
		if n, _ := d.prop("# range deletions"); n != "0" {
			seen["range-delete"] = true
		}
	}
	var missing []string
	for _, want := range []string{
		"fv=0", "fv=1", "fv=2", "fv=4", "fv=5",
		"checksum=none", "checksum=crc32c", "checksum=xxhash", "checksum=xxhash64", "checksum=xxh3",
		"compression=none", "compression=snappy", "compression=zlib", "compression=bzip2", "compression=lz4", "compression=lz4hc", "compression=zstd",
		"dict=zstd", "dict=lz4hc",
		"index=binary-search", "index=hash-search", "index=two-level", "index=binary-search-with-first-key",
		"comparator=leveldb.BytewiseComparator", "comparator=rocksdb.ReverseBytewiseComparator",
		"filter=none", "filter=bloom", "filter=ribbon", "prefix", "ingested", "range-delete",
		"kind=" + rocksdb.KindValue.String(), "kind=" + rocksdb.KindDeletion.String(), "kind=" + rocksdb.KindSingleDeletion.String(),
		"kind=" + rocksdb.KindMerge.String(), "kind=" + rocksdb.KindBlobIndex.String(), "kind=" + rocksdb.KindWideColumnEntity.String(),
	} {
		if !seen[want] {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 || len(stacks) < 20 {
		t.Fatalf("the golden corpus (%d tables, %d stacks) lacks %v", len(tables), len(stacks), missing)
	}
	checkOracleCorpus(t, dir)
}
