package leveldb_test

// A re-encoder of LevelDB tables for the tests of Mojang's compression
// types: it rewrites every block of a table (data, index, metaindex; the
// filter block is dropped) under another compression type, recomputing the trailers' masked CRC-32C over the
// stored bytes and the type byte as LevelDB and Mojang's fork do. It
// decodes and encodes with github.com/golang/snappy and the standard
// library's compress/zlib and compress/flate directly, not through the
// package under test, so that a table re-encoded from one reader's types
// into the other's is the same table to both.

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golang/snappy"

	"github.com/sstkit/sstable/internal/ldbtest"
	"github.com/sstkit/sstable/leveldb"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type handle struct{ off, n uint64 }

func (h handle) append(dst []byte) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(dst, h.off), h.n)
}

func readHandle(b []byte) (handle, int, error) {
	off, n1 := binary.Uvarint(b)
	if n1 <= 0 {
		return handle{}, 0, fmt.Errorf("bad handle offset")
	}
	n, n2 := binary.Uvarint(b[n1:])
	if n2 <= 0 {
		return handle{}, 0, fmt.Errorf("bad handle size")
	}
	return handle{off, n}, n1 + n2, nil
}

// blockContents returns the contents of the block at h and its type.
func blockContents(file []byte, h handle) ([]byte, byte, error) {
	if h.off+h.n+5 > uint64(len(file)) {
		return nil, 0, fmt.Errorf("block at %d+%d past the file", h.off, h.n)
	}
	stored, typ := file[h.off:h.off+h.n], file[h.off+h.n]
	var r io.Reader
	switch typ {
	case 0:
		return stored, typ, nil
	case 1:
		b, err := snappy.Decode(nil, stored)
		return b, typ, err
	case 2:
		zr, err := zlib.NewReader(bytes.NewReader(stored))
		if err != nil {
			return nil, typ, err
		}
		r = zr
	case 4:
		r = flate.NewReader(bytes.NewReader(stored))
	default:
		return nil, typ, fmt.Errorf("block type %d", typ)
	}
	b, err := io.ReadAll(r)
	return b, typ, err
}

// encodeBlock returns contents stored under type typ (0, 1, 2 or 4).
func encodeBlock(contents []byte, typ byte) []byte {
	stored := contents
	switch typ {
	case 1:
		stored = snappy.Encode(nil, contents)
	case 2, 4:
		var b bytes.Buffer
		var w io.WriteCloser
		if typ == 2 {
			w = zlib.NewWriter(&b)
		} else {
			w, _ = flate.NewWriter(&b, flate.DefaultCompression)
		}
		w.Write(contents)
		w.Close()
		stored = b.Bytes()
	}
	return stored
}

// appendBlock appends stored bytes of type typ and their trailer.
func appendBlock(dst, stored []byte, typ byte) ([]byte, handle) {
	h := handle{uint64(len(dst)), uint64(len(stored))}
	crc := crc32.Update(crc32.Checksum(stored, castagnoli), castagnoli, []byte{typ})
	dst = append(append(dst, stored...), typ)
	return binary.LittleEndian.AppendUint32(dst, (crc>>15|crc<<17)+0xa282ead8), h
}

// blockEntries decodes a block's entries (LevelDB's table/block.cc).
func blockEntries(b []byte) (keys, vals [][]byte, err error) {
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("block of %d bytes", len(b))
	}
	nr := binary.LittleEndian.Uint32(b[len(b)-4:])
	end := len(b) - 4 - 4*int(nr)
	if end < 0 {
		return nil, nil, fmt.Errorf("%d restarts in %d bytes", nr, len(b))
	}
	var prev []byte
	for p := 0; p < end; {
		var f [3]uint64
		for i := range f {
			v, n := binary.Uvarint(b[p:end])
			if n <= 0 {
				return nil, nil, fmt.Errorf("bad entry header at %d", p)
			}
			f[i], p = v, p+n
		}
		if f[0] > uint64(len(prev)) || f[1]+f[2] > uint64(end-p) {
			return nil, nil, fmt.Errorf("bad entry at %d", p)
		}
		k := append(append([]byte(nil), prev[:f[0]]...), b[p:p+int(f[1])]...)
		p += int(f[1])
		keys, vals = append(keys, k), append(vals, b[p:p+int(f[2])])
		p += int(f[2])
		prev = k
	}
	return keys, vals, nil
}

// indexBlock encodes entries as a block of restart interval 1.
func indexBlock(keys, vals [][]byte) []byte {
	var b, restarts []byte
	for i := range keys {
		restarts = binary.LittleEndian.AppendUint32(restarts, uint32(len(b)))
		b = binary.AppendUvarint(b, 0)
		b = binary.AppendUvarint(b, uint64(len(keys[i])))
		b = binary.AppendUvarint(b, uint64(len(vals[i])))
		b = append(append(b, keys[i]...), vals[i]...)
	}
	if len(keys) == 0 {
		restarts = binary.LittleEndian.AppendUint32(restarts, 0)
	}
	b = append(b, restarts...)
	return binary.LittleEndian.AppendUint32(b, uint32(len(restarts)/4))
}

// reencodeTable rewrites a LevelDB table with every data, index and
// metaindex block stored under the type pick gives for it (data blocks
// numbered from 0, the metaindex -1, the index -2), without its filter.
func reencodeTable(file []byte, pick func(block int) byte) ([]byte, error) {
	return rebuildTable(file, func(block int, contents []byte) ([]byte, byte) {
		typ := pick(block)
		return encodeBlock(contents, typ), typ
	})
}

// rebuildTable rewrites a LevelDB table with each data, index and
// metaindex block stored as enc returns it (block numbers as pick's),
// without its filter.
func rebuildTable(file []byte, enc func(block int, contents []byte) (stored []byte, typ byte)) ([]byte, error) {
	if len(file) < 48 || binary.LittleEndian.Uint64(file[len(file)-8:]) != leveldb.Magic {
		return nil, fmt.Errorf("not a LevelDB table")
	}
	foot := file[len(file)-48:]
	mh, n, err := readHandle(foot)
	if err != nil {
		return nil, err
	}
	ih, _, err := readHandle(foot[n:])
	if err != nil {
		return nil, err
	}
	index, _, err := blockContents(file, ih)
	if err != nil {
		return nil, err
	}
	ikeys, ivals, err := blockEntries(index)
	if err != nil {
		return nil, err
	}
	var out []byte
	newVals := make([][]byte, len(ivals))
	for i, v := range ivals {
		h, _, err := readHandle(v)
		if err != nil {
			return nil, err
		}
		contents, _, err := blockContents(file, h)
		if err != nil {
			return nil, fmt.Errorf("data block %d: %v", i, err)
		}
		stored, typ := enc(i, contents)
		var nh handle
		out, nh = appendBlock(out, stored, typ)
		newVals[i] = nh.append(nil)
	}
	meta, _, err := blockContents(file, mh)
	if err != nil {
		return nil, err
	}
	mkeys, mvals, err := blockEntries(meta)
	if err != nil {
		return nil, err
	}
	for _, k := range mkeys {
		if !strings.HasPrefix(string(k), "filter.") {
			return nil, fmt.Errorf("meta block %q", k)
		}
	}
	// The filter block is dropped: its filters cover data blocks by their
	// offsets (one per 2 KiB), which re-encoding moves.
	mkeys, mvals = nil, nil
	var nmh, nih handle
	stored, typ := enc(-1, indexBlock(mkeys, mvals))
	out, nmh = appendBlock(out, stored, typ)
	stored, typ = enc(-2, indexBlock(ikeys, newVals))
	out, nih = appendBlock(out, stored, typ)
	footer := nih.append(nmh.append(nil))
	footer = append(footer, make([]byte, 40-len(footer))...)
	return binary.LittleEndian.AppendUint64(append(out, footer...), leveldb.Magic), nil
}

// reencodeDB copies the database in src to dst with each live table
// re-encoded by reencodeTable (pick given the table's file number) under
// a new file number, N+100000, recorded by a version edit appended to
// the MANIFEST that deletes file N and adds the new one with its new size:
// LevelDB finds a table's footer by the size its MANIFEST records.
func reencodeDB(t *testing.T, src, dst string, pick func(file uint64, block int) byte) {
	t.Helper()
	copyDir(t, src, dst, false)
	db, err := leveldb.OpenDB(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	files := db.Files()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var edit []byte
	next := uint64(0)
	for _, f := range files {
		old := filepath.Join(dst, fmt.Sprintf("%06d.ldb", f.Number))
		data, err := os.ReadFile(old)
		if err != nil {
			t.Fatal(err)
		}
		out, err := reencodeTable(data, func(block int) byte { return pick(f.Number, block) })
		if err != nil {
			t.Fatalf("%s: %v", old, err)
		}
		num := f.Number + 100000
		next = max(next, num+1)
		if err := os.WriteFile(filepath.Join(dst, fmt.Sprintf("%06d.ldb", num)), out, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(old); err != nil {
			t.Fatal(err)
		}
		edit = binary.AppendUvarint(edit, 6) // deleted file
		edit = binary.AppendUvarint(edit, uint64(f.Level))
		edit = binary.AppendUvarint(edit, f.Number)
		edit = binary.AppendUvarint(edit, 7) // new file
		edit = binary.AppendUvarint(edit, uint64(f.Level))
		edit = binary.AppendUvarint(edit, num)
		edit = binary.AppendUvarint(edit, uint64(len(out)))
		for _, k := range [][]byte{f.Smallest, f.Largest} {
			edit = append(binary.AppendUvarint(edit, uint64(len(k))), k...)
		}
	}
	edit = binary.AppendUvarint(binary.AppendUvarint(edit, 3), next) // next file number
	cur, err := os.ReadFile(filepath.Join(dst, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dst, strings.TrimSpace(string(cur)))
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	l := ldbtest.Log{Buf: data}
	l.Add(edit)
	if err := os.WriteFile(manifest, l.Buf, 0o644); err != nil {
		t.Fatal(err)
	}
}
