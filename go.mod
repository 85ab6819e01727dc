module github.com/sstkit/sstable

go 1.26.0

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/golang/snappy v1.0.0
	github.com/google/go-cmp v0.7.0
	golang.org/x/sys v0.49.0
	pgregory.net/rapid v1.3.0
)
