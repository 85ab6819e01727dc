package blockcache

import (
	"sync/atomic"
	"testing"
)

func BenchmarkGetHit(b *testing.B) {
	c := newCache(64 << 20)
	tb, _ := c.NewTable(1024)
	for i := range 1024 {
		put(tb, i, 4096, 1)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		h, ok := tb.Get(i & 1023)
		if !ok {
			b.Fatal("miss")
		}
		h.Release()
		i++
	}
	tb.Close()
	c.Close()
}

func BenchmarkGetHitParallel(b *testing.B) {
	c := newCache(64 << 20)
	tb, _ := c.NewTable(1024)
	for i := range 1024 {
		put(tb, i, 4096, 1)
	}
	var seed atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seed.Add(97))
		for pb.Next() {
			h, ok := tb.Get(i & 1023)
			if !ok {
				b.Error("miss")
				return
			}
			h.Release()
			i++
		}
	})
	tb.Close()
	c.Close()
}

// BenchmarkMissThrash: every operation is a miss that evicts a block:
// Reserve, Publish (the bytes are not filled) and Release.
func BenchmarkMissThrash(b *testing.B) {
	c := newCache(1 << 20)
	tb, _ := c.NewTable(4096)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		h, ok := tb.Reserve(i&4095, 4096)
		if !ok {
			b.Fatal("Reserve failed")
		}
		tb.Publish(i&4095, h, 0)
		h.Release()
		i++
	}
	tb.Close()
	c.Close()
}
