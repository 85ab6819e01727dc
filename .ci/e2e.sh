#!/usr/bin/env bash
# End to end, as the README's quick start does it: build a table from
# GOROOT/src with the sst command, verify it, check that scan lists exactly
# the tree's regular files and that get returns files byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src="$(go env GOROOT)/src"
go build -o "$work/sst" ./cmd/sst
sst="$work/sst"

"$sst" build -o "$work/gosrc.sst" "$src"
"$sst" verify "$work/gosrc.sst"
"$sst" info "$work/gosrc.sst" | head -3
# The default table is format version 4 (compact hash index).
if ! "$sst" info "$work/gosrc.sst" | grep -q '^  format version: *4$'; then
  echo "e2e: the default table is not format version 4" >&2
  exit 1
fi

(cd "$src" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) > "$work/want.txt"
"$sst" scan -keys-only "$work/gosrc.sst" > "$work/got.txt"
if ! cmp -s "$work/want.txt" "$work/got.txt"; then
  echo "e2e: scan -keys-only differs from the tree's regular files" >&2
  diff "$work/want.txt" "$work/got.txt" | head -20 >&2
  exit 1
fi

n=0
while read -r key; do
  "$sst" get "$work/gosrc.sst" "$key" > "$work/value"
  cmp "$src/$key" "$work/value"
  n=$((n + 1))
done < <(awk 'NR % 500 == 1' "$work/want.txt")
if "$sst" get "$work/gosrc.sst" "no/such/file.go" 2>/dev/null; then
  echo "e2e: get of an absent key succeeded" >&2
  exit 1
fi
echo "e2e: $(wc -l < "$work/want.txt") files listed exactly; $n values byte-identical"

# scan -prefix lists exactly the files under a directory; -hex round-trips.
if ! "$sst" scan -keys-only -prefix net/http/ "$work/gosrc.sst" | cmp -s - <(grep '^net/http/' "$work/want.txt"); then
  echo "e2e: scan -prefix net/http/ differs from the tree's files under net/http/" >&2
  exit 1
fi
tohex() { od -An -v -tx1 | tr -d ' \n'; }
got=$("$sst" scan -hex -prefix "$(printf fmt/doc.go | tohex)" "$work/gosrc.sst" | cut -f2)
if [[ "$got" != "$(tohex < "$src/fmt/doc.go")" ]]; then
  echo "e2e: scan -hex of fmt/doc.go is not its bytes in hex" >&2
  exit 1
fi

# -split into a directory of tables, all verified by one command; a failed
# -f rebuild (a duplicate key on standard input) leaves them as they were.
"$sst" build -q -split 8MiB -o "$work/split" "$src" > /dev/null
"$sst" verify "$work/split"/*.sst > /dev/null
before=$(cd "$work/split" && ls -A && cat manifest.json | cksum)
if printf 'k\nk\n' | "$sst" build -q -f -split 8MiB -o "$work/split" - 2>/dev/null; then
  echo "e2e: a build with a duplicate key succeeded" >&2
  exit 1
fi
if [[ "$(cd "$work/split" && ls -A && cat manifest.json | cksum)" != "$before" ]]; then
  echo "e2e: a failed -split -f rebuild changed the earlier build" >&2
  exit 1
fi
echo "e2e: -split: $(ls "$work/split"/*.sst | wc -l) tables verified; a failed rebuild kept them"

# zstd: at most 0.85 of the snappy table's size (issue 12), and readable.
"$sst" build -compression zstd -filter fuse8 -o "$work/gosrc-zstd.sst" "$src" > /dev/null
"$sst" verify "$work/gosrc-zstd.sst"
snappy_size=$(stat -c %s "$work/gosrc.sst")
zstd_size=$(stat -c %s "$work/gosrc-zstd.sst")
if ((zstd_size * 100 > snappy_size * 85)); then
  echo "e2e: zstd table $zstd_size bytes, more than 0.85 of snappy's $snappy_size" >&2
  exit 1
fi
"$sst" scan -keys-only "$work/gosrc-zstd.sst" | cmp -s - "$work/want.txt"
echo "e2e: zstd table $zstd_size bytes, $((zstd_size * 1000 / snappy_size))/1000 of snappy's $snappy_size"

# The older layouts: version 1 (3 once the index and filter outgrow the
# partition threshold), and with version 2's hash index (or 3 with it):
# uncompressed, snappy and zstd.
for comp in none snappy zstd; do
  t="$work/gosrc-v1-$comp.sst"
  "$sst" build -format-version 1 -compression "$comp" -o "$t" "$src" > /dev/null
  "$sst" verify "$t"
  if ! "$sst" info "$t" | grep -q '^  format version: *[13]$'; then
    echo "e2e: $t is not format version 1 or 3" >&2
    exit 1
  fi
  "$sst" scan -keys-only "$t" | cmp -s - "$work/want.txt"
done
for comp in none snappy zstd; do
  t="$work/gosrc-hash-$comp.sst"
  "$sst" build -hash-index -compression "$comp" -o "$t" "$src" > /dev/null
  "$sst" verify "$t"
  info=$("$sst" info "$t")
  if ! grep -q '^  format version: *[23]$' <<< "$info"; then
    echo "e2e: $t is not format version 2 or 3" >&2
    exit 1
  fi
  "$sst" scan -keys-only "$t" | cmp -s - "$work/want.txt"
  m=0
  while read -r key; do
    "$sst" get "$t" "$key" | cmp -s - "$src/$key"
    m=$((m + 1))
  done < <(awk 'NR % 250 == 7' "$work/want.txt")
  if "$sst" get "$t" "no/such/file.go" 2>/dev/null; then
    echo "e2e: get of an absent key succeeded ($comp, hash index)" >&2
    exit 1
  fi
  echo "e2e: hash index, $comp: listing exact, $m values byte-identical"
done

# LevelDB (issue 42): the fixture database's live view, as goleveldb's own
# iterator printed it, and converted into a table that scans the same.
ldb=cmd/sst/testdata/leveldb
"$sst" verify -leveldb "$ldb/db"
if ! "$sst" scan -hex -leveldb "$ldb/db" | cmp -s - <(gzip -dc "$ldb/db.hex.gz"); then
  echo "e2e: scan -leveldb differs from goleveldb's iterator" >&2
  exit 1
fi
"$sst" build -leveldb "$ldb/db" -o "$work/leveldb.sst" > /dev/null
if ! "$sst" scan "$work/leveldb.sst" | cmp -s - <("$sst" scan -leveldb "$ldb/db"); then
  echo "e2e: the table built from a LevelDB database scans differently" >&2
  exit 1
fi
echo "e2e: LevelDB: live view as goleveldb's, converted table identical"
