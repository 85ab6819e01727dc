//go:build !sstable_poison

package blockcache

const poison = false
