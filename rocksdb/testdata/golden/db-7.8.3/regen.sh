#!/bin/sh
# Regenerates the golden RocksDB 7.8.3 databases that dbgolden_test.go
# reads, with the database oracle (testdata/dboracle/dboracle.cc; needs
# g++ and Debian's librocksdb-dev, RocksDB 7.8.3):
#
#   sh rocksdb/testdata/golden/db-7.8.3/regen.sh
#
# It runs `dboracle gen -small` for the seeds below and keeps, for each,
# the database directory (without RocksDB's info logs, LOG and LOG.old.*,
# text no reader needs), RocksDB's read-only reading of it (want) and the
# workload's summary (info). See README.md.
set -eu
cd "$(dirname "$0")"
seeds="1 5 6"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -O1 -std=c++17 -o "$tmp/dboracle" ../../dboracle/dboracle.cc -lrocksdb
mkdir "$tmp/out"
"$tmp/dboracle" gen -small "$tmp/out" $seeds
rm -rf s[0-9]*
for s in $seeds; do
	mkdir -p "s$s/db"
	for f in "$tmp/out/s$s/db/"*; do
		case "$(basename "$f")" in
		LOG | LOG.old.*) ;;
		*) cp "$f" "s$s/db/" ;;
		esac
	done
	cp "$tmp/out/s$s/want" "$tmp/out/s$s/info" "s$s/"
done
echo "$(ls -d s[0-9]* | wc -l) databases, $(cat s*/db/* s*/want s*/info | wc -c) bytes"
