// Command sst builds, reads and checks SSTable files written by
// github.com/sstkit/sstable.
//
// Usage:
//
//	sst <command> [arguments]
//
// The commands are:
//
//	build -o OUT [-f] [-memory BYTES] [-q] [-hex] [-spans FILE] [-block-size N] [-compression snappy|minlz|zstd|none] [-compression-level L] [-dict BYTES] [-bits-per-key N] [-filter bloom|fuse8] [-format-version N] [-hash-index] INPUT
//	build -split BYTES -o DIR [-f] [-memory BYTES] [-q] [-hex] [flags] INPUT...
//	build -leveldb DIR -o OUT [-split BYTES] [-f] [-hex] [flags]
//	build -rocksdb NEWEST.sst ... OLDEST.sst -o OUT [-split BYTES] [-f] [-hex] [flags]
//	build -rocksdb DIR [-cf NAME] -o OUT [-split BYTES] [-f] [-hex] [flags]
//	    Write a table to OUT. An existing OUT is an error unless -f is
//	    given; with -f the new table replaces it atomically (by rename)
//	    once it is complete. INPUT is a directory, a text file, or "-" for
//	    standard input read as a text file (./- names a file called "-").
//	    For a directory, every regular file under it (walked recursively;
//	    symbolic links, devices and other non-regular files are skipped)
//	    becomes an entry whose key is its slash-separated path relative to
//	    INPUT and whose value is its contents; OUT itself is skipped if it
//	    lies inside INPUT. For a text file, every line is an entry
//	    "key<TAB>value", split at the first tab; a line without a tab is a
//	    key with an empty value (so an empty line is the empty key). Only
//	    the "\n" or "\r\n" line ending is stripped. With -hex, key and
//	    value are hexadecimal digits (either case), so that they may hold
//	    any bytes, tabs and newlines included; bad hex is an error naming
//	    the line. Entries are sorted by
//	    key; a duplicate key is an error and leaves no file behind.
//	    -spans FILE adds spans (range deletions, range keys) from the text
//	    file FILE, one "start<TAB>end<TAB>value" per line (hex digits with
//	    -hex; the value and its tab may be left out, not the end), in any
//	    order and possibly overlapping: the table (each table, with
//	    -split, clipped to its key range) stores them fragmented in a span
//	    block, as format version 5. -spans - reads the spans from standard
//	    input, which is then no INPUT: -spans - with INPUT - is a usage
//	    error.
//	    Input of any size is sorted within -memory (default 256MiB):
//	    entries beyond it are sorted and spilled to temporary tables,
//	    merged at the end (package bulk), in a working directory
//	    .NAME.bulk-N (NAME: OUT's base name) beside OUT, or inside DIR with
//	    -split; a build killed with SIGKILL leaves it behind, and the next
//	    build of the same OUT removes it (unless a running build holds it).
//	    -split BYTES writes
//	    non-overlapping tables of about BYTES each into the directory DIR,
//	    named in key order (000001.sst, ...), and DIR/manifest.json listing
//	    them, from one or more INPUTs; DIR must not hold an earlier
//	    build's tables or manifest unless -f is given, which replaces them
//	    once the new build is complete: a failed build leaves them as they
//	    were. Sizes
//	    take a unit: KiB, MiB, GiB (or K, M, G), KB, MB, GB. A progress
//	    line (entries and bytes so far, phase: reading, spilling, merging)
//	    goes to standard error when it is a terminal, unless -q is given.
//	    -block-size is the target data block size in bytes, 1 to 2^30
//	    (default 4096); -compression is snappy (the default), zstd or none;
//	    -compression-level is zstd's level: fastest, default, better or best
//	    (an error without -compression zstd);
//	    -bits-per-key sets the bloom filter size, 1 to 64 (default 10);
//	    -filter fuse8 uses a binary fuse filter (about 9 bits per key,
//	    0.39% false positives) instead of the bloom filter;
//	    -format-version 1, 2 or 3 writes the layouts before version 4, the
//	    default (whose compact hash index serves every Get); -hash-index
//	    writes version 2 (3 when partitioned) with its wider hash index.
//	    On success build prints
//	    the entry count, bytes in (keys plus values), bytes out (file
//	    size), compression ratio, filter size and elapsed time.
//
//	get [-hex] FILE KEY...
//	get -merge [-hex] [-tombstone HEX] [-range-tombstone HEX] FILE... -- KEY...
//	get -leveldb [-hex] DIR KEY...
//	get -rocksdb [-cf NAME] [-hex] DIR KEY...
//	    Write the value of each KEY to standard output. With one KEY the
//	    value's exact bytes are written, with no newline added; with
//	    several, each value is followed by a newline. An absent key is
//	    reported on standard error, produces no output, and makes the exit
//	    status 1; the other keys are still printed. With -hex, each KEY is
//	    hexadecimal digits and each value is printed as hexadecimal digits
//	    and a newline, and an absent KEY prints a line "-" (no hex digit;
//	    an empty value is an empty line) besides its report, so that line N
//	    of the output answers the Nth KEY. With -merge, the KEYs are looked up in the merged
//	    view (below) of the FILEs before "--"; the KEYs follow it, and the
//	    flags go before it. A key deleted in the view is absent.
//
//	scan FILE [-start K] [-end K] [-prefix P] [-limit N] [-keys-only] [-spans] [-hex]
//	scan -merge [-tombstone HEX] [-range-tombstone HEX] [flags] FILE...
//	scan -leveldb DIR [flags]
//	scan -rocksdb DIR [-cf NAME] [flags]
//	    Print the entries with start <= key < end whose keys begin with P,
//	    in key order, one per line: the key, then (unless -keys-only) a
//	    tab and the value. The output is raw bytes: keys or values holding
//	    tabs or newlines make it ambiguous; with -hex, K and P are
//	    hexadecimal digits and keys and values are printed as hexadecimal
//	    digits, which is not. Without -end the scan runs through the last
//	    key; an empty -end prints nothing. -limit 0 means no limit. With
//	    -merge, the entries printed, in the same form, are those of the
//	    merged view (below) of the FILEs; -spans does not go with it.
//
//	info [-hex] FILE
//	info -leveldb [-hex] DIR
//	info -rocksdb [-hex] [-cf NAME] DIR
//	    Print the table's properties and its layout: the offset and size
//	    of the data blocks, filter section, index block, properties block
//	    and footer, the file size, and whether the filter policy is known.
//	    The smallest and largest keys are printed as Go string literals
//	    byte by byte: printable ASCII as it is (with \" and \\ escaped), any
//	    other byte as \xHH, which strconv.Unquote turns back into the key;
//	    with -hex, as hexadecimal digits.
//
//	verify FILE...
//	verify -merge [-tombstone HEX] [-range-tombstone HEX] FILE...
//	verify -leveldb DIR
//	verify -rocksdb DIR
//	    Read every block, check every checksum and each table's internal
//	    consistency, and print "ok: N entries, M data blocks", after
//	    "FILE: " when there are several FILEs or -merge is given. A FILE
//	    that fails is reported on standard error and the others are still
//	    checked; the exit status is 1 if any failed. With -merge, when
//	    every FILE passed, verify then reads the merged view (below) of the
//	    FILEs from its first key to its last, checks that its keys rise
//	    strictly, and prints "merged view: ok: N entries (of T in F
//	    tables)": the entries of the view, of the FILEs, and the FILEs.
//
//	compact -o DIR [-split BYTES] [-bottom] [-tombstone HEX] [-range-tombstone HEX] [-hex] [table flags] FILE...
//	    Write the merged view (below) of the FILEs into new non-overlapping
//	    tables in DIR, which must be new or empty, through merge.Compact:
//	    000001.sst, ... in key order, and DIR/manifest.json, all or nothing.
//	    Keys shadowed by a newer FILE's entry or under a newer FILE's range
//	    deletion are dropped. Unless -bottom is given (nothing older lies
//	    below the FILEs), the newest deletion of a key (when no newer range
//	    deletion covers it) and the range deletions are kept, so that the
//	    output still hides the keys of older tables left out of the
//	    compaction; spans that delete nothing (range keys) are always kept.
//	    -split BYTES starts a new table once one reaches about BYTES (sizes
//	    as build's; default: one table). The table flags -block-size,
//	    -compression, -compression-level, -dict, -bits-per-key and -filter
//	    lay the output tables out as build's do. compact prints the tables
//	    written as build -split does, with the tables' smallest and largest
//	    keys as hexadecimal digits with -hex.
//
//	bench filter [-keys N] [-bits LIST] [-policy LIST] [-dist LIST] [-plot FILE]
//	    For each filter policy (bloom, leveldb, fuse8), bits per key and key
//	    distribution (random16, decimal, prefix12, prefix100, seq64), build
//	    a filter over N keys (default 1000000), probe N absent keys, and
//	    print a markdown table of the measured and theoretical false
//	    positive rates, bytes per key, ns per probe and ns per key to
//	    build (the fastest of 3 passes). -plot FILE also draws the rates
//	    against bits per key, as SVG or (through rsvg-convert or
//	    ImageMagick) PNG. Progress goes to standard error once the run has
//	    taken a second.
//
//	help [COMMAND]
//	    Print the usage text, or only COMMAND's part of it, as
//	    "sst COMMAND -h" does.
//
// A merged view (scan, get and verify with -merge, and compact) reads the
// FILEs given, newest first, as one table, each FILE a level of package
// merge: a key reads as in the newest FILE holding it, unless that value
// is a deletion or a newer FILE's range deletion covers the key; then it
// is absent. -tombstone HEX makes a value beginning with the bytes HEX
// (hexadecimal digits, not empty: an empty HEX, most often an unset shell
// variable, would delete every value) a deletion (by default no value is
// one); -range-tombstone HEX makes only the spans whose value begins with
// them range deletions, the others range keys, which hide nothing (by
// default every span is a range deletion). Both may be repeated. A FILE
// given twice, by one path or two, is a usage error.
//
// LevelDB: info, verify, scan and get also take a LevelDB or goleveldb
// table FILE, recognised by its magic number (package leveldb). Its
// entries are internal keys, every version of each user key, newest
// first: scan prints each as "KEY @SEQ KIND", a tab and the value (KIND
// "value" or "delete", whose value is empty; KEY and value as hex digits
// with -hex); get prints a key's newest version at or below -seq N
// (default: the newest), a deletion being absent; info prints the
// table's layout and what a scan finds; verify checks it (Table.Verify).
// With -leveldb, DIR is a LevelDB database directory, opened read-only
// and refused while LevelDB or goleveldb has it open: scan and get read
// its live view (each live key once, with its newest value, as LevelDB's
// own iterator shows it) and print exactly what they print for a table
// of this package; verify checks its live tables and reads the view;
// info prints the last sequence number, the log entries replayed and the
// tables level by level (number, size, smallest and largest internal
// keys), noting a table file whose size is not the MANIFEST's; build writes the view into one table OUT or, with -split, a directory
// of tables and a manifest, as a build from text does, all or nothing.
//
// RocksDB: info, verify, scan and get also take a RocksDB block-based
// table FILE (package rocksdb: format_version 0 to 7, as RocksDB 7.8 to
// 11 writes them), recognised by its footer: RocksDB's magic number, or
// LevelDB's with a rocksdb.properties meta block (format_version 0).
// scan prints its internal entries as a LevelDB table's, "KEY @SEQ KIND",
// a tab and the value as stored, KIND one of value, delete,
// single-delete, merge, blob-index, entity, value-preferred-seqno and
// delete-with-timestamp (with -hex, what sst_dump --command=scan
// --output_hex prints); scan -spans prints its range deletions,
// "START<TAB>END<TAB>@SEQ" (the keys in [START, END) deleted as of
// sequence number SEQ). get prints a key's newest value at or below -seq
// N (default: the newest): absent when that version is a deletion or
// lies under a newer range deletion of the table; an entity's default
// column; an error naming the key for a merge operand or blob index,
// whose value the table alone does not hold. info prints every property,
// labelled as sst_dump --show_properties labels them, then the layout and
// what a scan finds; verify checks the table (Table.Verify). build
// -rocksdb reads tables, newest first, as the levels of a merged view with
// RocksDB's rules (rocksdb.Table.Level) and writes the view into tables
// of this package as build -leveldb does.
// With -rocksdb, DIR is a RocksDB database directory, opened read-only
// (rocksdb.OpenDB) and refused while a RocksDB process holds it; a
// LevelDB directory given to -rocksdb, or a RocksDB one to -leveldb, is
// a usage error saying which flag reads it. scan and get read a column
// family's live view (-cf NAME, "default" unless given), as RocksDB's
// read-only open shows it, and print exactly what they print for a table
// of this package: blob values read from the blob files, merge operands
// through the built-in operator the family's OPTIONS file names
// (StringAppendOperator or UInt64AddOperator); a key whose value needs
// another operator is an error naming the key, exit status 1. verify
// checks every live table and blob file and reads every family's view;
// info prints the last sequence number and, per column family, the
// comparator and merge operator of its options, the log entries
// replayed, its blob files and its tables level by level (number, size,
// smallest and largest internal keys); build -rocksdb DIR (a directory
// rather than table files) writes a family's view into tables of this
// package as build -leveldb does.
//
// Flags may come before or after the positional arguments. An argument
// "--" ends the flags: everything after it is positional, which lets a KEY
// begin with "-".
//
// Errors are reported as a single line on standard error beginning with
// "sst: " and naming the command and the file: "sst: CMD: ...", with no
// library prefix after it. The exit status is 0 on
// success, 2 for a usage error and 1 for any other error. Running sst with
// no arguments is a usage error: it prints the usage to standard error and
// exits 2.
package main
