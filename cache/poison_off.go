//go:build !sstable_poison

package cache

const poison = false
