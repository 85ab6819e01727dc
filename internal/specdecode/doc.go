// Package specdecode holds, in its tests only, a second decoder of table
// files written from the format specification (the package documentation
// of package format) and filterblock's documented filter encodings alone.
// It shares no decoding code with the module's codec, footer or
// filterblock packages; its tests decode every golden table under
// testdata/golden, and tables built on the spot for the cases the golden
// tables lack, and check that the reader agrees with it entry for entry,
// lookup for lookup and property for property. A disagreement means the
// specification and the code have drifted apart.
package specdecode
