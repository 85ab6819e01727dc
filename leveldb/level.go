package leveldb

import (
	"github.com/sstkit/sstable/internal/lsmdb"
	"github.com/sstkit/sstable/internal/lsmtable"
)

// IsDeletion reports whether value is the mark this package's levels show
// for a deleted user key. Pass it as merge.Options.IsDeletion (as
// DB.MergeOptions does): a deleted key then reads as absent.
func IsDeletion(value []byte) bool { return lsmtable.IsDeletion(value) }

// trailerLen is the length of an internal key's trailer.
const trailerLen = lsmtable.TrailerLen

// compareKeys orders internal keys as LevelDB's InternalKeyComparator.
func compareKeys(a, b []byte) int { return lsmtable.CompareKeys(a, b, false) }

// SectionLog names a log file's records (the MANIFEST's, a write-ahead
// log's) in corruption errors.
const SectionLog = lsmdb.SectionLog
