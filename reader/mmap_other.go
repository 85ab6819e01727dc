//go:build !unix

package reader

import "os"

func mmapFile(f *os.File, size int64) ([]byte, error) { return nil, errNoMmap }

func munmap(data []byte) error { return nil }

func adviseAccess(data []byte, sequential bool) {}
