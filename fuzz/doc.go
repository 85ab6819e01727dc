// Package fuzz holds Go native fuzz targets for every decoder in the
// module. It has no exported API: the targets live in its _test.go files.
//
// Every target feeds arbitrary bytes to one decoder and checks that it
// returns an error (wrapping format.ErrCorrupt, or reader.ErrNotFound for a
// lookup) instead of panicking, looping or allocating far more than the
// input size, and that whatever it does accept behaves consistently:
//
//   - FuzzBlock: the bytes as block contents for codec.BlockIter (Init,
//     First/Next, Last/Prev, SeekGE of keys drawn from the input). BlockIter
//     takes contents directly, so this is the checksum-less path: the block
//     decoder sees garbage whose checksum would pass. The bytes also go to
//     codec.CheckBlock and to codec.DecodeBlock as a snappy block and as a
//     zstd block with small length limits, measuring the bytes allocated;
//     what zstd decodes must agree with DecodedLen and the library.
//   - FuzzIndex: the bytes as an index block; every entry's value goes to
//     codec.DecodeHandle.
//   - FuzzFooter: footer.Decode with several file sizes, on the bytes as
//     given and with magic and checksum repaired (and once more with a
//     known version, 1 or 2), so the handle checks are reached.
//   - FuzzFilter: filterblock.DecodeSection at several file offsets, then
//     filterblock.BloomMayContain, Bloom(10).MayContain,
//     LevelDBBloom(10).MayContain and BinaryFuse8().MayContain on the
//     filter with keys from the input; filters built from those keys must
//     match them all.
//   - FuzzBinaryFuse: BinaryFuse8 filters built from 64-bit hashes taken
//     from the input, duplicates included, through HashAdder: every hash
//     must match, and the filter must follow its documented layout (or be
//     the Bloom filter it fell back to); the input probed as a filter must
//     not panic.
//   - FuzzProperties: codec.DecodeProperties; on success the re-encoding by
//     codec.AppendProperties must decode to an equal value.
//   - FuzzHashIndex: codec.DecodeHashIndex with the file offset, data size
//     and block count given and with those the bytes claim; whatever
//     decodes must give block handles that tile the data section (and,
//     with decoded offsets, decoded starts that increase by at least 4), and
//     Probe/Prefetch/Next and Occupied must stay in bounds, end, and
//     fail only with ErrCorrupt. The bytes also build a section with
//     codec.HashIndexWriter in each offset mode (every entry must be
//     found from its hash),
//     and go to codec.EntryAt as block contents, which must agree with
//     BlockIter on every whole entry.
//   - FuzzTable: the bytes as a whole table file, through reader.New or,
//     when the bool argument is set, through reader.Open of a temporary
//     file (the mmap path). A file that does not pass Verify is read a
//     second time with every checksum its footer and index lead to
//     recomputed (a hash index too, in version 2 or 3, a version 3 table's
//     partitions and the data blocks their index partitions name), so that
//     mutations get past the CRCs into the decoders behind them. Open,
//     Verify, both scans, SeekGE, Get and MayContain must fail only with
//     errors wrapping format.ErrCorrupt or reader.ErrNotFound; and a table
//     that passes Verify must behave like the sorted map its forward scan
//     describes.
//   - FuzzRoundTrip: the bytes decode into builder options (format version
//     2, with a hash index, format version 3, partitioned in partitions of
//     64 to 256 bytes, with a hash index or without, zstd and the binary
//     fuse filter among them) and a sorted key/value set; the table built
//     from them must read back exactly.
//   - FuzzPrefix: a table built as FuzzRoundTrip's (format versions 1, 2
//     and 3, the last with a hash index or without) with a format.Suffix splitter, or none, and user properties:
//     Has, MayContainPrefix, SeekPrefixGE, bounded scans both ways and
//     SeekLT must agree with the sorted entries, also where one prefix is
//     a proper prefix of another.
//
// The seeds are small tables built in the seed functions (snappy, zstd and
// raw, Bloom and binary fuse filters, several block sizes, format
// versions 1, 2 and 3, version 3 also with a hash index, each version
// with a splitter and user properties), the golden tables in
// ../testdata/golden when present (but not for FuzzTable, whose execs
// they would slow several times over; TestGoldenTables gives them its
// checks), the sections of both (split with footer.Decode), and the
// corpus files in testdata/fuzz/FuzzX. Plain `go test ./fuzz` runs all
// of them as unit tests in a few seconds. To fuzz one target:
//
//	go test -run='^$' -fuzz='^FuzzTable$' -fuzztime=20s ./fuzz
//
// Go fuzzes one target per invocation; .ci/fuzz.sh runs them all in turn
// for $FUZZTIME each. It also passes -fuzzminimizetime=200x: Go minimizes
// every new interesting input for up to 60s by default (one of its passes
// is quadratic in the input length), which can swallow a short run whole,
// and a minimization that runs out a time limit gets its worker killed
// (see the script).
// A failing input is written to testdata/fuzz/FuzzX/ and replayed by every
// later `go test ./fuzz`; the corpus files with descriptive names pin
// library bugs the targets found.
package fuzz
