//go:build !unix

package cache

// mmapAnon is unavailable here: the cache falls back to Go heap memory.
func mmapAnon(n int) []byte { return nil }

func munmap(b []byte) {}
