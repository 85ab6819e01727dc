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
// (hexadecimal digits) a deletion (by default no value is one);
// -range-tombstone HEX makes only the spans whose value begins with them
// range deletions, the others range keys, which hide nothing (by default
// every span is a range deletion). Both may be repeated.
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

  sst get [-hex] FILE KEY...
  sst get -merge [-hex] [-tombstone HEX] [-range-tombstone HEX] FILE... -- KEY...
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

  sst scan FILE [-start K] [-end K] [-prefix P] [-limit N] [-keys-only] [-spans] [-hex]
  sst scan -merge [-tombstone HEX] [-range-tombstone HEX] [flags] FILE...
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
                             value of the spans covering the fragment
          -hex               K and P are hex digits; keys and values are
                             printed as hex digits: hexkey TAB hexvalue
          -merge             print the merged view (below) of the FILEs,
                             newest first, as one table's entries are
                             printed; not with -spans

  sst info [-hex] FILE
        Print the table's properties, the offset and size of every section,
        the file size, and whether the filter policy is known. The smallest
        and largest keys are Go string literals, byte by byte: printable
        ASCII as is (\" and \\ escaped), any other byte as \xHH.
          -hex               print the smallest and largest keys as hex digits

  sst verify FILE...
  sst verify -merge [-tombstone HEX] [-range-tombstone HEX] FILE...
        Check every block and checksum and each table's internal
        consistency; print "ok: N entries, M data blocks" (after "FILE: "
        when there are several, or -merge). A FILE that fails is reported
        on stderr and the others still checked; then the exit status is 1.
          -merge             then, if every FILE passed, also read the
                             merged view (below) of the FILEs, newest first,
                             from its first key to its last, checking that
                             its keys rise strictly, and print "merged view:
                             ok: N entries (of T in F tables)"

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
read as one table, given newest first, each FILE its own level. A key
reads as in the newest FILE holding it, unless that value is a deletion
(-tombstone) or a newer FILE's range deletion covers the key: then it is
absent. A FILE's range deletions hide nothing of its own. Neither scan
nor get prints a deletion.
          -tombstone HEX     a value beginning with the bytes HEX (hex
                             digits) is a deletion (default: no value is);
                             repeat the flag for several prefixes
          -range-tombstone HEX  a span whose value begins with the bytes HEX
                             is a range deletion, hiding the keys of older
                             FILEs in [start, end); the other spans are range
                             keys, which hide nothing (default: every span
                             is a range deletion); repeatable

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
	var flags, merged string
	for _, p := range paras {
		switch {
		case strings.HasPrefix(p, "Flags may come"):
			flags = p
		case strings.HasPrefix(p, "Merged view ("):
			merged = p
		}
	}
	for _, p := range paras {
		if p == "  sst "+name || strings.HasPrefix(p, "  sst "+name+" ") || strings.HasPrefix(p, "  sst "+name+"\n") {
			text := "Usage:\n\n" + p + "\n\n"
			if strings.Contains(p, "merged view (below)") {
				text += merged + "\n\n"
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
