package lsmtable_test

// rapid saves no failing case for later runs to replay: see rapidfail.
import _ "github.com/sstkit/sstable/internal/rapidfail"
