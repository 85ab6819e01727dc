// Package specdecode holds, in its tests only, a second decoder of table
// files written from the format specification and filterblock's
// documented filter encodings alone. The specification is package
// format's documentation (go doc -all github.com/sstkit/sstable/format):
// its package overview (conventions, file layout, footer, reading) and
// the doc comments of the declarations the overview lists, one part of
// the file each (the block types, Version1 to Version5, Properties). The
// tests name the rules they follow by those documents' headings, as in
// ("Hash index section").
// It shares no decoding code with the module's codec, footer or
// filterblock packages; its tests decode every golden table under
// testdata/golden, and tables built on the spot for the cases the golden
// tables lack, and check that the reader agrees with it entry for entry,
// lookup for lookup and property for property. A disagreement means the
// specification and the code have drifted apart.
package specdecode
