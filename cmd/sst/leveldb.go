package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/errmsg"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/reader"
)

// LevelDB in sst: info, verify, scan and get of a LevelDB table file,
// recognised by its magic number (isLevelDBTable), and, with -leveldb,
// scan, get and verify of a LevelDB database directory's live view
// (package leveldb), which build -leveldb converts into tables of this
// package (leveldb_build.go).

// isLevelDBTable reports whether path is a regular file whose last 8
// bytes are LevelDB's magic number. Any error reads as false: the
// command's own open then reports it.
func isLevelDBTable(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < leveldb.FooterLen {
		return false
	}
	var b [8]byte
	if _, err := f.ReadAt(b[:], st.Size()-8); err != nil {
		return false
	}
	return binary.LittleEndian.Uint64(b[:]) == leveldb.Magic
}

// isLevelDBDir reports whether path is a directory holding a CURRENT file,
// as a LevelDB database does: a hint for a FILE given without -leveldb.
func isLevelDBDir(path string) bool {
	st, err := os.Stat(filepath.Join(path, "CURRENT"))
	return err == nil && st.Mode().IsRegular()
}

// dirHint returns err, or for a FILE that is a LevelDB database directory
// a usage error saying to add -leveldb.
func dirHint(cmd, file string, err error) error {
	if isLevelDBDir(file) {
		return usagef("%s: %s is a directory holding a LevelDB database: add -leveldb to read it", cmd, file)
	}
	return fileErr(cmd, file, err)
}

// ldbError is an error of package leveldb (or of merge over its levels)
// as a command reports it: "CMD: " and the message without the packages'
// prefixes ("leveldb: ", "merge: ", "sstable: "), naming name when the
// message does not already.
type ldbError struct {
	msg string
	err error
}

func (e *ldbError) Error() string { return e.msg }
func (e *ldbError) Unwrap() error { return e.err }

// ldbErr returns err as ldbError describes; cmd "" adds no command.
func ldbErr(cmd, name string, err error) error {
	msg := err.Error()
	for _, p := range []string{"merge: ", "leveldb: "} {
		msg = strings.TrimPrefix(msg, p)
		msg = strings.ReplaceAll(msg, ": "+p, ": ")
	}
	msg = errmsg.Trim(msg)
	if name != "" && !strings.Contains(msg, name) {
		msg = name + ": " + msg
	}
	if cmd != "" {
		msg = cmd + ": " + msg
	}
	return &ldbError{msg: msg, err: err}
}

// openLevelDBTable opens the LevelDB table in file for the command cmd.
func openLevelDBTable(cmd, file string) (*leveldb.Table, error) {
	t, err := leveldb.OpenTable(file, nil)
	if err != nil {
		return nil, ldbErr(cmd, file, err)
	}
	return t, nil
}

// openLevelDB opens the LevelDB database in dir read-only for cmd.
func openLevelDB(cmd, dir string) (*leveldb.DB, error) {
	if isLevelDBTable(dir) {
		return nil, usagef("%s: -leveldb reads a database directory; %s is a LevelDB table file: drop -leveldb to read it", cmd, dir)
	}
	db, err := leveldb.OpenDB(dir, nil)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !isLevelDBDir(dir) {
			if st, serr := os.Stat(dir); serr == nil && st.IsDir() {
				return nil, fmt.Errorf("%s: %s holds no LevelDB database (no CURRENT file)", cmd, dir)
			}
		}
		return nil, ldbErr(cmd, dir, err)
	}
	return db, nil
}

// appendField appends b to line as it is, or as hex digits.
func appendField(line, b []byte, hexOut bool) []byte {
	if hexOut {
		return hex.AppendEncode(line, b)
	}
	return append(line, b...)
}

// appendVersion appends a LevelDB table entry's key field: the user key,
// then " @SEQ KIND" (KIND "value" or "delete").
func appendVersion(line, key []byte, seq uint64, kind leveldb.Kind, hexOut bool) []byte {
	line = appendField(line, key, hexOut)
	line = append(line, " @"...)
	line = strconv.AppendUint(line, seq, 10)
	line = append(line, ' ')
	return append(line, kind.String()...)
}

// scanLevelDBTable prints the entries of the LevelDB table in file whose
// user keys lie in [start, end) (end only with haveEnd), every version of
// each, in the table's order (user key ascending, then newest first), at
// most limit of them (0: no limit), one per line: "KEY @SEQ KIND", then
// unless keysOnly a TAB and the value (empty for a deletion); KEY and the
// value raw, or as hex digits with hexOut.
func scanLevelDBTable(file string, start, end []byte, haveEnd bool, limit int, keysOnly, hexOut bool, stdout io.Writer) error {
	t, err := openLevelDBTable("scan", file)
	if err != nil {
		return err
	}
	defer t.Close()
	o := &leveldb.IterOptions{LowerBound: start}
	if haveEnd && len(end) > 0 {
		o.UpperBound = end
	}
	it := t.NewIter(o)
	defer it.Close()
	w := bufio.NewWriterSize(stdout, 64<<10)
	var line []byte
	n := 0
	for ok := it.SeekGE(start); ok; ok = it.Next() {
		if haveEnd && bytes.Compare(it.Key(), end) >= 0 {
			break
		}
		line = appendVersion(line[:0], it.Key(), it.Seq(), it.Kind(), hexOut)
		if !keysOnly {
			line = appendField(append(line, '\t'), it.Value(), hexOut)
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return cmdErr("scan", err)
		}
		if n++; n == limit {
			break
		}
	}
	if err := w.Flush(); err != nil {
		return cmdErr("scan", err)
	}
	if err := it.Err(); err != nil {
		return ldbErr("scan", file, err)
	}
	return nil
}

// scanLevelDB prints the live view of the LevelDB database in dir exactly
// as runScan prints a table of this package: each live user key once,
// with its newest value.
func scanLevelDB(dir string, start, end []byte, haveEnd bool, limit int, keysOnly, hexOut bool, stdout io.Writer) error {
	db, err := openLevelDB("scan", dir)
	if err != nil {
		return err
	}
	defer db.Close()
	o := &leveldb.IterOptions{LowerBound: start}
	if haveEnd {
		o.UpperBound = end
	}
	it := db.NewIterator(o)
	defer it.Close()
	if err := printEntries(it, start, end, haveEnd, limit, keysOnly, hexOut, stdout); err != nil {
		return err
	}
	if err := it.Err(); err != nil {
		return ldbErr("scan", dir, err)
	}
	return nil
}

// levelDBGetter is what runGet looks keys up in for a LevelDB table file
// or (with -leveldb) database: its lookup and its two messages.
type levelDBGetter struct {
	lookup     func(buf, key []byte) ([]byte, error)
	errFailed  func(key []byte, err error) error
	errMissing func(key []byte) error
	close      func() error
}

// openLevelDBGetter opens the LevelDB database in path (isDir) or the
// LevelDB table file path for get. A table's lookups see the newest
// version at or below seq; a key whose version is a deletion is missing.
func openLevelDBGetter(path string, isDir bool, seq uint64, form keyForm) (*levelDBGetter, error) {
	g := &levelDBGetter{
		errFailed: func(key []byte, err error) error {
			return ldbErr("get", path, fmt.Errorf("key %s: %w", form.show(key), err))
		},
		errMissing: func(key []byte) error {
			return fmt.Errorf("get: %s: key %s not found", path, form.show(key))
		},
	}
	if isDir {
		db, err := openLevelDB("get", path)
		if err != nil {
			return nil, err
		}
		g.close = db.Close
		g.lookup = func(buf, key []byte) ([]byte, error) {
			v, err := db.Get(key)
			return append(buf, v...), err
		}
		return g, nil
	}
	t, err := openLevelDBTable("get", path)
	if err != nil {
		return nil, err
	}
	g.close = t.Close
	deleted := map[string]uint64{} // keys found deleted, for their messages
	g.lookup = func(buf, key []byte) ([]byte, error) {
		e, err := t.Get(key, seq)
		if err != nil {
			return buf, err
		}
		if e.Kind == leveldb.KindDeletion {
			deleted[string(key)] = e.Seq
			return buf, reader.ErrNotFound
		}
		return append(buf, e.Value...), nil
	}
	g.errMissing = func(key []byte) error {
		at := ""
		if seq != leveldb.MaxSequence {
			at = fmt.Sprintf(" at sequence %d", seq)
		}
		if s, ok := deleted[string(key)]; ok {
			return fmt.Errorf("get: %s: key %s not found%s (deleted at sequence %d)", path, form.show(key), at, s)
		}
		return fmt.Errorf("get: %s: key %s not found%s", path, form.show(key), at)
	}
	return g, nil
}

// verifyLevelDBFile checks the LevelDB table in file (Table.Verify) and
// returns its "ok: ..." line, as verifyFile does for a table of ours.
func verifyLevelDBFile(file string) (string, error) {
	t, err := leveldb.OpenTable(file, nil)
	if err != nil {
		return "", ldbErr("", file, err)
	}
	defer t.Close()
	n, err := t.Verify()
	if err != nil {
		return "", ldbErr("", file, err)
	}
	return fmt.Sprintf("ok: %d entries, %d data blocks", n, t.Info().DataBlocks), nil
}

// verifyLevelDB checks every live table of the LevelDB database in dir
// (DB.Verify), then reads its live view from first key to last, checking
// that its keys rise strictly, and prints one "ok: ..." line.
func verifyLevelDB(dir string, stdout io.Writer) error {
	db, err := openLevelDB("verify", dir)
	if err != nil {
		return err
	}
	defer db.Close()
	entries, err := db.Verify()
	if err != nil {
		return ldbErr("verify", dir, err)
	}
	it := db.NewIterator(nil)
	defer it.Close()
	var live int64
	var prev []byte
	for ok := it.First(); ok; ok = it.Next() {
		if live > 0 && bytes.Compare(it.Key(), prev) <= 0 {
			return fmt.Errorf("verify: %s: live view out of order: key %s after key %s", dir, quoteKey(it.Key()), quoteKey(prev))
		}
		prev = append(prev[:0], it.Key()...)
		live++
	}
	if err := it.Close(); err != nil {
		return ldbErr("verify", dir, err)
	}
	_, err = fmt.Fprintf(stdout, "ok: %d entries in %d tables, %d keys in the log; live view: %d keys, last sequence %d\n",
		entries, len(db.Files()), db.LogEntries(), live, db.LastSequence())
	if err != nil {
		return cmdErr("verify", err)
	}
	return nil
}

// infoLevelDB prints the layout of the LevelDB table in file and what a
// scan of it finds: entries, deletions, user keys, sequence numbers and
// the smallest and largest internal keys.
func infoLevelDB(file string, hexOut bool, stdout io.Writer) error {
	t, err := openLevelDBTable("info", file)
	if err != nil {
		return err
	}
	defer t.Close()
	in := t.Info()

	// The scan: counts, and the first and last internal keys.
	var entries, deletions, userKeys int64
	var minSeq, maxSeq uint64
	var first, last, prevKey []byte
	var firstSeq, lastSeq uint64
	var firstKind, lastKind leveldb.Kind
	it := t.NewIter(nil)
	for ok := it.First(); ok; ok = it.Next() {
		if entries == 0 {
			first, firstSeq, firstKind = bytes.Clone(it.Key()), it.Seq(), it.Kind()
			minSeq, maxSeq = it.Seq(), it.Seq()
		}
		if entries == 0 || !bytes.Equal(it.Key(), prevKey) {
			userKeys++
			prevKey = append(prevKey[:0], it.Key()...)
		}
		entries++
		if it.Kind() == leveldb.KindDeletion {
			deletions++
		}
		minSeq, maxSeq = min(minSeq, it.Seq()), max(maxSeq, it.Seq())
		lastSeq, lastKind = it.Seq(), it.Kind()
	}
	if err := it.Close(); err != nil {
		return ldbErr("info", file, err)
	}
	last = prevKey

	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "file: %s\n", file)
	fmt.Fprintf(w, "format: LevelDB table (magic %#016x)\n", uint64(leveldb.Magic))
	fmt.Fprintf(w, "\nlayout (bytes; block sizes include the %d-byte block trailers):\n", format.BlockTrailerLen)
	fmt.Fprintf(w, "  %-22s %12s %12s %12s\n", "section", "offset", "size", "end")
	section := func(name string, off, n uint64) {
		fmt.Fprintf(w, "  %-22s %12d %12d %12d\n", name, off, n, off+n)
	}
	blocksEnd := min(in.Metaindex.Offset, in.Index.Offset)
	section("data and meta blocks", 0, blocksEnd)
	stored := func(compressed bool) string {
		if compressed {
			return "snappy-compressed"
		}
		return "raw"
	}
	blocks := []struct {
		name string
		h    format.BlockHandle
	}{{"metaindex block", in.Metaindex}, {"index block", in.Index}}
	if in.Index.Offset < in.Metaindex.Offset {
		blocks[0], blocks[1] = blocks[1], blocks[0]
	}
	for _, b := range blocks {
		section(b.name, b.h.Offset, b.h.Length+format.BlockTrailerLen)
	}
	size := uint64(in.Size)
	section("footer", size-leveldb.FooterLen, leveldb.FooterLen)
	fmt.Fprintf(w, "  %-22s %12s %12d\n", "file size", "", size)

	fmt.Fprintf(w, "\ntable:\n")
	fmt.Fprintf(w, "  %-20s%d\n", "data blocks:", in.DataBlocks)
	fmt.Fprintf(w, "  %-20s%s\n", "index block:", stored(in.IndexCompressed))
	fmt.Fprintf(w, "  %-20s%s\n", "metaindex block:", stored(in.MetaindexCompressed))
	metas := "none"
	if len(in.MetaBlocks) > 0 {
		metas = strings.Join(in.MetaBlocks, ", ")
	}
	fmt.Fprintf(w, "  %-20s%s\n", "meta blocks:", metas)
	filter := "none (Get reads the index for every key)"
	if in.Filter != "" {
		filter = fmt.Sprintf("%s, %d filters (Get consults it)", in.Filter, in.Filters)
	}
	fmt.Fprintf(w, "  %-20s%s\n", "filter policy:", filter)
	fmt.Fprintf(w, "\nentries (by a scan):\n")
	fmt.Fprintf(w, "  %-20s%d (%d values, %d deletions)\n", "entries:", entries, entries-deletions, deletions)
	fmt.Fprintf(w, "  %-20s%d\n", "user keys:", userKeys)
	showKey := func(k []byte, seq uint64, kind leveldb.Kind) string {
		if hexOut {
			return string(appendVersion(nil, k, seq, kind, true))
		}
		return fmt.Sprintf("%s @%d %s", quoteBytes(k), seq, kind)
	}
	if entries > 0 {
		fmt.Fprintf(w, "  %-20s%d .. %d\n", "sequence numbers:", minSeq, maxSeq)
		fmt.Fprintf(w, "  %-20s%s\n", "smallest key:", showKey(first, firstSeq, firstKind))
		fmt.Fprintf(w, "  %-20s%s\n", "largest key:", showKey(last, lastSeq, lastKind))
	}
	if err := w.Flush(); err != nil {
		return cmdErr("info", err)
	}
	return nil
}
