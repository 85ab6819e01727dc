module github.com/sstkit/sstable/bench

go 1.26.8

replace github.com/sstkit/sstable => ../

require (
	github.com/sstkit/sstable v0.0.0
	github.com/syndtr/goleveldb v1.0.1-0.20220721030215-126854af5e6d
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/golang/snappy v1.0.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
