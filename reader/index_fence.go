package reader

import (
	"bytes"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/prefetch"
)

// seekFences lets a SeekGE in a format version 4 table (compactIndex)
// find its data block without searching the index: for each data block
// i, prefixes[i] is codec.KeyPrefix of its index separator after skip (the
// bytes every key of the table starts with; see sepPrefix), so that the
// first block whose separator is >= a key is, in most cases, the first
// whose prefix is greater than the key's, found by one binary search of
// a dense array rather than by the top-level index's, the index
// partition's (and its cache lookup) one after the other. The block's
// handle comes from the hash index, as SeekPrefixGE's does, and the index
// iterator is positioned only when a later move leaves the block
// (Iterator.lazyIndex).
//
// The prefixes keep the separators' order (sepPrefix). For a key with
// the prefix skip and pk = codec.KeyPrefix(key[len(skip):]): a block whose
// prefix is < pk has a separator < key, and one whose prefix is > pk a
// separator > key; so the first block whose prefix is > pk, when every
// block before it has a prefix < pk, is the first whose separator is >=
// key: the block the index would find. A tie (a prefix equal to pk)
// decides nothing, and the seek takes the index; so does a key without
// skip, or past every block.
type seekFences struct {
	prefixes []uint64
	skip     []byte

	// For guessing where in its block a key lies (ahead): the fence of
	// the table's first key, the mean entries per block and bytes per
	// decoded entry, the restart interval.
	first                          uint64
	perBlock, entryBytes, interval float64

	// sub holds, for data block i, words 4i to 4i+3: three of its
	// entries, a quarter, a half and three quarters of the way through,
	// each as subFence (0: none), then the block's entry count, 0 until
	// a seek has read the block (fillSub). A SeekGE starts its scan of the
	// block at the last of them whose key is below the key sought,
	// rather than at a restart point found by a search of the restart
	// array: a quarter of the block's entries at most, none of the
	// restart points.
	sub []atomic.Uint64
}

// subFence packs an entry of a data block: the first 6 bytes of its
// fence (codec.KeyPrefix after skip) above its offset in the block (16 bits,
// never 0: entry 0 is not recorded).
func subFence(pk uint64, off int) uint64 { return pk&^0xffff | uint64(off) }

// maxSubEntries bounds the entries of a block that fillSub records; a
// block of more has no sub-fences (it is searched as without them).
const maxSubEntries = 256

// fillSub records the sub-fences of the block that data holds, walking
// its entries once; data is left unpositioned.
func (f *seekFences) fillSub(data *codec.BlockIter, sub []atomic.Uint64) {
	var offs [maxSubEntries]uint16
	var pks [maxSubEntries]uint64
	n := 0
	for ok := data.First(); ok; ok = data.Next() {
		off := data.Offset()
		k := data.Key()
		if n == maxSubEntries || off > 0xffff || !bytes.HasPrefix(k, f.skip) {
			n = 0 // no sub-fences
			break
		}
		offs[n], pks[n] = uint16(off), codec.KeyPrefix(k[len(f.skip):])
		n++
	}
	if data.Err() != nil {
		return
	}
	for q := 1; q <= 3; q++ {
		var w uint64
		if j := n * q / 4; j > 0 {
			w = subFence(pks[j], int(offs[j]))
		}
		sub[q-1].Store(w)
	}
	sub[3].Store(uint64(n) + 1)
}

// subStart returns the offset in block i where a SeekGE of a key whose
// fence is pk may start its scan, and false when the block's sub-fences
// are not recorded yet.
func (f *seekFences) subStart(sub []atomic.Uint64, pk uint64) (off int, ok bool) {
	if sub[3].Load() == 0 {
		return 0, false
	}
	for q := range 3 {
		// An entry whose 6 bytes are below the key's is below the key.
		if w := sub[q].Load(); w&0xffff != 0 && w>>16 < pk>>16 {
			off = int(w & 0xffff)
		}
	}
	return off, true
}

// sepPrefix returns the fence of separator sep: codec.KeyPrefix of what
// follows skip, or, for a separator that does not start with skip, 0 when
// it is below every key that does and math.MaxUint64 when it is above
// them. It keeps the order of separators: a <= b gives sepPrefix(a) <=
// sepPrefix(b); and a separator's fence is < (>) a key's codec.KeyPrefix after
// skip only when the separator is < (>) the key.
func sepPrefix(sep, skip []byte) uint64 {
	if bytes.HasPrefix(sep, skip) {
		return codec.KeyPrefix(sep[len(skip):])
	}
	if bytes.Compare(sep, skip) < 0 {
		return 0
	}
	return math.MaxUint64
}

// seekFenceTable returns the fences, read from the index on first use
// (8 bytes per data block, charged to the reader's cache), or nil when
// they cannot be had: the index could not be read, or its separators are
// out of order (a damaged table, which the index's own search serves as
// it always has). It is called under the caller's fault guard; a fault
// while reading leaves the fences unmade, and every later seek uses the
// index.
func (x *compactIndex) seekFenceTable() *seekFences {
	if f := x.seek.Load(); f != nil || x.seekDone.Load() {
		return f
	}
	x.seekOnce.Do(func() {
		defer x.seekDone.Store(true)
		if f := x.readSeekFences(); f != nil {
			x.charge(40 * len(f.prefixes))
			x.seek.Store(f)
		}
	})
	return x.seek.Load()
}

// readSeekFences reads every index entry once.
func (x *compactIndex) readSeekFences() *seekFences {
	n := x.ht.numBlocks
	if n == 0 {
		return nil
	}
	lo, hi := x.props.SmallestKey, x.props.LargestKey
	m := 0
	for m < len(lo) && m < len(hi) && lo[m] == hi[m] {
		m++
	}
	f := &seekFences{skip: bytes.Clone(lo[:m:m]), prefixes: make([]uint64, 0, n), sub: make([]atomic.Uint64, 4*n)}
	var ii indexIter
	var pin blockcache.Handle
	defer pin.Release()
	defer ii.release()
	if x.index.initIter(&ii, &pin) != nil {
		return nil
	}
	f.first = sepPrefix(lo, f.skip)
	p := x.props
	if p.NumEntries > 0 && p.RestartInterval > 0 {
		f.perBlock = float64(p.NumEntries) / float64(n)
		f.entryBytes = float64(p.RawKeyBytes+p.RawValueBytes)/float64(p.NumEntries) + 3
		f.interval = float64(p.RestartInterval)
	}
	var last uint64
	for ok := ii.First(); ok; ok = ii.Next() {
		p := sepPrefix(ii.Key(), f.skip)
		if uint64(len(f.prefixes)) >= n || ii.block() != len(f.prefixes) || p < last {
			return nil
		}
		f.prefixes = append(f.prefixes, p)
		last = p
	}
	if ii.Err() != nil || uint64(len(f.prefixes)) != n {
		return nil
	}
	return f
}

// block returns the data block that holds the first entry >= key, if
// the fences decide it (see seekFences); ok is false when the index must
// be searched.
func (f *seekFences) block(key []byte) (i int, pk uint64, ok bool) {
	if !bytes.HasPrefix(key, f.skip) {
		return 0, 0, false
	}
	pk = codec.KeyPrefix(key[len(f.skip):])
	p := f.prefixes
	lo, hi := 0, len(p)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if p[mid] < pk {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(p) || p[lo] == pk {
		return 0, 0, false
	}
	return lo, pk, true
}

// ahead asks for the cache lines of block i, whose memory starts at w
// (source.window: not to be read), that a SeekGE of a key whose fence is
// pk will read: the block's first key, and the entries from a quarter of
// the block before the key's guessed place (where the sub-fence below it
// lies) to a few entries past it. The place is guessed from the key's
// fence between the block's fences, keys being spread evenly over them.
// The lines then load together rather than one after another as the
// scan walks the entries.
func (f *seekFences) ahead(w []byte, i int, pk uint64) {
	if f.perBlock == 0 {
		return
	}
	lo := f.first
	if i > 0 {
		lo = f.prefixes[i-1]
	}
	hi := f.prefixes[i]
	if pk < lo || hi <= lo {
		return
	}
	e := float64(pk-lo) / float64(hi-lo) * f.perBlock // the guessed entry
	// The scan starts at the sub-fence below the key, up to a quarter of
	// the block before it, and reads the block's first key.
	from := int(max(0, e-f.perBlock/4-1) * f.entryBytes)
	to := min(int((e+aheadEntries)*f.entryBytes), len(w))
	if from > 0 {
		prefetch.Line(unsafe.Pointer(&w[0]))
	}
	prefetch.Range(w, from, to)
}

// aheadFrom is ahead for a seek whose scan starts at offset off of the
// block (exact, from the block's sub-fences): the block's first line,
// and the lines from off to aheadEntries entries past the key's guessed
// place, rather than from a quarter of the block before it. Without the
// sub-fences (exact false) it is ahead.
func (f *seekFences) aheadFrom(w []byte, i int, pk uint64, off int, exact bool) {
	if !exact || f.perBlock == 0 {
		f.ahead(w, i, pk)
		return
	}
	lo := f.first
	if i > 0 {
		lo = f.prefixes[i-1]
	}
	hi := f.prefixes[i]
	to := off + int((aheadEntries+2)*f.entryBytes)
	if pk >= lo && hi > lo {
		e := float64(pk-lo) / float64(hi-lo) * f.perBlock // the guessed entry
		to = max(to, int((e+aheadEntries)*f.entryBytes))
	}
	if off > 0 {
		prefetch.Line(unsafe.Pointer(&w[0]))
	}
	prefetch.Range(w, off, min(to, len(w)))
}

// aheadEntries is how many entries past its guessed place ahead asks for
// a key's lines: the guess is off by about sqrt(entries per block)/2
// entries (3 in a block of 35).
const aheadEntries = 4

// fencedSeekGE is seekGE through the fences of a version 4 table:
// handled is false when they do not decide the block (or the table has
// none), and the caller searches the index.
func (it *Iterator) fencedSeekGE(x *compactIndex, key []byte) (ok, handled bool) {
	f := x.seekFenceTable()
	if f == nil {
		return false, false
	}
	i, pk, found := f.block(key)
	if !found {
		return false, false
	}
	t, err := x.ht.get(&it.s.hidx, &it.s.hidxPin)
	if err != nil || t.NumBlocks() != len(f.prefixes) {
		it.releaseHashIndex()
		return false, false // the index's path reports the error
	}
	sub := f.sub[4*i : 4*i+4 : 4*i+4]
	prefetch.Line(unsafe.Pointer(&sub[0]))
	cached := false
	off, subOK := 0, false
	if w := it.r.src.window(i, t.BlockHandle(i).Offset); w != nil {
		// The sub-fences' line, asked for above, has come in with the
		// slot's: the scan's start is known, and only its lines are
		// asked for.
		off, subOK = f.subStart(sub, pk)
		f.aheadFrom(w, i, pk, off, subOK && sub[3].Load() > 1)
		if cached = !it.r.src.inPlace(w); !cached {
			// A raw block of the mapping: rawEntries reads its check
			// word first.
			if m, ok := it.r.src.(*mmapSource); ok {
				if words := m.words(); i < len(words) {
					prefetch.Line(unsafe.Pointer(&words[i]))
				}
			}
		}
	}
	loaded := it.loadHashedBlock(t, i, 0, cached)
	it.releaseHashIndex()
	it.ahead = nil
	if !loaded {
		return false, true
	}
	ok = subOK
	if !ok {
		if off, ok = f.subStart(sub, pk); !ok {
			f.fillSub(&it.s.data, sub)
			off, ok = f.subStart(sub, pk)
		}
	}
	if ok && sub[3].Load() > 1 {
		it.s.data.SeekGEFrom(off, key) // a quarter of the block at most
	} else {
		it.s.data.SeekGE(key) // no sub-fences
	}
	return it.forward(), true
}

// fencesOf returns the reader's version 4 index, whose fences serve
// seeks, or nil.
func fencesOf(r *Reader) *compactIndex {
	x, _ := r.index.(*compactIndex)
	return x
}

// seekState is the part of compactIndex that seekFenceTable makes.
type seekState struct {
	seekOnce sync.Once
	seekDone atomic.Bool
	seek     atomic.Pointer[seekFences]
}
