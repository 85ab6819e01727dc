package reader

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
)

// filter is the layer that says whether a key can be in the table. open
// chooses one implementation per reader: noFilter (no filter, or a
// policy or splitter the reader does not know), wholeFilter (one filter
// over the table, format versions 1 and 2) or partedFilter (a filter per
// partition, version 3). A new filter layout is one more implementation.
type filter interface {
	// mayContain reports whether fk, a key or, in a table with a
	// splitter, a prefix, may be in the table; h is codec.KeyHash(fk).
	// False means certainly absent. Errors (a corrupt filter, a failed
	// read) answer true: the lookup then finds out.
	mayContain(fk []byte, h uint64) bool

	// check loads what the filter needs up front and reports damage to
	// it, for Verify.
	check() error
}

// noFilter rules nothing out. In a one-level table whose policy (or
// splitter) the reader does not know, Verify still checks the filter
// section (whole).
type noFilter struct {
	whole *wholeFilter // nil when there is no section to check
}

func (noFilter) mayContain([]byte, uint64) bool { return true }

func (f noFilter) check() error {
	if f.whole == nil {
		return nil
	}
	return f.whole.check()
}

// probe tests fk against filter bits of policy; with bloom (the
// built-in Bloom policy) by its hash h, without an interface call.
func probe(policy filterblock.Policy, bloom bool, bits, fk []byte, h uint64) bool {
	if bloom {
		return filterblock.BloomMayContainHash(bits, h)
	}
	return policy.MayContain(bits, fk)
}

// wholeFilter is the filter section of a one-level table: one filter
// over every key (or prefix). A memory-mapped reader probes it in place;
// a reader without a mapping keeps it in the cache, pinned for a probe.
type wholeFilter struct {
	src    source
	sec    section
	policy filterblock.Policy
	bloom  bool   // policy is the built-in Bloom
	name   string // the policy name the properties give

	// Recorded by the section's first load: where the filter bits start
	// in its contents, and the bytes before them (name and padding), which
	// a load after an eviction must repeat.
	off  int
	head []byte
}

// newWholeFilter returns the filter of the section at h.
func newWholeFilter(src source, h format.BlockHandle, policy filterblock.Policy, bloom bool, name string) *wholeFilter {
	f := &wholeFilter{src: src, policy: policy, bloom: bloom, name: name}
	f.sec = section{name: format.SectionFilter, h: h, slot: slotFilter, check: f.checkSection}
	return f
}

// check checks the filter section's structure and policy name. A section
// read again after eviction must start with the same bytes as on its
// first load (its name and padding), which checks it without allocating.
func (f *wholeFilter) checkSection(contents []byte, first bool) error {
	if !first {
		if len(contents) < f.off || !bytes.Equal(contents[:f.off], f.head) {
			return format.Corruptf(format.SectionFilter, int64(f.sec.h.Offset), "filter section changed since it was first read")
		}
		return nil
	}
	name, bits, err := filterblock.DecodeSection(contents, f.sec.h.Offset)
	if err != nil {
		return err
	}
	if name != f.name {
		return format.Corruptf(format.SectionFilter, int64(f.sec.h.Offset), "filter section names policy %q, properties name %q", name, f.name)
	}
	f.off = len(contents) - len(bits)
	f.head = bytes.Clone(contents[:f.off])
	return nil
}

func (f *wholeFilter) check() error { return f.sec.load(f.src) }

func (f *wholeFilter) mayContain(fk []byte, h uint64) bool {
	if f.sec.state.done.Load() && f.sec.kept != nil {
		return probe(f.policy, f.bloom, f.sec.kept[f.off:], fk, h)
	}
	var pin blockcache.Handle
	b, err := f.sec.contents(f.src, &pin)
	if err != nil || f.off > len(b) {
		pin.Release()
		return true
	}
	ok := probe(f.policy, f.bloom, b[f.off:], fk, h)
	pin.Release()
	return ok
}

// partedFilter is the filter of a Version3 table: a filter per
// partition, over the keys (or prefixes) of its data blocks. A probe
// finds the partition of fk's first key and reads its filter.
type partedFilter struct {
	ps     *partitions
	policy filterblock.Policy
	bloom  bool
}

func (f *partedFilter) check() error { return f.ps.load() }

func (f *partedFilter) mayContain(fk []byte, h uint64) bool {
	p, ok, err := f.ps.seekPrefix(fk)
	if err != nil {
		return true
	}
	if !ok {
		return false // past the last key
	}
	var pin blockcache.Handle
	bits, _, err := f.ps.get(p, &pin, nil)
	if err != nil {
		return true
	}
	ok = probe(f.policy, f.bloom, bits, fk, h)
	pin.Release()
	return ok
}

// heldFilter is a copy, in the reader's cache, of a version 4 table's
// whole filter, which a memory-mapped reader makes on its first Get or Has
// (fill; not on open, so that a reader that only scans, as a compaction's
// does, never makes it). No file fault can reach it, and the cache keeps
// it (Table.Hold: counted in the budget, never evicted, in a small mapping
// of its own) until the reader's Close, after which the memory stays
// readable (as zeros once released) until the reader is garbage; so from
// then on Get, Has and MayContain probe it before they pin the reader or
// guard against faults, and an absent key costs a hash and one probe. A
// probe that races Close may read released memory: an absent answer is
// checked against closed, a present one pins the reader, which fails. It costs the
// filter's size in the cache: 1.25 bytes per key at 10 bits per key. When
// the cache cannot hold it (a filter larger than a shard), the reader makes
// no copy and probes the mapped filter, pinned and guarded, as a reader
// that never made one.
type heldFilter struct {
	policy filterblock.Policy
	bloom  bool         // policy is the built-in Bloom
	whole  *wholeFilter // a one-level table's filter section, the copy's source; nil: the hash index section's filter

	once  sync.Once
	ready atomic.Bool // the fields below are set

	bits   []byte
	pin    blockcache.Handle       // bits' memory, held in the cache until the reader's Close
	prober filterblock.BloomProber // bits, decoded once, when bloom

	// slots is the table's hash index, decoded and kept (it lies in the
	// mapping), or nil: a Get asks for the key's home slot before it
	// probes the filter, so that a present key waits for both cache
	// lines at once.
	slots *codec.HashIndex
}

// fill makes the copy, once, from the table's sections, and reports
// whether it is ready. Call it with the reader pinned and under the fault
// guard. A section that cannot be loaded leaves the copy unmade; its
// damage is reported where the section is used.
func (f *heldFilter) fill(r *Reader) bool {
	f.once.Do(func() {
		var local codec.HashIndex
		var pin blockcache.Handle
		x, err := r.hash.get(&local, &pin)
		defer pin.Release()
		var bits []byte
		switch w := f.whole; {
		case w != nil:
			if err := w.sec.load(r.src); err != nil || w.sec.kept == nil || w.off > len(w.sec.kept) {
				return
			}
			bits = w.sec.kept[w.off:]
		case err != nil:
			return
		default:
			bits = x.Filter()
		}
		m, ok := r.src.(*mmapSource)
		if !ok || m.sections == nil {
			return
		}
		held, ok := m.sections.Hold(len(bits))
		if !ok {
			return // the cache cannot take it: probe the mapped filter instead
		}
		f.pin = held
		f.bits = held.Bytes()
		copy(f.bits, bits)
		if f.bloom {
			f.prober = filterblock.NewBloomProber(f.bits)
		}
		if err == nil && r.hash.ready.Load() {
			f.slots = &r.hash.kept
		}
		f.ready.Store(true)
	})
	return f.ready.Load()
}

// mayContain probes the copy; only once ready.
func (f *heldFilter) mayContain(fk []byte, h uint64) bool {
	if f.bloom {
		return f.prober.MayContainHash(h)
	}
	return f.policy.MayContain(f.bits, fk)
}

// mayContainGet is mayContain for a Get, which will read the key's slots
// if the filter passes it.
func (f *heldFilter) mayContainGet(fk []byte, h uint64) bool {
	if f.slots != nil {
		f.slots.PrefetchHome(h)
	}
	return f.mayContain(fk, h)
}

// check: the copy is made from checked bytes; the section it comes from
// is checked by its own layer.
func (f *heldFilter) check() error { return nil }

// releasePin gives the copy's memory back to the cache, at Close (closed
// is set: a probe racing it answers ErrClosed). It waits for a fill in
// progress, so that no copy is made after it.
func (f *heldFilter) releasePin() {
	f.once.Do(func() {})
	f.pin.Release()
}
