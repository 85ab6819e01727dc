// Command sstload is a Beam pipeline that bulk-loads text files of
// "key<TAB>value" lines (the input of "sst build") into non-overlapping
// tables in a bucket, with sstbeam.WriteTables, and can read them back to
// count them with sstbeam.ReadTables.
//
// On the in-process Prism runner (the default):
//
//	go run ./cmd/sstload -input '/data/in-*.txt' -bucket file:///tmp/bucket -prefix tables/
//	go run ./cmd/sstload -count -bucket file:///tmp/bucket -prefix tables/
//
// The same program runs on Flink, Spark or Dataflow with Beam's runner
// flags (see docs/bulk.md, "Across many machines: Apache Beam"), for example
//
//	go run ./cmd/sstload -input 'gs://b/in-*.txt' -bucket gs://b -prefix tables/ \
//	    --runner=dataflow --project=P --region=europe-west1 --staging_location=gs://b/staging
package main

import (
	"bytes"
	"context"
	"flag"
	"log"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3" // s3:// input (beamx brings local and gs://)
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	_ "gocloud.dev/blob/gcsblob" // gs:// buckets
	_ "gocloud.dev/blob/s3blob"  // s3:// buckets

	sstbeam "github.com/sstkit/sstable/beam"
)

var (
	input   = flag.String("input", "", "text files of key<TAB>value lines (a glob; local, gs:// or s3:// paths)")
	bucket  = flag.String("bucket", "", "bucket URL for the tables: file:///dir, gs://bucket, s3://bucket?region=...")
	prefix  = flag.String("prefix", "tables/", "object name prefix of the tables and the manifest")
	target  = flag.Int64("target", 64<<20, "target table size in bytes")
	memory  = flag.Int64("memory", 256<<20, "bytes of entries each worker sorts in memory before spilling to local disk")
	comp    = flag.String("compression", "snappy", "snappy, zstd or none")
	ranges  = flag.Int("ranges", 0, "key ranges (0: one per 4 target sizes of input)")
	count   = flag.Bool("count", false, "read the tables of -bucket and -prefix back and log the entry count")
	tmpDir  = flag.String("tmp", "", "local directory for workers' runs and tables before upload (default: the system's)")
	bitsKey = flag.Int("bits-per-key", 10, "Bloom filter bits per key")
)

func init() {
	register.Function2x0(splitLine)
	register.Emitter2[[]byte, []byte]()
}

// splitLine turns a "key<TAB>value" line into a pair (no tab: an empty
// value), as sst build reads text input.
func splitLine(line string, emit func([]byte, []byte)) {
	k, v, _ := bytes.Cut([]byte(line), []byte("\t"))
	emit(k, v)
}

func main() {
	flag.Parse()
	beam.Init()
	if *bucket == "" || (*input == "" && !*count) {
		log.Fatal("sstload: -bucket and -input (or -count) are required")
	}
	p, s := beam.NewPipelineWithRoot()
	if *count {
		kvs := sstbeam.ReadTables(s, *bucket, *prefix)
		n := stats.CountElms(s, beam.DropValue(s, kvs))
		beam.ParDo0(s, logCount, n)
	} else {
		opts := sstbeam.WriteOptions{
			BucketURL:       *bucket,
			Prefix:          *prefix,
			TargetTableSize: *target,
			MemoryBudget:    *memory,
			Compression:     *comp,
			BitsPerKey:      *bitsKey,
			Ranges:          *ranges,
			TempDir:         *tmpDir,
		}
		if err := opts.Validate(); err != nil {
			log.Fatal(err)
		}
		lines := textio.Read(s, *input)
		kvs := beam.ParDo(s, splitLine, lines)
		sstbeam.WriteTables(s, kvs, opts)
	}
	if err := beamx.Run(context.Background(), p); err != nil {
		log.Fatalf("sstload: %v", err)
	}
}

func init() { register.Function1x0(logCount) }

func logCount(n int) { log.Printf("sstload: %d entries", n) }
