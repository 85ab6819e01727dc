package rocksblock

// A minimal walker of RocksDB block-based tables, just enough to reach
// every block: the footer (LevelDB's 48 bytes for format_version 0, 53
// bytes for 1 to 5, the extended footer of 6 and 7), the metaindex, the
// index (plain for format_version < 4, value-delta-encoded from 4 on) and
// the data blocks it names. Every block goes through CheckBlock and
// Decompress; every data block must parse as a block and hold exactly the
// entries the table's writer (testdata/rbgen.cc, testdata/rngen.cjs) put
// there.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sstkit/sstable/internal/codec"
)

const (
	magicBlockBased = 0x88e241b785f4cff7
	magicLegacy     = 0xdb4775248b80fb57 // LevelDB's, format_version 0
	legacyFooterLen = 48
	footerLen       = 53
)

// extendedMagic starts part 2 of a format_version 6+ footer.
var extendedMagic = []byte{0x3e, 0x00, 0x7a, 0x00}

// tableSpec is one line of rbgen's manifest (and of testdata/golden/
// MANIFEST): "table NAME FV CHECKSUM COMPRESSION DICT NKEYS BLOCKSIZE".
type tableSpec struct {
	name     string
	fv       uint32 // the format_version option (the footer may say 1 for 0)
	checksum string
	comp     byte
	dict     string // "-", "raw", "train", "finalize", "zlibwrap"
	nkeys    int
	line     string
}

func parseSpec(line string) (tableSpec, error) {
	f := strings.Fields(line)
	if len(f) != 8 || f[0] != "table" {
		return tableSpec{}, fmt.Errorf("bad manifest line %q", line)
	}
	fv, err1 := strconv.Atoi(f[2])
	comp, err2 := strconv.Atoi(f[4])
	n, err3 := strconv.Atoi(f[6])
	if err1 != nil || err2 != nil || err3 != nil {
		return tableSpec{}, fmt.Errorf("bad manifest line %q", line)
	}
	return tableSpec{name: f[1], fv: uint32(fv), checksum: f[3], comp: byte(comp), dict: f[5], nkeys: n, line: line}, nil
}

func readManifest(t *testing.T, path string) []tableSpec {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var specs []tableSpec
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "skip ") {
			continue
		}
		s, err := parseSpec(line)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return specs
}

// testKey and testValue are the rule both writers follow for entry i.
func testKey(i int) string { return fmt.Sprintf("key%06d", i) }
func testValue(i int) string {
	return fmt.Sprintf("v%06d:", i) + strings.Repeat("rocksblock-", 1+i%5)
}

// footer is what the walker needs of a table's footer.
type footer struct {
	fv         uint32
	checksum   ChecksumType
	base       uint32
	metaindex  handle
	index      handle // zero for format_version 6+: in the metaindex
	footerOff  int64
	hasIndexFt bool
}

type handle struct{ off, size uint64 }

// region is a block of the file, as checked: its handle and section.
type region struct {
	section string
	h       handle
}

func decodeHandle(b []byte) (handle, int, error) {
	h, n := codec.DecodeHandle(b)
	if n <= 0 {
		return handle{}, 0, fmt.Errorf("bad block handle % x", b[:min(len(b), 20)])
	}
	return handle{h.Offset, h.Length}, n, nil
}

func parseFooter(data []byte) (footer, error) {
	if len(data) < legacyFooterLen {
		return footer{}, fmt.Errorf("%d bytes: too short for a footer", len(data))
	}
	magic := binary.LittleEndian.Uint64(data[len(data)-8:])
	switch magic {
	case magicLegacy:
		ft := footer{fv: 0, checksum: CRC32c, footerOff: int64(len(data) - legacyFooterLen), hasIndexFt: true}
		p := data[ft.footerOff:]
		var n1, n2 int
		var err error
		if ft.metaindex, n1, err = decodeHandle(p); err != nil {
			return ft, err
		}
		if ft.index, n2, err = decodeHandle(p[n1:]); err != nil {
			return ft, err
		}
		_ = n2
		return ft, nil
	case magicBlockBased:
	default:
		return footer{}, fmt.Errorf("magic %#x is not a block-based table's", magic)
	}
	if len(data) < footerLen {
		return footer{}, fmt.Errorf("%d bytes: too short for a footer", len(data))
	}
	off := len(data) - footerLen
	p := data[off:]
	ft := footer{checksum: ChecksumType(p[0]), fv: binary.LittleEndian.Uint32(p[41:]), footerOff: int64(off)}
	if ft.fv < 6 {
		ft.hasIndexFt = true
		var n1 int
		var err error
		if ft.metaindex, n1, err = decodeHandle(p[1:]); err != nil {
			return ft, err
		}
		if ft.index, _, err = decodeHandle(p[1+n1:]); err != nil {
			return ft, err
		}
		return ft, nil
	}
	if !bytes.Equal(p[1:5], extendedMagic) {
		return ft, fmt.Errorf("bad extended magic % x", p[1:5])
	}
	stored := binary.LittleEndian.Uint32(p[5:])
	ft.base = binary.LittleEndian.Uint32(p[9:])
	if ContextModifier(ft.base, 0) == 0 {
		return ft, fmt.Errorf("base context checksum %#x gives no modifier", ft.base)
	}
	// The footer's checksum covers its 53 bytes with the checksum field
	// zeroed, plus the context of the footer's own offset.
	cp := bytes.Clone(p)
	binary.LittleEndian.PutUint32(cp[5:], 0)
	sum, err := Checksum(ft.checksum, cp)
	if err != nil {
		return ft, err
	}
	if want := sum + ContextModifier(ft.base, uint64(off)); stored != want {
		return ft, fmt.Errorf("footer checksum %#x, computed %#x", stored, want)
	}
	size := uint64(binary.LittleEndian.Uint32(p[13:]))
	ft.metaindex = handle{uint64(off) - TrailerLen - size, size}
	return ft, nil
}

// walkStats counts what a walk checked.
type walkStats struct {
	blocks     int
	data       int
	entries    int
	byType     map[byte]int // data and index blocks by compression type
	dictLen    int
	metaBlocks []string
	regions    []region // every block checked, with its trailer
	fv         uint32
	checksum   ChecksumType
	base       uint32
	dict       *Dict
	needDict   int // data blocks that do not decode the same without the dictionary
	zlibHeader int // zlib blocks stored with a zlib header (window_bits > 0)
}

// block checks and decodes the block at h.
func (ft *footer) block(data []byte, section string, h handle, dict *Dict) ([]byte, byte, error) {
	end := h.off + h.size + TrailerLen
	if h.off > uint64(len(data)) || end > uint64(len(data)) || end < h.off {
		return nil, 0, fmt.Errorf("%s handle %+v beyond the file's %d bytes", section, h, len(data))
	}
	stored, typ, err := CheckBlock(section, int64(h.off), data[h.off:end], ft.checksum, ft.base)
	if err != nil {
		return nil, 0, err
	}
	contents, err := Decompress(section, int64(h.off), typ, ft.fv, stored, dict, 1<<20, nil)
	if err != nil {
		return nil, typ, err
	}
	return contents, typ, nil
}

// entries returns the key/value pairs of a plain block.
func blockEntries(section string, off uint64, contents []byte) ([][2][]byte, error) {
	var it codec.BlockIter
	if err := it.Init(section, int64(off), contents); err != nil {
		return nil, err
	}
	var out [][2][]byte
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, [2][]byte{bytes.Clone(it.Key()), bytes.Clone(it.Value())})
	}
	return out, it.Err()
}

// indexHandles returns the handles of an index block. From format_version
// 4 on, an entry has no value length, and a value is a full handle when
// the entry's key shares no bytes with the previous key, else the zigzag
// varint of its size's difference from the previous handle's, its offset
// following the previous block and trailer (IndexValue::EncodeTo,
// table/format.cc; BlockBuilder::Add, table/block_based/block_builder.cc).
func indexHandles(fv uint32, contents []byte) ([]handle, error) {
	if fv < 4 {
		ents, err := blockEntries("index", 0, contents)
		if err != nil {
			return nil, err
		}
		var hs []handle
		for _, e := range ents {
			h, _, err := decodeHandle(e[1])
			if err != nil {
				return nil, err
			}
			hs = append(hs, h)
		}
		return hs, nil
	}
	if len(contents) < 4 {
		return nil, fmt.Errorf("index block of %d bytes", len(contents))
	}
	nr := int(binary.LittleEndian.Uint32(contents[len(contents)-4:]))
	if nr < 1 || 4+4*nr > len(contents) {
		return nil, fmt.Errorf("index block with %d restarts in %d bytes", nr, len(contents))
	}
	end := len(contents) - 4 - 4*nr
	var hs []handle
	for p := 0; p < end; {
		shared, n1 := binary.Uvarint(contents[p:])
		if n1 <= 0 {
			return nil, fmt.Errorf("bad index entry at %d", p)
		}
		nonShared, n2 := binary.Uvarint(contents[p+n1:])
		if n2 <= 0 || uint64(end-p-n1-n2) < nonShared {
			return nil, fmt.Errorf("bad index entry at %d", p)
		}
		p += n1 + n2 + int(nonShared)
		if shared == 0 {
			h, n, err := decodeHandle(contents[p:end])
			if err != nil {
				return nil, err
			}
			hs = append(hs, h)
			p += n
			continue
		}
		if len(hs) == 0 {
			return nil, fmt.Errorf("delta-encoded first index entry")
		}
		z, n := binary.Uvarint(contents[p:end])
		if n <= 0 {
			return nil, fmt.Errorf("bad index value delta at %d", p)
		}
		delta := int64(z>>1) ^ -int64(z&1)
		prev := hs[len(hs)-1]
		hs = append(hs, handle{prev.off + prev.size + TrailerLen, uint64(int64(prev.size) + delta)})
		p += n
	}
	return hs, nil
}

// walkTable checks every block of the table data as RocksDB wrote it for
// spec: the footer, the metaindex and each block it names, the index and
// each data block it names, whose entries must be spec's.
func walkTable(data []byte, spec tableSpec) (walkStats, error) {
	st := walkStats{byType: map[byte]int{}}
	ft, err := parseFooter(data)
	if err != nil {
		return st, fmt.Errorf("footer: %w", err)
	}
	if want := spec.checksum; ft.checksum.String() != want {
		return st, fmt.Errorf("footer says checksum %s, the writer used %s", ft.checksum, want)
	}
	if ft.fv != spec.fv && !(spec.fv == 0 && ft.fv == 1) {
		return st, fmt.Errorf("footer says format_version %d, the writer used %d", ft.fv, spec.fv)
	}
	// The compression framing follows the writer's format_version option
	// (0 and 1 both frame as 1), which the footer gives but for format 0
	// written with a checksum other than CRC32c (a format 1 footer).
	st.fv, st.checksum, st.base = ft.fv, ft.checksum, ft.base
	meta, _, err := ft.block(data, "metaindex", ft.metaindex, nil)
	if err != nil {
		return st, err
	}
	st.blocks++
	st.regions = append(st.regions, region{"metaindex", ft.metaindex})
	metaEnts, err := blockEntries("metaindex", ft.metaindex.off, meta)
	if err != nil {
		return st, err
	}
	var dict *Dict
	index := ft.index
	for _, e := range metaEnts {
		name := string(e[0])
		h, _, err := decodeHandle(e[1])
		if err != nil {
			return st, fmt.Errorf("metaindex entry %q: %w", name, err)
		}
		contents, _, err := ft.block(data, name, h, nil)
		if err != nil {
			return st, err
		}
		st.blocks++
		st.regions = append(st.regions, region{name, h})
		st.metaBlocks = append(st.metaBlocks, name)
		switch name {
		case "rocksdb.compression_dict":
			dict = NewDict(bytes.Clone(contents))
			st.dictLen = len(contents)
		case "rocksdb.index":
			index = h
		}
	}
	if (spec.dict == "raw" || spec.dict == "train" || spec.dict == "finalize") != (dict != nil) {
		return st, fmt.Errorf("dictionary variant %q, compression dictionary of %d bytes", spec.dict, st.dictLen)
	}
	idx, typ, err := ft.block(data, "index", index, dict)
	if err != nil {
		return st, err
	}
	st.blocks++
	st.regions = append(st.regions, region{"index", index})
	st.dict = dict
	st.byType[typ]++
	handles, err := indexHandles(ft.fv, idx)
	if err != nil {
		return st, fmt.Errorf("index block at %d: %w", index.off, err)
	}
	for _, h := range handles {
		contents, typ, err := ft.block(data, "data block", h, dict)
		if err != nil {
			return st, err
		}
		st.blocks++
		st.regions = append(st.regions, region{"data block", h})
		st.data++
		st.byType[typ]++
		if dict != nil && typ != NoCompression {
			end := h.off + h.size
			if plain, err := Decompress("data block", int64(h.off), typ, ft.fv, data[h.off:end], nil, 1<<20, nil); err != nil || !bytes.Equal(plain, contents) {
				st.needDict++
			}
		}
		if typ == Zlib {
			p := data[h.off : h.off+h.size]
			if ft.fv >= 2 {
				_, n := binary.Uvarint(p)
				p = p[n:]
			}
			if len(p) > 0 && p[0] == 0x78 {
				st.zlibHeader++
			}
		}
		ents, err := blockEntries("data block", h.off, contents)
		if err != nil {
			return st, err
		}
		for _, e := range ents {
			k := e[0]
			if len(k) < 8 {
				return st, fmt.Errorf("data block at %d: internal key %q shorter than 8 bytes", h.off, k)
			}
			user, trailer := k[:len(k)-8], binary.LittleEndian.Uint64(k[len(k)-8:])
			if want := testKey(st.entries); string(user) != want || trailer&0xff != 1 {
				return st, fmt.Errorf("data block at %d: entry %d is %q kind %d, want %q kind 1", h.off, st.entries, user, trailer&0xff, want)
			}
			if want := testValue(st.entries); string(e[1]) != want {
				return st, fmt.Errorf("data block at %d: value of %q is %q, want %q", h.off, user, e[1], want)
			}
			st.entries++
		}
	}
	if st.entries != spec.nkeys {
		return st, fmt.Errorf("%d entries, the writer put %d", st.entries, spec.nkeys)
	}
	if dict != nil && st.needDict == 0 {
		return st, fmt.Errorf("every data block decodes the same without the %d-byte dictionary", st.dictLen)
	}
	isZstdDict := dict != nil && len(dict.Bytes()) >= 4 && binary.LittleEndian.Uint32(dict.Bytes()) == zstdDictMagic
	if trained := spec.dict == "train" || spec.dict == "finalize"; trained != isZstdDict {
		return st, fmt.Errorf("dictionary variant %q, dictionary in zstd's format: %v", spec.dict, isZstdDict)
	}
	if (spec.dict == "zlibwrap") != (st.zlibHeader > 0) {
		return st, fmt.Errorf("variant %q, %d zlib blocks with a zlib header", spec.dict, st.zlibHeader)
	}
	if spec.comp != NoCompression && st.byType[spec.comp] == 0 {
		return st, fmt.Errorf("no block compressed with %s (blocks by type: %v)", CompressionName(spec.comp), st.byType)
	}
	return st, nil
}

// walkDir walks every table of a manifest in dir, each as a subtest.
func walkDir(t *testing.T, dir string, specs []tableSpec) map[string]walkStats {
	t.Helper()
	all := map[string]walkStats{}
	for _, spec := range specs {
		t.Run(spec.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, spec.name))
			if err != nil {
				t.Fatal(err)
			}
			st, err := walkTable(data, spec)
			if err != nil {
				t.Fatal(err)
			}
			all[spec.name] = st
		})
	}
	return all
}
