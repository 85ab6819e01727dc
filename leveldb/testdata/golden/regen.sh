#!/bin/sh
# Regenerates the golden LevelDB databases that golden_test.go reads, with
# the oracle (testdata/oracle/ldboracle.cc; needs g++ and Debian's
# libleveldb-dev, LevelDB 1.23):
#
#   sh leveldb/testdata/golden/regen.sh
#
# For each database NAME: NAME/ holds the files LevelDB left at close
# (CURRENT, LOCK, the MANIFEST, the tables and the log, without LevelDB's
# text LOG), NAME.dump LevelDB's live view of it (hexkey TAB hexvalue),
# NAME.tables each table's entry count and the SHA-256 of its entries as
# leveldb::Table reads them (hexuserkey TAB seq TAB kind TAB hexvalue
# lines), NAME.info what gen printed (last sequence number, tables per
# level). LevelDB compacts in a background thread, so the tables and
# levels may differ from one run to the next; the live view does not.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -O1 -o "$tmp/ldboracle" ../oracle/ldboracle.cc -lleveldb
gen() {
	name=$1 seed=$2 comp=$3 nops=$4
	"$tmp/ldboracle" gen "$tmp/$name" "$seed" "$comp" "$nops" >"$name.info"
	rm -rf "$name"
	mkdir "$name"
	(cd "$tmp/$name" && cp CURRENT LOCK MANIFEST-* ./*.ldb ./*.log "$OLDPWD/$name/")
	cp -r "$name" "$tmp/copy"
	"$tmp/ldboracle" dump "$tmp/copy" >"$name.dump"
	rm -rf "$tmp/copy"
	: >"$name.tables"
	for f in "$name"/*.ldb; do
		"$tmp/ldboracle" dumptable "$f" | tail -n +2 >"$tmp/entries"
		echo "$(basename "$f") $(wc -l <"$tmp/entries") $(sha256sum <"$tmp/entries" | cut -d' ' -f1)" >>"$name.tables"
	done
	echo "$name: $(tr '\n' ' ' <"$name.info")$(du -sb "$name" | cut -f1) bytes"
}
gen snappy 7 snappy 1500
gen none 6 none 1000
