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
//     decoder sees garbage whose checksum would pass. The single-entry
//     decoders of hashed lookups are compared with the iterator on every
//     entry it visits: codec.EntryAt (version 2) must give the iterator's
//     entry wherever it is whole, codec.EntryParts (version 4) the
//     iterator's value and key suffix with the first key's shared bytes,
//     so that the two agree wherever the entry shares its bytes with the
//     first key, failing only where it shares more than the first key
//     has. The bytes also go to
//     codec.CheckBlock and to codec.DecodeBlock as a snappy block and as a
//     zstd block with small length limits, measuring the bytes allocated;
//     what zstd decodes must agree with DecodedLen and the library. They
//     also go to the MinLZ decoder (which must agree with minlz.Decode and
//     refuse blocks without MinLZ's 0 byte) and to the zstd dictionary
//     decoder with a fixed dictionary, and round-trip through both
//     encoders. (FuzzRoundTrip builds MinLZ tables and zstd tables with a
//     dictionary where its restart interval byte is 31.)
//   - FuzzIndex: the bytes as an index block; every entry's value goes to
//     codec.DecodeHandle and codec.DecodePartitionHandle (the value of a
//     top-level index entry), which also gets the bytes whole and is
//     checked against the specification (four uvarints filling the bytes,
//     offset and lengths below 2^62). Seeds: index blocks, top-level
//     indexes, index partitions and partition handles.
//   - FuzzFooter: footer.Decode with several file sizes, on the bytes as
//     given and with magic and checksum repaired (and once more with a
//     known version, 1 to 4), so the handle checks are reached.
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
//     with decoded offsets, decoded starts that increase by at least 4), a
//     version 4 section's whole filter at its end, and
//     Probe/Prefetch/Next and Occupied must stay in bounds, end, and
//     fail only with ErrCorrupt. The bytes also build a section with
//     codec.HashIndexWriter in each offset mode and in version 4's
//     (every entry must be found from its hash; a version 4 section must
//     have the slot width, 4- or 8-byte block offsets and size of the
//     format), and go to codec.EntryAt and codec.EntryParts as block
//     contents, as in FuzzBlock. Seeds: the sections of the seed tables
//     (versions 2 to 4), and written ones of every kind, version 4's with
//     4- and 5-byte slots, 4- and 8-byte block offsets, with a whole
//     filter and without.
//   - FuzzSpanBlock: codec.DecodeSpanBlock; whatever decodes must
//     re-encode through codec.SpanBlockWriter to the same bytes, hold
//     sorted, non-overlapping fragments, and answer SearchStart and
//     SearchStartBefore as a linear scan does. Seeds: the golden version 5
//     tables' span blocks and written ones.
//   - FuzzTable: the bytes as a whole table file, through reader.New or,
//     when the bool argument is set, through reader.Open of a temporary
//     file (the mmap path). A file that does not pass Verify is read a
//     second time with every checksum its layout leads to recomputed
//     (repairChecksums: the footer, properties and index block, the data
//     blocks the index names, the filter section; a hash index section,
//     with a version 4 partitioned table's whole filter in it; a version 3
//     or partitioned version 4 table's top-level index, partitions and the
//     data blocks their index partitions name), so that mutations get
//     past the CRCs into the decoders behind them; TestRepairIdentity,
//     TestRepairReachesDecoders and TestRepairMutationCounts check it and
//     count, per golden table, the mutations that get through. Open,
//     Verify, both scans, SeekGE, Get and MayContain must fail only with
//     errors wrapping format.ErrCorrupt or reader.ErrNotFound; and a table
//     that passes Verify must behave like the sorted map its forward scan
//     describes.
//   - FuzzRoundTrip: the bytes decode into builder options (format
//     version 1, 2 with a hash index, 3 partitioned in partitions of 64 to
//     256 bytes with a hash index or without, and 4, the default,
//     one-level or partitioned; zstd and the binary fuse filter among
//     them) and a sorted key/value set; the table built from them must
//     read back exactly, and its properties must be those its inputs and
//     bytes give: counts and raw sizes from the entries added, section
//     sizes from the footer and index blocks by the layout of format's
//     doc, adding up to the file size.
//   - FuzzPrefix: a table built as FuzzRoundTrip's (format versions 1, 2
//     and 3, the last with a hash index or without, and 4, one-level and
//     partitioned) with a format.Suffix splitter, or none, and user properties:
//     Has, MayContainPrefix, SeekPrefixGE, bounded scans both ways and
//     SeekLT must agree with the sorted entries, also where one prefix is
//     a proper prefix of another.
//   - FuzzMerge: the bytes as the shape of a stack of one to four levels
//     (keys shared between levels, point deletions, range deletions and
//     range keys, each level one or two tables with a format.Suffix
//     splitter, over io.ReaderAt) and then as moves of a merge.Iterator:
//     First, Last, Next, Prev, SeekGE, SeekLT and SeekPrefixGE must agree
//     at every step with the view computed by brute force.
//   - FuzzLevelDBTable: the bytes as a LevelDB table, through
//     leveldb.NewTable or, mapped, leveldb.OpenTable, with its block
//     checksums repaired or not: scans both ways must agree, and a table
//     that passes Verify must Get each key's newest version through its
//     filter. Seeds: tables written in LevelDB's layout by
//     internal/ldbtest, and LevelDB's own under
//     ../leveldb/testdata/golden.
//   - FuzzRocksDBTable: the bytes as a RocksDB block-based table, through
//     rocksdb.NewTable or, mapped, rocksdb.OpenTable, with every checksum
//     its layout leads to repaired or not (repairRocksDB: the footer's
//     from format_version 6, the metaindex, properties, compression
//     dictionary, index and its partitions, data blocks, filter and its
//     partitions, range deletions; TestRepairRocksDB checks it). Open,
//     Verify, scans both ways, seeks, Get, a bounded scan, the table as a
//     merge level (both ways and merge.Get), RangeDeletions, Properties
//     and Info must fail only with errors wrapping format.ErrCorrupt,
//     rocksdb.ErrUnsupported or rocksdb.ErrUnresolved; a table that
//     passes Verify must scan the same entries both ways, seek and Get
//     (at each version's sequence number) as its scan says, and show as
//     a level what RocksDB's rules make of the scan and its range
//     deletions. Seeds: the RocksDB 7.8.3 and 10.5.1 tables under
//     ../rocksdb/testdata/golden and ../internal/rocksblock/testdata/golden,
//     and each with a byte changed in one block of each kind.
//   - FuzzLevelDBDB: the bytes as a MANIFEST's version edit and a log's
//     write batch, framed as valid log records, beside one valid table,
//     through leveldb.OpenDB: whatever opens and passes Verify must scan
//     the same keys both ways and Get each scanned value, and read the
//     same with Options.SkipLogDamage. The batch bytes also decode into
//     write batches of puts and deletions (the empty key, 0x00 and 0xff
//     keys, keys of 8 bytes and more, empty values, values cut into
//     fragments over blocks) written as a log, sometimes cut short inside
//     a record, whose view (scans, seeks, prefix seeks, Gets, the last
//     sequence number) must match a model map.
//
// The seeds are small tables built in the seed functions (snappy, zstd and
// raw, Bloom and binary fuse filters, several block sizes, format
// versions 1, 2, 3 and 4, version 3 also with a hash index, version 4
// one-level and partitioned, each version with a splitter and user
// properties), the golden tables in
// ../testdata/golden when present (but not for FuzzTable, whose execs
// they would slow several times over; TestGoldenTables gives them its
// checks), the sections of both (split with footer.Decode, partitions
// included), and the
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
