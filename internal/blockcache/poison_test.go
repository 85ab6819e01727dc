//go:build sstable_poison

package blockcache

import "testing"

func allPoison(b []byte) bool {
	for _, x := range b {
		if x != PoisonByte {
			return false
		}
	}
	return true
}

// TestPoison reads blocks after their Release on purpose: once the cache
// frees them (by eviction, by Table.Close, on the last Release of a
// private block), their bytes read PoisonByte.
func TestPoison(t *testing.T) {
	if !Poisoned {
		t.Fatal("Poisoned is false with the sstable_poison tag")
	}
	c := newCache(64 << 10)
	tb := newTable(t, c, 100)

	// Evicted.
	h := mustPublish(t, tb, 0, 3000, 1)
	old := h.Bytes()
	h.Release()
	if !matches(old, tb.id, 0, 1) {
		t.Fatal("a cached, unpinned block changed")
	}
	for i := 1; listed(tb, 0); i++ {
		r, ok := tb.Reserve(i, 4096) // reserved, never filled
		if !ok {
			t.Fatal("Reserve failed")
		}
		tb.Publish(i, r, 0)
		r.Release()
	}
	if !allPoison(old) {
		t.Error("evicted block not poisoned")
	}

	// Private (a second Publish of one slot), freed on Release.
	a := mustPublish(t, tb, 50, 1000, 1)
	b := mustPublish(t, tb, 50, 1000, 2)
	bb := b.Bytes()
	b.Release()
	if !allPoison(bb) {
		t.Error("private block not poisoned on Release")
	}
	if !matches(a.Bytes(), tb.id, 50, 1) {
		t.Error("the published block was poisoned")
	}
	a.Release()

	// Dropped by Table.Close, and pinned across it.
	pinned := mustPublish(t, tb, 60, 700, 3)
	mustPut(t, tb, 61, 700, 4)
	g, ok := tb.Get(61)
	if !ok {
		t.Fatal("Get(61) missed")
	}
	gb := g.Bytes()
	g.Release()
	tb.Close()
	if !allPoison(gb) {
		t.Error("block dropped by Table.Close not poisoned")
	}
	if !matches(pinned.Bytes(), tb.id, 60, 3) {
		t.Error("block pinned across Table.Close poisoned before its Release")
	}
	pb := pinned.Bytes()
	pinned.Release()
	if !allPoison(pb) {
		t.Error("block pinned across Table.Close not poisoned on Release")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}
