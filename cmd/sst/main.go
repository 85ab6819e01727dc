package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sstkit/sstable/internal/errmsg"
)

const usageText = `sst builds, reads and checks SSTable files.

Usage:

  sst build -o OUT [-f] [-memory BYTES] [-q] [-hex] [-spans FILE] [-block-size N] [-compression snappy|minlz|zstd|none] [-compression-level L] [-dict BYTES] [-bits-per-key N] [-filter bloom|fuse8] [-format-version N] [-hash-index] INPUT
  sst build -split BYTES -o DIR [-f] [-memory BYTES] [-q] [-hex] [flags] INPUT...
  sst build -leveldb DIR -o OUT [-split BYTES] [-f] [-hex] [flags]
  sst build -rocksdb NEWEST.sst ... OLDEST.sst -o OUT [-split BYTES] [-f] [-hex] [flags]
  sst build -rocksdb DIR [-cf NAME] -o OUT [-split BYTES] [-f] [-hex] [flags]
        Write a table to OUT from INPUT, a directory, a text file, or "-"
        for standard input, read as a text file (./- is a file named "-").
        An existing OUT is an error unless -f is given; with -f it is
        replaced atomically once the new table is complete.
        Directory: every regular file under INPUT (recursively; symlinks,
        devices and other non-regular files are skipped) is an entry with
        key = its slash-separated path relative to INPUT, value = its bytes.
        OUT itself is skipped if it lies inside INPUT.
        Text file: every line is "key<TAB>value", split at the first tab;
        a line without a tab is a key with an empty value. Only a trailing
        "\n" or "\r\n" is stripped.
        Entries are sorted by key; a duplicate key is an error and leaves
        no output file. Input of any size is sorted within -memory: sorted
        runs are spilled to temporary tables and merged, in a working
        directory .NAME.bulk-N beside OUT (inside DIR with -split), which
        the next build of OUT removes if a killed build left it.
        With -split, non-overlapping tables of about BYTES each go into
        the directory DIR (000001.sst, ... in key order) with
        DIR/manifest.json; several INPUTs may be given.
          -o OUT             output table (required); with -split, a directory
          -f                 replace OUT if it exists; with -split, replace an
                             earlier build's tables and manifest in DIR; only
                             once the new build is complete, either way
          -memory BYTES      entries held in memory before a sorted run is
                             spilled (default 256MiB); units KiB, MiB, GiB
                             (or K, M, G) and KB, MB, GB
          -split BYTES       write tables of about BYTES each into DIR
          -q                 no progress line (shown only when stderr is a
                             terminal: entries, bytes, phase)
          -hex               text input lines are hexkey<TAB>hexvalue: hex
                             digits (either case), so keys and values may
                             hold any bytes, tabs and newlines included
          -spans FILE        add the spans (range deletions, range keys) of
                             the text file FILE: lines start<TAB>end<TAB>value
                             (hex digits with -hex; the value may be empty),
                             in any order, possibly overlapping; the table
                             (each table, with -split) holds them
                             fragmented, as format version 5. FILE "-" is
                             standard input, and then no INPUT may be "-"
          -block-size N      target data block size in bytes, 1..1073741824 (default 4096)
          -compression C     data block compression: snappy, minlz, zstd or none (default snappy)
          -compression-level L  zstd or minlz level: fastest, default, better or best (default default);
                             an error without -compression zstd or minlz
          -dict BYTES        with -compression zstd, train a dictionary of
                             this size (e.g. 16KiB; 0, the default, for
                             none) from the first blocks, store it in the
                             table and encode every block with it
          -bits-per-key N    bloom filter bits per key, 1..64 (default 10)
          -filter F          filter policy: bloom or fuse8, a binary fuse filter (default bloom)
          -format-version N  4 (the default: a compact hash index serves Get,
                             about 4.6 bytes per entry), or 1 to 3, the older
                             layouts (1: no hash index; partitioned as 3 past
                             240 KiB of index and filter)
          -hash-index        format version 2 (3 when partitioned) with its
                             wider hash index: about 1.5 slots of 4 to 8 bytes
                             per entry, and keys stored whole
          -leveldb           INPUT is a LevelDB database (below): write its
                             live view, as scan -leveldb prints it, into
                             OUT (or, with -split, DIR's tables)
          -rocksdb           the INPUTs are RocksDB tables (below), newest
                             first: write their merged view (each key's
                             newest value, deletions and range deletions
                             applied) into OUT (or, with -split, DIR's
                             tables); or INPUT is a RocksDB database
                             directory: write a column family's live view,
                             as scan -rocksdb prints it
          -cf NAME           with -rocksdb DIR: the column family (default
                             "default")

  sst get [-hex] FILE KEY...
  sst get -merge [-hex] [-tombstone HEX] [-range-tombstone HEX] FILE... -- KEY...
  sst get -leveldb [-hex] DIR KEY...
  sst get -rocksdb [-cf NAME] [-hex] DIR KEY...
        Write the value of each KEY to stdout. With one KEY the exact value
        bytes are written, no newline added; with several KEYs each value is
        followed by a newline. An absent key is reported on stderr, prints
        nothing on stdout, and makes the exit status 1.
          -hex               each KEY is hex digits; each value is printed
                             as hex digits and a newline, and an absent KEY
                             as a line "-" (besides its report and exit
                             status), so that line N answers the Nth KEY
          -merge             look the KEYs up in the merged view (below) of
                             the FILEs, newest first, given before "--"; the
                             KEYs follow it, flags go before it; a deleted
                             KEY is absent
          -leveldb           look the KEYs up in the live view of the
                             LevelDB database (below) in DIR
          -rocksdb           look the KEYs up in the live view of a column
                             family of the RocksDB database (below) in DIR
          -cf NAME           with -rocksdb: the column family (default
                             "default")
          -seq N             FILE is a LevelDB or RocksDB table (below):
                             print the newest version at or below sequence
                             number N (default: the newest)

  sst scan FILE [-start K] [-end K] [-prefix P] [-limit N] [-keys-only] [-spans] [-hex]
  sst scan -merge [-tombstone HEX] [-range-tombstone HEX] [flags] FILE...
  sst scan -leveldb DIR [flags]
  sst scan -rocksdb DIR [-cf NAME] [flags]
        Print entries with start <= key < end in key order, one per line:
        key, TAB, value (raw bytes: ambiguous if they hold tabs or newlines;
        with -hex they are not).
          -start K           first key to print (default: the first key)
          -end K             stop before this key (default: none; print
                             through the last key)
          -prefix P          only keys beginning with P (and within -start, -end)
          -limit N           print at most N entries; 0 means no limit (default 0)
          -keys-only         print keys only
          -spans             print the span fragments overlapping [start,
                             end) instead: start, TAB, end, then TAB and each
                             value of the spans covering the fragment; for
                             a RocksDB table (below), its range deletions
          -hex               K and P are hex digits; keys and values are
                             printed as hex digits: hexkey TAB hexvalue
          -merge             print the merged view (below) of the FILEs,
                             newest first, as one table's entries are
                             printed; not with -spans
          -leveldb           print the live view of the LevelDB database
                             (below) in DIR, as a table's entries are
                             printed; not with -merge or -spans
          -rocksdb           the same for a column family of the RocksDB
                             database (below) in DIR
          -cf NAME           with -rocksdb: the column family (default
                             "default")

  sst info [-hex] FILE
  sst info -leveldb [-hex] DIR
  sst info -rocksdb [-hex] [-cf NAME] DIR
        Print the table's properties, the offset and size of every section,
        the file size, and whether the filter policy is known. The smallest
        and largest keys are Go string literals, byte by byte: printable
        ASCII as is (\" and \\ escaped), any other byte as \xHH.
          -hex               print the smallest and largest keys as hex digits
        For a LevelDB table (below): its layout, filter, and what a scan
        finds: entries, deletions, user keys, sequence numbers, and the
        smallest and largest keys, each with its sequence number and kind.
        For a RocksDB table (below): the same, after its properties.
        With -leveldb, DIR is a LevelDB database (below): its last
        sequence number, the log entries replayed, and its tables level
        by level (number, size, smallest and largest keys).
        With -rocksdb, DIR is a RocksDB database (below): its last sequence
        number and column families (-cf: only NAME), each with the
        comparator and merge operator its OPTIONS file names, the log
        entries replayed, its blob files, and its tables level by level
        (number, size, smallest and largest keys).

  sst verify FILE...
  sst verify -merge [-tombstone HEX] [-range-tombstone HEX] FILE...
  sst verify -leveldb DIR
  sst verify -rocksdb DIR
        Check every block and checksum and each table's internal
        consistency; print "ok: N entries, M data blocks" (after "FILE: "
        when there are several, or -merge). A FILE may be a LevelDB or
        RocksDB table (below). A FILE that fails is reported on stderr
        and the others still checked; then the exit status is 1.
          -merge             then, if every FILE passed, also read the
                             merged view (below) of the FILEs, newest first,
                             from its first key to its last, checking that
                             its keys rise strictly, and print "merged view:
                             ok: N entries (of T in F tables)"
          -leveldb           check the live tables of the LevelDB database
                             (below) in DIR and read its live view; print
                             "ok: N entries in T tables, L keys in the log;
                             live view: K keys, last sequence S"
          -rocksdb           check the live tables and blob files of the
                             RocksDB database (below) in DIR and read every
                             column family's live view; print "ok: N
                             entries in T tables, B blob files, L writes
                             replayed from the logs; live view: K keys in F
                             column families, last sequence S"

  sst compact -o DIR [-split BYTES] [-bottom] [-tombstone HEX] [-range-tombstone HEX] [-hex] [-block-size N] [-compression C] [-compression-level L] [-dict BYTES] [-bits-per-key N] [-filter F] FILE...
        Write the merged view (below) of the FILEs, newest first, into new
        non-overlapping tables in DIR (000001.sst, ... in key order) with
        DIR/manifest.json, and print them as build -split does. DIR must be
        new or empty. Keys shadowed by a newer FILE or under a newer FILE's
        range deletion are dropped; the newest deletion of a key and the
        range deletions are kept (they may hide keys of older tables not
        compacted) unless -bottom is given. Spans that delete nothing
        (range keys) are kept. All or nothing: a failed compaction leaves
        no table and no manifest in DIR.
          -o DIR             output directory, new or empty (required)
          -split BYTES       start a new table once one reaches about BYTES
                             (default: one table); units KiB, MiB, GiB (or
                             K, M, G) and KB, MB, GB
          -bottom            nothing older lies below the FILEs: drop the
                             deletions and range deletions too
          -hex               print the tables' smallest and largest keys as
                             hex digits
          -block-size N, -compression C, -compression-level L, -dict BYTES,
          -bits-per-key N, -filter F
                             the output tables' layout, as for build

  sst bench filter [-keys N] [-bits LIST] [-policy LIST] [-dist LIST] [-plot FILE]
        For each policy x bits/key x key distribution, build a filter over
        N keys, probe N absent keys, and print a markdown table: measured
        and theoretical FPR, their ratio, bytes/key, ns/probe, ns/key to
        build (times: the fastest of 3 passes). Progress goes to stderr
        once the run has taken a second.
          -keys N            keys per filter, 1..100000000 (default 1000000)
          -bits LIST         bits per key, each 1..32 (default 6,8,10,12,16,20)
          -policy LIST       any of bloom (cache-local, the default policy),
                             leveldb (LevelDB's built-in) and fuse8 (binary
                             fuse, 8-bit fingerprints) (default bloom,leveldb,fuse8)
          -dist LIST         key distributions (default all):
                               random16   random 16-byte keys; probes: other random keys
                               decimal    %016d of 2i; probes: 2i+1
                               prefix12   12-byte common prefix + big-endian uint32 2i; probes: 2i+1
                               prefix100  100-byte common prefix + big-endian uint32 2i; probes: 2i+1
                               seq64      big-endian uint64 2i; probes: 2i+1
          -plot FILE         also plot measured and theoretical FPR against
                             bits/key: FILE.svg, or FILE.png (needs
                             rsvg-convert or ImageMagick convert)
        LIST is comma-separated.

  sst help [COMMAND]
        Print this text, or only COMMAND's part of it (as sst COMMAND -h does).

Merged view (scan, get and verify with -merge, and compact): the FILEs are
read as one table, given newest first, each FILE its own level (a FILE
given twice is an error). A key reads as in the newest FILE holding it,
unless that value is a deletion (-tombstone) or a newer FILE's range
deletion covers the key: then it is absent. A FILE's range deletions
hide nothing of its own. Neither scan nor get prints a deletion.
          -tombstone HEX     a value beginning with the bytes HEX (hex
                             digits, not empty) is a deletion (default: no
                             value is); repeat the flag for several prefixes
          -range-tombstone HEX  a span whose value begins with the bytes HEX
                             is a range deletion, hiding the keys of older
                             FILEs in [start, end); the other spans are range
                             keys, which hide nothing (default: every span
                             is a range deletion); repeatable

LevelDB: info, verify, scan and get take a LevelDB or goleveldb
table FILE, known by its magic number. Its entries are every version of
each user key, newest first; scan prints each as "KEY @SEQ KIND", TAB,
value (KIND is value or delete, whose value is empty; KEY and value as
hex digits with -hex); get prints a key's newest version, absent if that
is a deletion. -leveldb DIR reads a LevelDB database directory read-only
(refused while LevelDB or goleveldb has it open): its live view, each
live key once with its newest value, as LevelDB's own iterator shows it.
A damaged write-ahead log record is an error, as with LevelDB's
paranoid_checks; with -skip-log-damage it is skipped as LevelDB skips it
by default, and a warning says so.

RocksDB: info, verify, scan and get take a RocksDB block-based table
FILE (format_version 0 to 7: RocksDB 7.8 to 11), known by its footer.
scan prints its entries as a LevelDB table's, KIND one of value, delete,
single-delete, merge, blob-index, entity, value-preferred-seqno and
delete-with-timestamp, with the value as stored; -spans prints its range
deletions instead, one per line: START, TAB, END, TAB, @SEQ (the keys in
[START, END) deleted as of sequence number SEQ). get prints a key's
newest value: absent if that is a deletion or a range deletion of the
table covers it; an entity's default column; an error for a merge
operand or a blob index, whose value the table alone does not hold.
info prints the properties as sst_dump --show_properties labels them.
build -rocksdb writes the merged view of tables, newest first, with
RocksDB's rules (a range deletion hides the older versions of its own
table too), into a table of this package; a merge operand or blob index
there is an error. -rocksdb DIR reads a RocksDB database directory
read-only (refused while RocksDB has it open), a column family's live
view (-cf NAME, default "default") as RocksDB's read-only open shows it:
blob values from its blob files, merge operands through the built-in
operator its OPTIONS file names (StringAppendOperator, UInt64AddOperator;
a key that needs another is an error naming it).

Flags may come before or after FILE/INPUT. "--" ends the flags, so that a
KEY may begin with "-".

Errors are one line on stderr naming the command and the file.
Exit status: 0 on success, 2 for a usage error (including no command at
all, which prints this text to stderr), 1 for any other error (including
an absent key in get or an existing OUT in build without -f).
`

// command is one subcommand: it parses its own arguments and returns an
// error, a *usageError for bad arguments.
type command func(args []string, stdout, stderr io.Writer) error

var commands = map[string]command{
	"build":   runBuild,
	"get":     runGet,
	"scan":    runScan,
	"info":    runInfo,
	"verify":  runVerify,
	"compact": runCompact,
	"bench":   runBench,
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args (without the program name), writing
// to stdout and stderr, and returns the exit status.
func run(args []string, stdout, stderr io.Writer) (status int) {
	defer func() {
		// A library panic must not reach the user as a stack trace.
		if v := recover(); v != nil {
			report(stderr, fmt.Errorf("internal error: %v", v))
			status = 1
		}
	}()
	if len(args) == 0 {
		// No command is a usage error: the usage goes to stderr, so that a
		// script calling "sst $cmd" with an empty $cmd fails loudly.
		io.WriteString(stderr, usageText)
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		switch {
		case len(args) == 1:
			io.WriteString(stdout, usageText)
			return 0
		case len(args) > 2:
			return fail(stderr, usagef("help takes at most one COMMAND (usage: sst help [COMMAND])"))
		}
		text, ok := commandUsage(args[1])
		if !ok {
			return fail(stderr, usagef("help: unknown command %q (run \"sst help\" for the list)", args[1]))
		}
		io.WriteString(stdout, text)
		return 0
	}
	cmd, ok := commands[name]
	if !ok {
		return fail(stderr, usagef("unknown command %q (run \"sst help\" for usage)", name))
	}
	err := cmd(args[1:], stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		text, _ := commandUsage(name)
		io.WriteString(stdout, text)
		return 0
	}
	return fail(stderr, err)
}

// commandUsage returns the part of usageText about the command name (its
// paragraph, whose lines begin "  sst NAME"), with the usage heading, the
// paragraph on merged views for the commands that read them, and the
// paragraph on flags that applies to every command.
func commandUsage(name string) (string, bool) {
	paras := strings.Split(usageText, "\n\n")
	var flags, merged, ldb, rdb string
	for _, p := range paras {
		switch {
		case strings.HasPrefix(p, "Flags may come"):
			flags = p
		case strings.HasPrefix(p, "Merged view ("):
			merged = p
		case strings.HasPrefix(p, "LevelDB: "):
			ldb = p
		case strings.HasPrefix(p, "RocksDB: "):
			rdb = p
		}
	}
	for _, p := range paras {
		if p == "  sst "+name || strings.HasPrefix(p, "  sst "+name+" ") || strings.HasPrefix(p, "  sst "+name+"\n") {
			text := "Usage:\n\n" + p + "\n\n"
			if strings.Contains(p, "merged view (below)") {
				text += merged + "\n\n"
			}
			if strings.Contains(p, "LevelDB") {
				text += ldb + "\n\n"
			}
			if strings.Contains(p, "RocksDB") {
				text += rdb + "\n\n"
			}
			return text + flags + "\n", true
		}
	}
	return "", false
}

// exitError is an error whose message has already been reported; it only
// sets the exit status.
type exitError struct{ status int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.status) }

// usageError reports bad command-line arguments: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// fail reports err, if any, and returns the exit status it calls for.
func fail(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.status
	}
	report(stderr, err)
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// report writes err to stderr as one line beginning with "sst: ".
func report(stderr io.Writer, err error) {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "\r", `\r`)
	msg = strings.ReplaceAll(msg, "\n", `\n`)
	fmt.Fprintf(stderr, "sst: %s\n", msg)
}

// parseArgs parses args with fs, allowing flags to follow positional
// arguments, and returns the positional arguments. "--" ends the flags.
// Errors are *usageError values, or flag.ErrHelp for -h.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	pos, _, err := parseArgsDash(fs, args)
	return pos, err
}

// parseArgsDash is parseArgs, and also returns how many of the positional
// arguments came before the "--" that ended the flags, or -1 if none did.
func parseArgsDash(fs *flag.FlagSet, args []string) (pos []string, dash int, err error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, -1, err
			}
			if strings.HasPrefix(err.Error(), "flag provided but not defined") {
				// Most often a KEY or a path that begins with "-".
				hint := `an argument that begins with "-" goes after "--"`
				if fs.Name() == "get" {
					hint += ", as in: sst get FILE -- -KEY"
				}
				return nil, -1, usagef("%s: %v (%s)", fs.Name(), err, hint)
			}
			return nil, -1, usagef("%s: %v", fs.Name(), err)
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" && endsFlags(fs, args[:consumed-1]) {
			// The flag package stopped at "--" and dropped it.
			return append(pos, rest...), len(pos), nil
		}
		if len(rest) == 0 {
			return pos, -1, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// endsFlags reports whether a "--" that fs.Parse consumed right after
// before was the flag terminator rather than the value of the last flag in
// before: only then do the arguments before it parse on their own. The
// re-parse sets the same flags to the same values again.
func endsFlags(fs *flag.FlagSet, before []string) bool {
	return fs.Parse(before) == nil && fs.NArg() == 0
}

// cmdErr returns err as an error of the command cmd: its message is
// "CMD: " and err's without its package prefix ("sstable: ", "bulk: ";
// internal/errmsg), so that report prints "sst: CMD: ...", one prefix per
// layer. errors.Is and errors.As see err.
func cmdErr(cmd string, err error) error {
	return errmsg.Wrap(cmd+": ", "", err)
}

// fileErr is cmdErr for an error about file: the message names file after
// the command, unless err's message names it already (as "open FILE: ..."
// does).
func fileErr(cmd, file string, err error) error {
	msg := errmsg.Trim(err.Error())
	if strings.HasPrefix(msg, file+": ") || strings.Contains(msg, " "+file+": ") {
		return errmsg.Wrap(cmd+": ", "", err)
	}
	return errmsg.Wrap(cmd+": ", file, err)
}
