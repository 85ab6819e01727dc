//go:build sstable_poison

package blockcache

// poison is set by the sstable_poison build tag: freed chunks are filled
// with PoisonByte, so that a read after free returns wrong data that tests
// can see.
const poison = true
