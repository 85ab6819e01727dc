#!/bin/sh
# Regenerates the golden RocksDB tables that golden_test.go reads, with the
# oracle (testdata/oracle/rdboracle.cc; needs g++ and Debian's
# librocksdb-dev, RocksDB 7.8.3):
#
#   sh rocksdb/testdata/golden/oracle-7.8.3/regen.sh
#
# It runs `rdboracle -small` (about a tenth of the entries of the oracle
# test's tables, short values) and keeps the stacks named below, with
# their tables and what RocksDB read from them (see README.md).
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -O1 -std=c++17 -o "$tmp/rdboracle" ../../oracle/rdboracle.cc -lrocksdb
mkdir "$tmp/out"
"$tmp/rdboracle" -small "$tmp/out"
stacks="fv0-crc32c-none fv1-xxhash fv2-none fv4-xxhash64 fv5-xxh3
comp-fv1-lz4 comp-fv2-zlib comp-fv2-bzip2 comp-fv2-lz4hc comp-fv2-zstd
dict-zstd-fv2 dict-zstd-trained dict-lz4hc
index-hash-fv5 index-first-key-fv3 index-restart4-fv3 index-restart4-two-level
data-hash-restart1 filter-prefix-capped-only filter-ribbon-frac filter-bloom-fv2-frac
reverse range-dels-unsorted db-no-snapshots db-entity db-blob db-ingest"
rm -f ./*.sst ./*.dump ./*.frag ./*.views ./*.gets manifest.txt
for st in $stacks; do
	line=$(grep "^stack $st " "$tmp/out/manifest.txt")
	for tb in $(echo "$line" | sed 's/.* tables=\([^ ]*\).*/\1/' | tr ',' ' '); do
		grep "^table $tb " "$tmp/out/manifest.txt" >>manifest.txt
		for ext in sst dump frag; do
			if [ -f "$tmp/out/$tb.$ext" ]; then cp "$tmp/out/$tb.$ext" .; fi
		done
	done
	echo "$line" >>manifest.txt
	cp "$tmp/out/$st.views" "$tmp/out/$st.gets" .
done
echo "$(grep -c '^table' manifest.txt) tables, $(grep -c '^stack' manifest.txt) stacks, $(cat ./* | wc -c) bytes"
