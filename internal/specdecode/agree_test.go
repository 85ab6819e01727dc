package specdecode

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// TestGoldenTablesAgreeWithSpec decodes every golden table with this
// package's decoder, written from the specification, and checks that the
// reader agrees with it: the same entries in order, the same answer to
// every Get, the same properties.
func TestGoldenTablesAgreeWithSpec(t *testing.T) {
	files, err := filepath.Glob("../../testdata/golden/*.sst")
	if err != nil {
		t.Fatal(err)
	}
	versions := map[uint32]bool{}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			if tb := checkTable(t, path); tb != nil {
				versions[tb.version] = true
			}
		})
	}
	// The golden tables must keep covering every version.
	for v := uint32(1); v <= 5; v++ {
		if !versions[v] {
			t.Errorf("no golden table of version %d decoded", v)
		}
	}
}

// checkTable decodes the table at path and compares it with the reader.
// Errors name the table, and disagreements with the specification the
// section and byte offset.
func checkTable(t *testing.T, path string) *table {
	t.Helper()
	name := filepath.Base(path)
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := decode(file)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return nil
	}
	r, err := reader.Open(path, nil)
	if err != nil {
		t.Fatalf("%s: reader: %v", name, err)
	}
	defer r.Close()

	// Full scan.
	var all []entry
	for _, b := range tb.blocks {
		all = append(all, b.entries...)
	}
	it := r.NewIterator()
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if i >= len(all) {
			t.Errorf("%s: the reader's scan goes on past the decoder's %d entries with %q", name, len(all), it.Key())
			break
		}
		if !bytes.Equal(it.Key(), all[i].key) || !bytes.Equal(it.Value(), all[i].value) {
			t.Errorf("%s: entry %d: reader %q = %q, decoder %q = %q", name, i, it.Key(), it.Value(), all[i].key, all[i].value)
		}
		i++
	}
	if err := it.Close(); err != nil {
		t.Errorf("%s: reader's scan: %v", name, err)
	}
	if i < len(all) {
		t.Errorf("%s: the reader's scan ends after %d entries, the decoder's after %d", name, i, len(all))
	}

	// Gets of every key and of keys near them that are absent.
	present := map[string][]byte{}
	for _, e := range all {
		present[string(e.key)] = e.value
	}
	keys := [][]byte{{}, {0}, []byte("fruit/zzz"), []byte("\xff\xff\xff\xff")}
	for _, e := range all {
		k := e.key
		keys = append(keys, k, append(bytes.Clone(k), 0))
		if len(k) > 0 {
			keys = append(keys, k[:len(k)-1], append(bytes.Clone(k[:len(k)-1]), k[len(k)-1]+1))
		}
		if tb.split != nil {
			// An absent key with a present prefix.
			keys = append(keys, append(bytes.Clone(tb.prefix(k)), "\xff\xff\xff\xff"...))
		}
	}
	gets := 0
	for _, k := range keys {
		want, ok := present[string(k)]
		check := func(path string, v []byte, found bool, err error) {
			if err != nil {
				t.Errorf("%s: Get(%q) via the %s: %v", name, k, path, err)
			} else if found != ok || !bytes.Equal(v, want) {
				t.Errorf("%s: Get(%q) via the %s = %q, %v; the scan has %q, %v", name, k, path, v, found, want, ok)
			}
		}
		v, found, err := tb.getByIndex(k)
		check("index", v, found, err)
		if tb.hash != nil {
			v, found, err := tb.getByHash(k)
			check("hash index", v, found, err)
		}
		rv, err := r.Get(k)
		switch {
		case ok && (err != nil || !bytes.Equal(rv, want)):
			t.Errorf("%s: reader's Get(%q) = %q, %v; decoder %q", name, k, rv, err, want)
		case !ok && !errors.Is(err, reader.ErrNotFound):
			t.Errorf("%s: reader's Get(%q) of an absent key = %q, %v", name, k, rv, err)
		}
		// The filters: every one holds a present key, and the reader
		// answers as one of those the specification gives the lookup.
		answers := tb.filterAnswers(k)
		if ok && slices.Contains(answers, false) {
			t.Errorf("%s: a filter rules out %q, which is present (answers %v)", name, k, answers)
		}
		if got := r.MayContain(k); !slices.Contains(answers, got) {
			t.Errorf("%s: reader's MayContain(%q) = %v, the filters say %v", name, k, got, answers)
		}
		gets++
	}

	// Spans: the reader's fragments are the decoder's, and SpanAt finds
	// each at its start and just before its end.
	var frags []fragment
	sit := r.NewSpanIterator()
	for ok := sit.First(); ok; ok = sit.Next() {
		sp := sit.Span()
		frags = append(frags, fragment{sp.Start, sp.End, sp.Values})
	}
	if err := sit.Close(); err != nil {
		t.Errorf("%s: span iterator: %v", name, err)
	}
	if diff := cmp.Diff(tb.spans, frags, cmp.AllowUnexported(fragment{})); diff != "" {
		t.Errorf("%s: span fragments (-decoder +reader):\n%s", name, diff)
	}
	for _, f := range tb.spans {
		if sp, err := r.SpanAt(f.start); err != nil || !bytes.Equal(sp.End, f.end) {
			t.Errorf("%s: SpanAt(%q) = [%q, %q), %v; the decoder's fragment ends at %q", name, f.start, sp.Start, sp.End, err, f.end)
		}
	}

	if diff := cmp.Diff(tb.properties(), r.Properties()); diff != "" {
		t.Errorf("%s: properties (-decoder +reader):\n%s", name, diff)
	}
	t.Logf("%s: %s; %d entries scanned, %d Gets compared", name, tb.summary(), len(all), gets)
	return tb
}

// properties returns the decoded properties as the reader reports them:
// a key left out of the properties block filled in from the data.
func (t *table) properties() format.Properties {
	p := &t.p
	fp := format.Properties{
		FormatVersion:      p.version,
		NumEntries:         p.entries,
		NumDataBlocks:      p.dataBlocks,
		SmallestKey:        p.smallest,
		LargestKey:         p.largest,
		RawKeyBytes:        p.rawKeys,
		RawValueBytes:      p.rawValues,
		DataSize:           p.dataSize,
		IndexSize:          p.indexSize,
		FilterSize:         p.filterSize,
		Compression:        format.Compression(p.compression),
		FilterPolicy:       p.policy,
		FilterBitsPerKey:   float64(p.milliBits) / 1000,
		BlockSize:          p.blockSize,
		RestartInterval:    p.restartInterval,
		MaxBlockSize:       p.maxBlock,
		HashIndexSize:      p.hashSize,
		Splitter:           p.splitter,
		Partitioned:        p.partitioned,
		Dictionary:         p.dictionary,
		SmallestKeyOmitted: p.smallestLen,
		LargestKeyOmitted:  p.largestLen,
		User:               p.user,
		SpanBlockSize:      p.spanSize,
		NumSpans:           p.numSpans,
		NumSpanFragments:   p.numFragments,
		SmallestSpanKey:    p.spanSmallest,
		LargestSpanKey:     p.spanLargest,
	}
	if len(t.spans) > 0 {
		fp.SmallestSpanKey, fp.LargestSpanKey = t.spans[0].start, t.spans[len(t.spans)-1].end
	}
	if p.smallestLen != 0 {
		fp.SmallestKey = t.blocks[0].entries[0].key
	}
	if p.largestLen != 0 {
		last := t.blocks[len(t.blocks)-1]
		fp.LargestKey = last.entries[len(last.entries)-1].key
	}
	return fp
}

// summary names the sections decoded, for the test log.
func (t *table) summary() string {
	var s []string
	s = append(s, fmt.Sprintf("v%d", t.version), "footer", fmt.Sprintf("properties (tags %v)", t.p.tags))
	types := map[byte]int{}
	for _, b := range t.blocks {
		types[b.typ]++
	}
	s = append(s, fmt.Sprintf("%d data blocks (raw %d, snappy %d, zstd %d, minlz %d, zstd with dictionary %d)", len(t.blocks), types[blockRaw], types[blockSnappy], types[blockZstd], types[blockMinLZ], types[blockZstdDict]))
	if t.partitioned {
		s = append(s, fmt.Sprintf("top-level index, %d partitions (filter and index)", len(t.parts)))
	} else {
		s = append(s, "index block", "filter section")
	}
	if x := t.hash; x != nil {
		offs := 8
		if x.flags&flagNarrowOffsets != 0 {
			offs = 4
		}
		h := fmt.Sprintf("hash index (flags %d, %d-byte slots, %d-byte block offsets", x.flags, x.width, offs)
		if len(x.filter) > 0 {
			h += fmt.Sprintf(", whole filter of %d bytes", len(x.filter))
		}
		s = append(s, h+")")
	}
	if t.p.policy != "" {
		s = append(s, "filter "+t.p.policy)
	}
	if t.split != nil {
		s = append(s, "splitter "+t.p.splitter)
	}
	if len(t.spans) > 0 {
		s = append(s, fmt.Sprintf("span block (%d fragments of %d spans)", len(t.spans), t.p.numSpans))
	}
	return strings.Join(slices.Clip(s), ", ")
}
