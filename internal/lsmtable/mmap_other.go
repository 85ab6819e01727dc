//go:build !unix

package lsmtable

import (
	"errors"
	"os"
)

func mmapFile(f *os.File, size int64) ([]byte, error) { return nil, errors.New("leveldb: cannot map") }

func munmap(data []byte) error { return nil }
