package reader_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/reader"
	"pgregory.net/rapid"
)

// keyAlphabet is small, so random keys share long prefixes and exercise
// prefix compression, and includes the extreme bytes that separator
// shortening treats specially.
var keyAlphabet = []byte{0x00, 0x01, 'a', 'b', 'c', 0xfe, 0xff}

// genKey draws a key: usually short over keyAlphabet (so often empty),
// sometimes longer over all bytes.
func genKey() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.Map(rapid.SliceOfN(rapid.SampledFrom(keyAlphabet), 0, 8), func(b []byte) string { return string(b) }),
		rapid.Map(rapid.SliceOfN(rapid.SampledFrom(keyAlphabet), 0, 3), func(b []byte) string { return string(b) }),
		rapid.Map(rapid.SliceOfN(rapid.Byte(), 0, 40), func(b []byte) string { return string(b) }),
	)
}

// genValue draws a value: empty, short, or larger than blockSize, with
// compressible or random contents.
func genValue(blockSize int) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		var n int
		switch rapid.IntRange(0, 9).Draw(t, "valueKind") {
		case 0:
			return ""
		case 1:
			n = rapid.IntRange(blockSize, 2*blockSize+100).Draw(t, "largeLen")
		default:
			n = rapid.IntRange(0, 48).Draw(t, "smallLen")
		}
		seed := rapid.Uint64().Draw(t, "valueSeed")
		return fill(n, seed, rapid.Bool().Draw(t, "compressible"))
	})
}

// fill returns n bytes derived from seed: a repeated short pattern if
// compressible, else pseudo-random bytes.
func fill(n int, seed uint64, compressible bool) string {
	b := make([]byte, n)
	rng := rand.New(rand.NewPCG(seed, 42))
	if compressible {
		pat := make([]byte, 1+seed%7)
		for i := range pat {
			pat[i] = byte('a' + rng.IntN(26))
		}
		for i := range b {
			b[i] = pat[i%len(pat)]
		}
	} else {
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
	}
	return string(b)
}

// successor returns the smallest key greater than every key with prefix k,
// or "" if there is none.
func successor(k string) string {
	b := []byte(k)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}

// genFilter draws a filter policy for a table and the reader options to
// open it with: the built-in Bloom (probed without an interface call),
// LevelDBBloom (built in, probed through the interface), or the test's
// bitmapPolicy, registered with the reader or unknown to it. It also draws
// the block cache budget: the default, none (-1), one byte (every block is
// too large to cache), or a few small blocks' worth (constant eviction).
// known says whether the reader will recognise the policy; bits is the
// bits per key the properties record.
func genFilter(t *rapid.T) (policy filterblock.Policy, ropts *reader.Options, known bool, bits float64) {
	ropts = drawCacheOpts(t)
	switch rapid.IntRange(0, 3).Draw(t, "filterKind") {
	case 0:
		n := rapid.IntRange(1, 20).Draw(t, "bitsPerKey")
		return filterblock.Bloom(float64(n)), ropts, true, float64(n)
	case 1:
		n := rapid.IntRange(1, 20).Draw(t, "levelDBBitsPerKey")
		return filterblock.LevelDBBloom(n), ropts, true, float64(n)
	case 2:
		p := &bitmapPolicy{}
		ropts.Filters = []filterblock.Policy{p}
		return p, ropts, true, 0
	default:
		return &bitmapPolicy{}, ropts, false, 0
	}
}

// TestPropertyRoundTrip builds random tables with random options, format
// version 1, 2 (with a hash index) or 4, and checks every read path against
// the input, through reader.Open (memory-mapped) or reader.New, with a
// random filter policy (known to the reader or not) and block cache
// budget.
func TestPropertyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) { propertyRoundTrip(t, dir, false) })
}

// TestPropertyRoundTripPartitioned is TestPropertyRoundTrip with
// partitioning forced (format version 3 unless the table is empty or has
// a filter other than Bloom; with a hash index in half the tables, which
// keep it before the partitions; or version 4, partitioned on the same
// conditions), partitions down to one data block, zstd
// among the compressions, and reader.Open with NoMmap among the ways to
// open.
func TestPropertyRoundTripPartitioned(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) { propertyRoundTrip(t, dir, true) })
}

// propertyRoundTrip is one check of TestPropertyRoundTrip, with parted
// that of TestPropertyRoundTripPartitioned.
func propertyRoundTrip(t *rapid.T, dir string, parted bool) {
	{
		blockSize := rapid.IntRange(64, 8192).Draw(t, "blockSize")
		restart := rapid.IntRange(1, 32).Draw(t, "restartInterval")
		comp := drawCompression(t, parted)
		hash := rapid.Bool().Draw(t, "hashIndex")
		policy, ropts, known, bits := genFilter(t)
		// Rapid favours small slices; a size class makes large tables common.
		maxKeys := rapid.SampledFrom([]int{3, 30, 400}).Draw(t, "maxKeys")
		keys := rapid.SliceOfNDistinct(genKey(), maxKeys/4, maxKeys, rapid.ID[string]).Draw(t, "keys")
		sort.Strings(keys)
		es := make([]entry, len(keys))
		values := map[string]string{}
		var keyBytes, valueBytes uint64
		for i, k := range keys {
			v := genValue(blockSize).Draw(t, "value")
			es[i] = entry{k, v}
			values[k] = v
			keyBytes += uint64(len(k))
			valueBytes += uint64(len(v))
		}

		opts := &builder.Options{BlockSize: blockSize, RestartInterval: restart, Compression: comp, DictionarySize: drawDictionary(t, comp), Filter: policy, HashIndex: hash}
		drawFormatVersion(t, opts)
		if parted {
			drawPartitioning(t, opts)
		}
		data, builtProps := build(t, es, opts)

		var r *reader.Reader
		if rapid.Bool().Draw(t, "mmap") {
			path := writeFile(t, dir, data)
			defer os.Remove(path)
			if parted {
				ropts.NoMmap = rapid.Bool().Draw(t, "noMmap")
			}
			var err error
			if r, err = reader.Open(path, ropts); err != nil {
				t.Fatalf("Open: %v", err)
			}
			if mmapSupported && r.Mapped() == ropts.NoMmap {
				t.Fatalf("Open with NoMmap %v: Mapped() = %v", ropts.NoMmap, r.Mapped())
			}
		} else {
			r = openMem(t, data, ropts)
		}
		defer func() {
			if err := r.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		}()
		if r.Size() != int64(len(data)) {
			t.Fatalf("Size() = %d, want %d", r.Size(), len(data))
		}

		// Properties.
		var smallest, largest []byte
		if len(es) > 0 {
			smallest, largest = []byte(es[0].Key), []byte(es[len(es)-1].Key)
		}
		p := r.Properties()
		// FilterUnknown is set by the reader, never stored.
		builtProps.FilterUnknown = !known
		if diff := cmp.Diff(builtProps, p); diff != "" {
			t.Fatalf("reader properties differ from the builder's (-builder +reader):\n%s", diff)
		}
		type someProps struct {
			NumEntries, RawKeyBytes, RawValueBytes uint64
			SmallestKey, LargestKey                []byte
			FilterPolicy                           string
			FilterBitsPerKey                       float64
			Compression                            format.Compression
			BlockSize, RestartInterval             uint64
			FormatVersion                          uint32
			Partitioned                            bool
		}
		wantVersion := wantVersion(opts, len(es))
		wantParted := wantVersion == format.Version4 && wantPartitioned(opts, len(es))
		wantProps := someProps{uint64(len(es)), keyBytes, valueBytes, smallest, largest,
			policy.Name(), bits, comp, uint64(blockSize), uint64(restart), wantVersion, wantParted}
		gotProps := someProps{p.NumEntries, p.RawKeyBytes, p.RawValueBytes, p.SmallestKey, p.LargestKey,
			p.FilterPolicy, p.FilterBitsPerKey, p.Compression, p.BlockSize, p.RestartInterval, p.FormatVersion, p.Partitioned}
		if diff := cmp.Diff(wantProps, gotProps); diff != "" {
			t.Fatalf("properties (-want +got):\n%s", diff)
		}
		if (len(es) == 0) != (p.NumDataBlocks == 0) {
			t.Fatalf("%d entries in %d data blocks", len(es), p.NumDataBlocks)
		}
		if p.DataSize+p.HashIndexSize+p.FilterSize+p.IndexSize+footer.Size >= uint64(len(data)) {
			t.Fatalf("section sizes %d+%d+%d+%d leave no room for properties in %d bytes", p.DataSize, p.HashIndexSize, p.FilterSize, p.IndexSize, len(data))
		}
		// A hash index exactly when asked for (or in version 4): the
		// header and trailer at least, between the data blocks and the
		// filter section.
		if hasHash := wantHashIndex(opts); hasHash != (p.HashIndexSize != 0) || hasHash && p.HashIndexSize < codec.HashIndexHeaderLen+format.BlockTrailerLen {
			t.Fatalf("built with hash index %v, format version %d: hash index size %d", hash, opts.FormatVersion, p.HashIndexSize)
		}
		if f := r.Footer(); f.Version != wantVersion || p.DataSize+p.HashIndexSize != f.Filter.Offset {
			t.Fatalf("footer version %d (want %d); data size %d + hash index size %d, filter at %d", f.Version, wantVersion, p.DataSize, p.HashIndexSize, f.Filter.Offset)
		}
		if r.FilterKnown() != known || p.FilterUnknown == known {
			t.Fatalf("policy %q: FilterKnown() = %v, Properties().FilterUnknown = %v; want known %v", p.FilterPolicy, r.FilterKnown(), p.FilterUnknown, known)
		}

		// Verify.
		if err := r.Verify(); err != nil {
			t.Fatalf("Verify: %v", err)
		}

		// Get and MayContain for every key.
		var got []entry
		for _, e := range es {
			if !r.MayContain([]byte(e.Key)) {
				t.Fatalf("MayContain(%q) = false for an added key", e.Key)
			}
			v, err := r.Get([]byte(e.Key))
			if err != nil {
				t.Fatalf("Get(%q): %v", e.Key, err)
			}
			if v == nil {
				t.Fatalf("Get(%q) returned a nil value and no error", e.Key)
			}
			got = append(got, entry{e.Key, string(v)})
		}
		if diff := cmp.Diff(es, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Get results (-want +got):\n%s", diff)
		}
		if len(es) > 0 {
			e := es[rapid.IntRange(0, len(es)-1).Draw(t, "appendIndex")]
			dst := []byte("prefix:")
			v, err := r.GetAppend(dst, []byte(e.Key))
			if err != nil || string(v) != "prefix:"+e.Value {
				t.Fatalf("GetAppend(%q) = %q, %v; want %q", e.Key, v, err, "prefix:"+e.Value)
			}
		}

		// Probes: random keys and keys next to every stored key.
		probes := rapid.SliceOfN(genKey(), 0, 20).Draw(t, "probes")
		probes = append(probes, "", "\x00", "\xff\xff\xff\xff\xff\xff\xff\xff\xff", "zzz")
		for _, k := range keys {
			probes = append(probes, k+"\x00", k+"\xff", successor(k))
			if len(k) > 0 {
				probes = append(probes, k[:len(k)-1])
			}
		}
		for _, k := range probes {
			if want, ok := values[k]; ok {
				v, err := r.Get([]byte(k))
				if err != nil || string(v) != want {
					t.Fatalf("Get(%q) = %q, %v; want %q", k, v, err, want)
				}
				continue
			}
			if !known && !r.MayContain([]byte(k)) {
				t.Fatalf("MayContain(%q) = false with an unknown filter policy", k)
			}
			v, err := r.Get([]byte(k))
			if !errors.Is(err, reader.ErrNotFound) {
				t.Fatalf("Get(%q) of an absent key = %q, %v; want ErrNotFound", k, v, err)
			}
			if v, err := r.GetAppend([]byte("dst"), []byte(k)); string(v) != "dst" || !errors.Is(err, reader.ErrNotFound) {
				t.Fatalf("GetAppend(dst, %q) of an absent key = %q, %v; want dst unchanged and ErrNotFound", k, v, err)
			}
		}

		// Forward and backward scans.
		fwd, err := scan(r)
		if err != nil {
			t.Fatalf("forward scan: %v", err)
		}
		if diff := cmp.Diff(es, fwd, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("forward scan (-want +got):\n%s", diff)
		}
		back, err := scanBack(r)
		if err != nil {
			t.Fatalf("backward scan: %v", err)
		}
		if diff := cmp.Diff(reversed(es), back, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("backward scan (-want reversed input +got):\n%s", diff)
		}

		it := r.NewIterator()
		defer it.Close()
		m := &iterModel{es: es}
		check := func(op string, ok bool) {
			if ok != m.valid || it.Valid() != m.valid {
				t.Fatalf("%s: returned %v, Valid %v; model valid %v (pos %d of %d)", op, ok, it.Valid(), m.valid, m.pos, len(es))
			}
			if err := it.Err(); err != nil {
				t.Fatalf("%s: Err = %v", op, err)
			}
			if !m.valid {
				if it.Key() != nil || it.Value() != nil {
					t.Fatalf("%s: unpositioned iterator has Key %q, Value %q", op, it.Key(), it.Value())
				}
				return
			}
			gotE := entry{string(it.Key()), string(it.Value())}
			if diff := cmp.Diff(es[m.pos], gotE); diff != "" {
				t.Fatalf("%s: entry (-want +got):\n%s", op, diff)
			}
		}
		check("unpositioned Next", it.Next())
		check("unpositioned Prev", it.Prev())

		// SeekGE for every probe and every key, then a step each way.
		for _, k := range append(slices.Clone(probes), keys...) {
			op := "SeekGE(" + strconv.Quote(k) + ")"
			check(op, m.seekGE(it, k))
			if !m.valid {
				continue
			}
			i := m.pos
			check(op+" Next", m.next(it))
			if m.valid {
				check(op+" Next Prev", m.prev(it))
				if m.pos != i {
					t.Fatalf("%s Next Prev is at %d, want %d", op, m.pos, i)
				}
			}
			check(op+" again", m.seekGE(it, k))
			check(op+" Prev", m.prev(it))
			if m.valid {
				check(op+" Prev Next", m.next(it))
				if m.pos != i {
					t.Fatalf("%s Prev Next is at %d, want %d", op, m.pos, i)
				}
			}
		}

		// A random walk.
		ops := rapid.SliceOfN(rapid.IntRange(0, 5), 0, 60).Draw(t, "ops")
		for _, o := range ops {
			switch o {
			case 0:
				check("First", m.first(it))
			case 1:
				check("Last", m.last(it))
			case 2, 3:
				check("Next", m.next(it))
			case 4:
				check("Prev", m.prev(it))
			case 5:
				k := rapid.SampledFrom(probes).Draw(t, "seekKey")
				check("SeekGE("+strconv.Quote(k)+")", m.seekGE(it, k))
			}
		}
	}
}

// iterModel is the documented iterator behaviour over a sorted slice: moves
// from an unpositioned or exhausted iterator return false and leave it so.
type iterModel struct {
	es    []entry
	pos   int
	valid bool
}

func (m *iterModel) first(it *reader.Iterator) bool {
	m.pos, m.valid = 0, len(m.es) > 0
	return it.First()
}

func (m *iterModel) last(it *reader.Iterator) bool {
	m.pos, m.valid = len(m.es)-1, len(m.es) > 0
	return it.Last()
}

func (m *iterModel) seekGE(it *reader.Iterator, k string) bool {
	m.pos = sort.Search(len(m.es), func(i int) bool { return m.es[i].Key >= k })
	m.valid = m.pos < len(m.es)
	return it.SeekGE([]byte(k))
}

func (m *iterModel) next(it *reader.Iterator) bool {
	if m.valid {
		m.pos++
		m.valid = m.pos < len(m.es)
	}
	return it.Next()
}

func (m *iterModel) prev(it *reader.Iterator) bool {
	if m.valid {
		m.pos--
		m.valid = m.pos >= 0
	}
	return it.Prev()
}

// TestPropertyDamagedBlocks damages random bytes of one block of a random
// table (format version 1, 2 or 4) and recomputes the block's checksum, so
// that the damage reaches the decoders. Nothing may panic or loop; every
// error must wrap format.ErrCorrupt (or be ErrNotFound from Get); and when
// only a data block is damaged, every key of the other blocks must still
// read back: in a version 1 table always, in a version 2 table as its
// value or, should the key's probe meet a slot of the damaged block whose
// tag matches, a corruption error, but never a wrong value.
func TestPropertyDamagedBlocks(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) { damagedBlocks(t, dir, false) })
}

// TestPropertyDamagedBlocksPartitioned is TestPropertyDamagedBlocks on
// tables built partitioned (format version 3, with a hash index in half
// of them, or version 4), with zstd among the compressions: the blocks damaged include
// each filter partition, each index partition, the top-level index and
// the hash index.
func TestPropertyDamagedBlocksPartitioned(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) { damagedBlocks(t, dir, true) })
}

// damagedBlocks is one check of TestPropertyDamagedBlocks, with parted
// that of TestPropertyDamagedBlocksPartitioned.
func damagedBlocks(t *rapid.T, dir string, parted bool) {
	{
		blockSize := rapid.IntRange(64, 1024).Draw(t, "blockSize")
		comp := drawCompression(t, parted)
		hash := rapid.Bool().Draw(t, "hashIndex")
		keys := rapid.SliceOfNDistinct(genKey(), 1, 80, rapid.ID[string]).Draw(t, "keys")
		sort.Strings(keys)
		es := make([]entry, len(keys))
		for i, k := range keys {
			es[i] = entry{k, genValue(blockSize).Draw(t, "value")}
		}
		opts := &builder.Options{
			BlockSize:       blockSize,
			RestartInterval: rapid.IntRange(1, 8).Draw(t, "restartInterval"),
			Compression:     comp,
			DictionarySize:  drawDictionary(t, comp),
			HashIndex:       hash,
		}
		drawFormatVersion(t, opts)
		if parted {
			drawPartitioning(t, opts)
		}
		data, props := build(t, es, opts)
		// Tables with a hash index: asked for (versions 2 and 3), or
		// version 4.
		hash = props.HashIndexSize != 0
		f, err := footer.Decode(data[len(data)-footer.Size:], int64(len(data)))
		if err != nil {
			t.Fatalf("%v", err)
		}
		blocks := dataBlocks(t, data)
		type target struct {
			name   string
			h      format.BlockHandle
			keys   []string // keys of a data block
			isData bool
		}
		targets := []target{{"filter", f.Filter, nil, false}, {"index", f.Index, nil, false}, {"properties", f.Properties, nil, false}}
		if props.FormatVersion == format.Version3 || props.Partitioned {
			// The filter handle spans the partitions: damage each block
			// of each partition instead.
			targets = []target{{"top-level index", f.Index, nil, false}, {"properties", f.Properties, nil, false}}
			for i, ph := range partitionHandles(t, data, f) {
				targets = append(targets, target{"filter partition " + strconv.Itoa(i), ph.Filter(), nil, false},
					target{"index partition " + strconv.Itoa(i), ph.Index(), nil, false})
			}
		}
		if hash {
			h := format.BlockHandle{Offset: props.DataSize, Length: props.HashIndexSize - format.BlockTrailerLen}
			targets = append(targets, target{"hash index", h, nil, false})
		}
		for i, b := range blocks {
			targets = append(targets, target{"data block " + strconv.Itoa(i), b.Handle, b.Keys, true})
		}
		tg := rapid.SampledFrom(targets).Draw(t, "target")
		bad := slices.Clone(data)
		if tg.h.Length > 0 {
			for range rapid.IntRange(1, 4).Draw(t, "damages") {
				pos := tg.h.Offset + uint64(rapid.IntRange(0, int(tg.h.Length)-1).Draw(t, "pos"))
				bad[pos] = rapid.Byte().Draw(t, "byte")
			}
		}
		typPos := tg.h.Offset + tg.h.Length
		if rapid.IntRange(0, 9).Draw(t, "changeType") == 0 {
			bad[typPos] = rapid.ByteRange(0, 3).Draw(t, "type")
		}
		stored := bad[tg.h.Offset:typPos]
		copy(bad[typPos:], codec.AppendTrailer(nil, stored, bad[typPos]))

		var r *reader.Reader
		if rapid.Bool().Draw(t, "mmap") {
			path := writeFile(t, dir, bad)
			defer os.Remove(path)
			r, err = reader.Open(path, nil)
		} else {
			r, err = reader.New(bytes.NewReader(bad), int64(len(bad)), nil)
		}
		isCorrupt := func(what string, err error) {
			if err != nil && !errors.Is(err, format.ErrCorrupt) {
				t.Fatalf("%s: %v does not wrap ErrCorrupt", what, err)
			}
		}
		if err != nil {
			isCorrupt("Open", err)
			return
		}
		defer r.Close()
		isCorrupt("Verify", r.Verify())

		inTarget := map[string]bool{}
		for _, k := range tg.keys {
			inTarget[k] = true
		}
		for _, e := range es {
			v, err := r.Get([]byte(e.Key))
			if tg.isData && !inTarget[e.Key] {
				if hash && errors.Is(err, format.ErrCorrupt) {
					continue
				}
				if err != nil || string(v) != e.Value {
					t.Fatalf("Get(%q) outside the damaged %s = %q, %v; want %q", e.Key, tg.name, v, err, e.Value)
				}
				continue
			}
			if !errors.Is(err, reader.ErrNotFound) {
				isCorrupt("Get", err)
			}
			r.MayContain([]byte(e.Key))
		}

		// Scans must end: no table of len(bad) bytes has more entries.
		limit := len(bad)
		it := r.NewIterator()
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			if n++; n > limit {
				t.Fatalf("forward scan returned more than %d entries", limit)
			}
		}
		isCorrupt("forward scan", it.Err())
		n = 0
		for ok := it.Last(); ok; ok = it.Prev() {
			if n++; n > limit {
				t.Fatalf("backward scan returned more than %d entries", limit)
			}
		}
		isCorrupt("backward scan", it.Err())
		for _, k := range rapid.SliceOfN(genKey(), 0, 10).Draw(t, "seeks") {
			if it.SeekGE([]byte(k)) {
				it.Prev()
				it.Next()
				it.Next()
			}
			isCorrupt("SeekGE", it.Err())
		}
		isCorrupt("Iterator.Close", it.Close())
	}
}

// partitionHandles returns the partition handles of the top-level index
// of a Version3 table with footer f.
func partitionHandles(t *rapid.T, data []byte, f footer.Footer) []codec.PartitionHandle {
	var it codec.BlockIter
	if err := it.Init(format.SectionTopIndex, int64(f.Index.Offset), data[f.Index.Offset:f.Index.Offset+f.Index.Length]); err != nil {
		t.Fatalf("top-level index: %v", err)
	}
	var out []codec.PartitionHandle
	for ok := it.First(); ok; ok = it.Next() {
		ph, ok := codec.DecodePartitionHandle(it.Value())
		if !ok {
			t.Fatalf("top-level index entry %d: bad partition handle", len(out))
		}
		out = append(out, ph)
	}
	if err := it.Err(); err != nil {
		t.Fatalf("top-level index: %v", err)
	}
	return out
}
