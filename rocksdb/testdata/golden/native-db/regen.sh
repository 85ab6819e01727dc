#!/bin/sh
# Regenerates the golden RocksDB 10.5.1 database that native_golden_test.go
# reads, with ../../native/write.cjs (needs node and npm's rocksdb-native
# 3.18.1: in rocksdb/testdata/native, `npm install --ignore-scripts`):
#
#   sh rocksdb/testdata/golden/native-db/regen.sh
#
# It writes the -small fv6-cfs-tail case and keeps its database directory
# (without RocksDB's info logs, LOG and LOG.old.*, text no reader needs),
# RocksDB's read-only reading of it (db-want.txt, gzipped: the log tail's
# large values make it 350 KB of hex) and case.json. See README.md.
set -eu
cd "$(dirname "$0")"
cases="fv6-cfs-tail"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
NODE_PATH="${NODE_PATH:-$(cd ../../native && pwd)/node_modules:/tmp/rnative/node_modules}" \
	node ../../native/write.cjs "$tmp" -small $cases
for c in $cases; do
	rm -rf "$c"
	mkdir -p "$c/db"
	for f in "$tmp/$c/db/"*; do
		case "$(basename "$f")" in
		LOG | LOG.old.*) ;;
		*) cp "$f" "$c/db/" ;;
		esac
	done
	gzip -9n <"$tmp/$c/db-want.txt" >"$c/db-want.txt.gz"
	cp "$tmp/$c/case.json" "$c/"
done
echo "$(cat */db/* */db-want.txt.gz */case.json | wc -c) bytes"
