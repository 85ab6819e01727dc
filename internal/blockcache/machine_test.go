package blockcache

import (
	"errors"
	"testing"

	"pgregory.net/rapid"
)

// The state machine drives several Tables over one small Cache and keeps
// a model of what the cache must hold: the published blocks still listed
// (with the entry, version and size each was published with) and the
// Handles the test holds. Eviction order is not modelled; instead, after
// every Reserve the model learns which listed blocks lost their slot word
// and checks that none of them was pinned and that Stats.Evictions grew by
// exactly their number.

type pinKind int

const (
	pinReserved  pinKind = iota // from Reserve, not yet published
	pinPublished                // Reserve then Publish; may have stayed private
	pinGot                      // from Get
)

type smPin struct {
	h    Handle
	tab  int
	i    int
	n    int
	ver  uint32
	kind pinKind
}

type smBlock struct {
	ver  uint32
	n    int
	e    *entry
	word uint64
}

type smTable struct {
	t      *Table
	closed bool
}

type smKey struct{ tab, i int }

// smHold is a Handle from Hold, with the bytes asked for and written.
type smHold struct {
	h    Handle
	n    int
	fill byte
}

type cacheMachine struct {
	c          *Cache
	shardBytes int
	perShard   int
	tables     []*smTable
	listed     map[smKey]smBlock
	pins       []*smPin
	holds      []smHold
	ver        uint32

	hits, misses, evictions int64
}

const smSlots = 24

func (m *cacheMachine) init(t *rapid.T) {
	capacity := rapid.SampledFrom([]int64{64 << 10, 100<<10 + 300, 256 << 10, 1 << 20}).Draw(t, "capacity")
	m.c = newCache(capacity)
	if m.c.Shards() != 1 {
		t.Fatalf("capacity %d: %d shards, want 1", capacity, m.c.Shards())
	}
	m.shardBytes = m.c.shards[0].nchunks * ChunkSize
	if want := int(capacity) / ChunkSize * ChunkSize; m.shardBytes != want {
		t.Fatalf("shard holds %d bytes, want %d", m.shardBytes, want)
	}
	m.perShard = len(m.c.entries)
	m.listed = map[smKey]smBlock{}
	for range 2 {
		m.newTable(t)
	}
}

func (m *cacheMachine) newTable(t *rapid.T) {
	if len(m.tables) >= 5 {
		t.Skip("enough tables")
	}
	tb, err := m.c.NewTable(smSlots)
	if err != nil {
		t.Fatalf("NewTable: %v", err)
	}
	if tb.Len() != smSlots || tb.Cache() != m.c {
		t.Fatalf("NewTable: Len %d, Cache %p", tb.Len(), tb.Cache())
	}
	m.tables = append(m.tables, &smTable{t: tb})
}

func (m *cacheMachine) drawBlock(t *rapid.T) (int, int) {
	return rapid.IntRange(0, len(m.tables)-1).Draw(t, "table"), rapid.IntRange(0, smSlots-1).Draw(t, "slot")
}

func (m *cacheMachine) drawSize(t *rapid.T) int {
	sb := m.shardBytes
	return rapid.OneOf(
		rapid.IntRange(1, 3*ChunkSize),
		rapid.IntRange(1, 3*ChunkSize),
		rapid.IntRange(1, sb/4),
		rapid.IntRange(1, sb),
		rapid.Just(sb),
		rapid.IntRange(sb+1, sb+2*ChunkSize),
		rapid.Just(0),
	).Draw(t, "n")
}

// mustFit reports whether Reserve(n) of block i of table tab has to
// succeed: n fits a shard, the table is open, the pinned blocks leave an
// entry free and a run of ceil(n/ChunkSize) chunks that none of them
// holds. Every unpinned block can be evicted to make room.
func (m *cacheMachine) mustFit(tab, i, n int) bool {
	tb := m.tables[tab]
	if n < 1 || n > m.shardBytes || tb.closed {
		return false
	}
	s := m.c.shardOf(tb.t.id, i)
	held := make([]bool, s.nchunks)
	for c := s.limit; c < s.nchunks; c++ {
		held[c] = true // the set-aside region
	}
	pinned := map[*entry]bool{}
	for _, p := range m.pins {
		if p.h.e.shard != s.index || pinned[p.h.e] {
			continue
		}
		pinned[p.h.e] = true
		for c := int(p.h.e.chunk) - s.base; c < int(p.h.e.chunk)-s.base+chunksOf(p.n); c++ {
			held[c] = true
		}
	}
	if len(pinned)+len(m.holds) >= m.perShard {
		return false
	}
	run := 0
	for _, h := range held {
		if run++; h {
			run = 0
		}
		if run >= chunksOf(n) {
			return true
		}
	}
	return false
}

func (m *cacheMachine) pinnedEntry(e *entry) bool {
	for _, p := range m.pins {
		if p.h.e == e {
			return true
		}
	}
	return false
}

// syncEvictions drops from the model the listed blocks whose slot no
// longer holds them: the cache evicted them.
func (m *cacheMachine) syncEvictions(t *rapid.T) {
	for k, b := range m.listed {
		w := m.tables[k.tab].t.slots[k.i].Load()
		if w == b.word {
			continue
		}
		if w != 0 && w&ghostBit == 0 {
			t.Fatalf("block %v: slot word %#x replaced by live %#x without a Publish", k, b.word, w)
		}
		if m.pinnedEntry(b.e) {
			t.Fatalf("block %v evicted while pinned", k)
		}
		delete(m.listed, k)
		m.evictions++
	}
}

func (m *cacheMachine) Get(t *rapid.T) {
	tab, i := m.drawBlock(t)
	tb := m.tables[tab]
	h, ok := tb.t.Get(i)
	b, want := m.listed[smKey{tab, i}]
	if ok != want {
		t.Fatalf("Get(%d) of table %d: hit %v, model says %v", i, tab, ok, want)
	}
	if !ok {
		if h.Cached() || h.Bytes() != nil {
			t.Fatalf("Get miss returned a non-zero Handle")
		}
		return
	}
	m.hits++
	if h.e != b.e || h.Aux() != b.ver || len(h.Bytes()) != b.n || !matches(h.Bytes(), tb.t.id, i, b.ver) {
		t.Fatalf("Get(%d) of table %d: wrong block (aux %d, %d bytes; want version %d, %d bytes)", i, tab, h.Aux(), len(h.Bytes()), b.ver, b.n)
	}
	if rapid.Bool().Draw(t, "keep") {
		m.pins = append(m.pins, &smPin{h: h, tab: tab, i: i, n: b.n, ver: b.ver, kind: pinGot})
		return
	}
	h.Release()
}

func (m *cacheMachine) reserve(t *rapid.T, tab, i, n int, mode int) {
	tb := m.tables[tab]
	must := m.mustFit(tab, i, n)
	h, ok := tb.t.Reserve(i, n)
	m.misses++
	m.syncEvictions(t)
	if must && !ok {
		t.Fatalf("Reserve(%d, %d) of table %d failed though a run of free or unpinned chunks and an entry are there", i, n, tab)
	}
	if !ok {
		if h.Cached() {
			t.Fatalf("failed Reserve returned a cached Handle")
		}
		return
	}
	if n < 1 || n > m.shardBytes || tb.closed {
		t.Fatalf("Reserve(%d, %d) of table %d (closed %v) succeeded; shard holds %d", i, n, tab, tb.closed, m.shardBytes)
	}
	if !h.Cached() || len(h.Bytes()) != n || cap(h.Bytes()) != n {
		t.Fatalf("Reserve(%d): Handle cached %v, len %d cap %d", n, h.Cached(), len(h.Bytes()), cap(h.Bytes()))
	}
	// A reserved block is not visible to Get; the listed block, if any,
	// still is.
	if g, got := tb.t.Get(i); got != m.hasListed(tab, i) {
		t.Fatalf("Get after Reserve: hit %v, model listed %v", got, m.hasListed(tab, i))
	} else if got {
		m.hits++
		if g.e == h.e {
			t.Fatalf("Get returned the reserved block")
		}
		g.Release()
	}
	m.ver++
	fill(h.Bytes(), tb.t.id, i, m.ver)
	p := &smPin{h: h, tab: tab, i: i, n: n, ver: m.ver, kind: pinReserved}
	m.pins = append(m.pins, p)
	switch mode {
	case 0: // publish and release
		m.publish(t, p)
		m.release(t, len(m.pins)-1)
	case 1: // publish and keep pinned
		m.publish(t, p)
	case 2: // keep private for a later Publish
	case 3: // give back unpublished
		m.release(t, len(m.pins)-1)
	}
}

func (m *cacheMachine) hasListed(tab, i int) bool { _, ok := m.listed[smKey{tab, i}]; return ok }

func (m *cacheMachine) Reserve(t *rapid.T) {
	tab, i := m.drawBlock(t)
	n := m.drawSize(t)
	mode := rapid.IntRange(0, 3).Draw(t, "mode")
	m.reserve(t, tab, i, n, mode)
}

func (m *cacheMachine) publish(t *rapid.T, p *smPin) {
	tb := m.tables[p.tab]
	k := smKey{p.tab, p.i}
	old := tb.t.slots[p.i].Load()
	_, taken := m.listed[k]
	tb.t.Publish(p.i, p.h, p.ver)
	p.kind = pinPublished
	if p.h.Aux() != p.ver {
		t.Fatalf("Aux %d after Publish(%d)", p.h.Aux(), p.ver)
	}
	w := tb.t.slots[p.i].Load()
	if tb.closed || taken {
		if w != old {
			t.Fatalf("Publish over a listed block or into a closed table changed the slot: %#x -> %#x", old, w)
		}
		return // stays private, freed on Release
	}
	if w != liveWord(p.h.e.idx, p.h.e.chunk) {
		t.Fatalf("Publish: slot word %#x", w)
	}
	m.listed[k] = smBlock{ver: p.ver, n: p.n, e: p.h.e, word: w}
}

func (m *cacheMachine) Publish(t *rapid.T) {
	var pending []*smPin
	for _, p := range m.pins {
		if p.kind == pinReserved {
			pending = append(pending, p)
		}
	}
	if len(pending) == 0 {
		t.Skip("nothing to publish")
	}
	m.publish(t, rapid.SampledFrom(pending).Draw(t, "pending"))
}

func (m *cacheMachine) release(t *rapid.T, j int) {
	p := m.pins[j]
	tb := m.tables[p.tab]
	b := p.h.Bytes()
	if len(b) != p.n || !matches(b, tb.t.id, p.i, p.ver) {
		t.Fatalf("pinned block %d of table %d (version %d, kind %d) changed while pinned", p.i, p.tab, p.ver, p.kind)
	}
	if p.kind != pinReserved && p.h.Aux() != p.ver {
		t.Fatalf("pinned block's Aux %d, want %d", p.h.Aux(), p.ver)
	}
	p.h.Release()
	if p.h.Cached() || p.h.Bytes() != nil {
		t.Fatalf("Release left the Handle set")
	}
	p.h.Release() // a second Release through the same *Handle does nothing
	m.pins = append(m.pins[:j], m.pins[j+1:]...)
}

func (m *cacheMachine) Release(t *rapid.T) {
	if len(m.pins) == 0 {
		t.Skip("nothing pinned")
	}
	m.release(t, rapid.IntRange(0, len(m.pins)-1).Draw(t, "pin"))
}

func (m *cacheMachine) CloseTable(t *rapid.T) {
	tab := rapid.IntRange(0, len(m.tables)-1).Draw(t, "table")
	tb := m.tables[tab]
	tb.t.Close()
	tb.closed = true
	for k := range m.listed {
		if k.tab == tab {
			delete(m.listed, k)
		}
	}
	for i := range tb.t.slots {
		if w := tb.t.slots[i].Load(); w != 0 {
			t.Fatalf("slot %d of a closed table holds %#x", i, w)
		}
	}
}

func (m *cacheMachine) NewTable(t *rapid.T) { m.newTable(t) }

// Hold sets bytes aside, as a reader's filter copy: they count in Size
// and Held, evict the blocks in the set-aside region's way (never a
// pinned one), and keep what is written to them.
func (m *cacheMachine) Hold(t *rapid.T) {
	tab := rapid.IntRange(0, len(m.tables)-1).Draw(t, "table")
	tb := m.tables[tab]
	n := rapid.IntRange(1, m.shardBytes/2).Draw(t, "n")
	aside := 0
	for _, h := range m.holds {
		aside += chunksOf(h.n)
	}
	// With nothing pinned, the region can always grow as far as the
	// shard, and an entry be freed.
	must := !tb.closed && len(m.pins) == 0 && len(m.holds) < m.perShard && (aside+chunksOf(n))*ChunkSize <= m.shardBytes
	h, ok := tb.t.Hold(n)
	m.syncEvictions(t)
	if must && !ok {
		t.Fatalf("Hold(%d) with %d bytes held and nothing pinned failed", n, aside*ChunkSize)
	}
	if !ok {
		return
	}
	if tb.closed {
		t.Fatalf("Hold on a closed table succeeded")
	}
	b := h.Bytes()
	if len(b) != n {
		t.Fatalf("Hold(%d): %d bytes", n, len(b))
	}
	m.ver++
	for i := range b {
		b[i] = byte(m.ver)
	}
	m.holds = append(m.holds, smHold{h: h, n: n, fill: byte(m.ver)})
}

// ReleaseHold releases a Hold; its bytes must have kept their contents.
func (m *cacheMachine) ReleaseHold(t *rapid.T) {
	if len(m.holds) == 0 {
		t.Skip("nothing held")
	}
	j := rapid.IntRange(0, len(m.holds)-1).Draw(t, "hold")
	m.releaseHold(t, j)
}

func (m *cacheMachine) releaseHold(t *rapid.T, j int) {
	h := m.holds[j]
	for i, x := range h.h.Bytes() {
		if x != h.fill {
			t.Fatalf("held byte %d is %d, want %d", i, x, h.fill)
		}
	}
	h.h.Release()
	m.holds = append(m.holds[:j], m.holds[j+1:]...)
}

// Pressure reserves several large blocks and gives them back unpublished.
func (m *cacheMachine) Pressure(t *rapid.T) {
	tab, i := m.drawBlock(t)
	for range rapid.IntRange(1, 4).Draw(t, "rounds") {
		m.reserve(t, tab, i, rapid.IntRange(m.shardBytes/4, m.shardBytes).Draw(t, "n"), 3)
	}
}

func (m *cacheMachine) Check(t *rapid.T) {
	entries := map[*entry]int{}
	for _, b := range m.listed {
		entries[b.e] = b.n
	}
	for _, p := range m.pins {
		entries[p.h.e] = p.n
	}
	var size, held int64
	for _, n := range entries {
		size += int64(chunksOf(n) * ChunkSize)
	}
	for _, h := range m.holds {
		held += int64(chunksOf(h.n) * ChunkSize)
	}
	st := m.c.Stats()
	want := Stats{Capacity: m.c.Capacity(), Size: size + held, Hits: m.hits, Misses: m.misses, Evictions: m.evictions, Held: held}
	if st != want {
		t.Fatalf("Stats %+v, model %+v", st, want)
	}
	if st.Size > st.Capacity {
		t.Fatalf("Size %d above Capacity %d", st.Size, st.Capacity)
	}
	// No block lies in the set-aside region, which holds what is held.
	s := &m.c.shards[0]
	if region := s.nchunks - s.limit; int64(region*ChunkSize) < held || s.aside*ChunkSize != int(held) {
		t.Fatalf("set-aside region of %d chunks from %d, %d chunks aside; %d bytes held", region, s.limit, s.aside, held)
	}
	for e, n := range entries {
		if at := int(e.chunk) - s.base; at+chunksOf(n) > s.limit {
			t.Fatalf("a block at chunks [%d, %d) lies in the set-aside region from %d", at, at+chunksOf(n), s.limit)
		}
	}
	for tab, tb := range m.tables {
		for i := range tb.t.slots {
			b, ok := m.listed[smKey{tab, i}]
			if w := tb.t.slots[i].Load(); ok && w != b.word || !ok && w != 0 && w&ghostBit == 0 {
				t.Fatalf("table %d slot %d: word %#x, model listed %v (%#x)", tab, i, w, ok, b.word)
			}
		}
	}
}

func (m *cacheMachine) finish(t *rapid.T) {
	for _, tb := range m.tables {
		tb.t.Close()
		tb.t.Close() // idempotent
	}
	if len(m.pins) > 0 {
		if err := m.c.Close(); !errors.Is(err, ErrInUse) {
			t.Fatalf("Close with %d Handles pinned: %v, want ErrInUse", len(m.pins), err)
		}
	}
	for len(m.pins) > 0 {
		m.release(t, len(m.pins)-1)
	}
	if len(m.holds) > 0 {
		if err := m.c.Close(); !errors.Is(err, ErrInUse) {
			t.Fatalf("Close with %d Holds: %v, want ErrInUse", len(m.holds), err)
		}
	}
	for len(m.holds) > 0 {
		m.releaseHold(t, len(m.holds)-1)
	}
	if s := &m.c.shards[0]; s.limit != s.nchunks {
		t.Fatalf("set-aside region from chunk %d of %d with nothing held", s.limit, s.nchunks)
	}
	if st := m.c.Stats(); st.Size != 0 {
		t.Fatalf("Size %d with every Table closed and nothing pinned", st.Size)
	}
	if err := m.c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := m.c.NewTable(1); !errors.Is(err, ErrClosed) {
		t.Fatalf("NewTable after Close: %v", err)
	}
}

func TestStateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var m cacheMachine
		m.init(t)
		t.Repeat(map[string]func(*rapid.T){
			"Get":         m.Get,
			"Reserve":     m.Reserve,
			"Publish":     m.Publish,
			"Release":     m.Release,
			"CloseTable":  m.CloseTable,
			"NewTable":    m.NewTable,
			"Pressure":    m.Pressure,
			"Hold":        m.Hold,
			"ReleaseHold": m.ReleaseHold,
			"":            m.Check,
		})
		m.finish(t)
	})
}
