// Package leveldbcheck tests package leveldb (issue 42) against the real
// writers of LevelDB's format: whole databases written through
// goleveldb's DB API, whose live view must read exactly as goleveldb's
// own iterator and Get read it, and tables written by Pebble v2.1.7's
// sstable writer in TableFormatLevelDB, whose every entry must read back
// as written. It holds tests only; it lives in the bench module so that
// the main module never depends on goleveldb or Pebble.
package leveldbcheck
