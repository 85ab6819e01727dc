//go:build !unix

package hugemem

func mapHuge(n int) (mapping, b []byte) { return nil, nil }

func unmap(m []byte) {}
