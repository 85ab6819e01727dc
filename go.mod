module github.com/sstkit/sstable

go 1.26.0

require (
	github.com/FastFilter/xorfilter v0.4.2-0.20260120015552-4e5a4d9df65a
	github.com/OneOfOne/xxhash v1.2.8
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/golang/snappy v1.0.0
	github.com/google/go-cmp v0.7.0
	github.com/klauspost/compress v1.20.3
	github.com/minio/minlz v1.2.4
	github.com/pierrec/lz4/v4 v4.1.33
	github.com/zeebo/xxh3 v1.1.0
	golang.org/x/sys v0.49.0
	pgregory.net/rapid v1.3.0
)

require github.com/klauspost/cpuid/v2 v2.2.10 // indirect
