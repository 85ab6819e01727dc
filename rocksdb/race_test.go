//go:build race

package rocksdb_test

const raceEnabled = true
