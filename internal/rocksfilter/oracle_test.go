package rocksfilter

// The tests against RocksDB itself (7.8.3, Debian's librocksdb-dev): the
// program testdata/oracle/filteroracle.cc, compiled at test time, hashes
// keys with RocksDB's own hash functions, writes tables with SstFileWriter,
// answers filter queries with RocksDB's own filter reader over the same
// bytes, and answers Gets through a database holding a table, with the
// filter tickers telling whether the filter excluded the key. Without g++
// or RocksDB's headers the tests skip, unless SSTABLE_REQUIRE_ROCKSDB=1 (as
// in CI) makes that a failure.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/oracletest"
)

type oracle struct{ bin string }

var (
	oracleOnce sync.Once
	oracleBin  string
	oracleErr  string
)

// newOracle compiles filteroracle.cc once per test binary, or skips t
// (fails it under SSTABLE_REQUIRE_ROCKSDB=1) when it cannot.
func newOracle(t *testing.T) *oracle {
	t.Helper()
	oracletest.Gate(t, "SSTABLE_REQUIRE_ROCKSDB", "RocksDB 7.8")
	oracleOnce.Do(func() {
		gxx, err := exec.LookPath("g++")
		if err != nil {
			oracleErr = fmt.Sprintf("no g++: %v", err)
			return
		}
		if _, err := os.Stat("/usr/include/rocksdb/sst_file_writer.h"); err != nil {
			oracleErr = fmt.Sprintf("no RocksDB headers: %v", err)
			return
		}
		src, err := filepath.Abs(filepath.Join("testdata", "oracle", "filteroracle.cc"))
		if err != nil {
			oracleErr = err.Error()
			return
		}
		dir, err := os.MkdirTemp("", "rocksfilter-oracle")
		if err != nil {
			oracleErr = err.Error()
			return
		}
		bin := filepath.Join(dir, "filteroracle")
		start := time.Now()
		out, err := exec.Command(gxx, "-O1", "-o", bin, src, "-lrocksdb").CombinedOutput()
		if err != nil {
			oracleErr = fmt.Sprintf("g++ could not build %s against -lrocksdb: %v\n%s", src, err, out)
			return
		}
		oracleBin = bin
		fmt.Fprintf(os.Stderr, "rocksfilter: compiled the RocksDB oracle in %v\n", time.Since(start).Round(time.Millisecond))
	})
	if oracleBin == "" {
		oracletest.Missing(t, "SSTABLE_REQUIRE_ROCKSDB", "RocksDB 7.8", "install g++ and Debian's librocksdb-dev", "%s", oracleErr)
	}
	return &oracle{bin: oracleBin}
}

// TestMain removes the compiled oracle's directory after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if oracleBin != "" {
		os.RemoveAll(filepath.Dir(oracleBin))
	}
	os.Exit(code)
}

// run runs the oracle with keys, hex-encoded one a line, on its standard
// input and returns its standard output.
func (o *oracle) run(t testing.TB, keys [][]byte, args ...string) []byte {
	t.Helper()
	var in bytes.Buffer
	for _, k := range keys {
		in.WriteString(hex.EncodeToString(k))
		in.WriteByte('\n')
	}
	cmd := exec.Command(o.bin, args...)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("filteroracle %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out
}

// tableSpec is a table's filter configuration, as filteroracle takes it.
type tableSpec struct {
	fv     int
	policy string  // bloom or ribbon
	bpk    float64 // bits per key
	prefix string  // none, fixed:N or capped:N
	wkf    bool    // whole_key_filtering
	part   bool    // partitioned filter, two-level index
	mbs    int     // metadata_block_size (0: RocksDB's default, 4096)
}

func (s tableSpec) args() []string {
	b := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	prefix := s.prefix
	if prefix == "" {
		prefix = "none"
	}
	mbs := s.mbs
	if mbs == 0 {
		mbs = 4096
	}
	return []string{strconv.Itoa(s.fv), s.policy, strconv.FormatFloat(s.bpk, 'g', -1, 64), prefix, b(s.wkf), b(s.part), strconv.Itoa(mbs)}
}

func (s tableSpec) String() string {
	name := fmt.Sprintf("fv%d/%s/%g", s.fv, s.policy, s.bpk)
	if s.prefix != "" && s.prefix != "none" {
		name += "/" + s.prefix
	}
	if !s.wkf {
		name += "/nowholekey"
	}
	if s.part {
		name += fmt.Sprintf("/partitioned%d", s.mbs)
	}
	return name
}

// write writes keys (sorted, distinct) into a new table and returns its
// path.
func (o *oracle) write(t *testing.T, spec tableSpec, keys [][]byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.sst")
	o.run(t, keys, append([]string{"write", path}, spec.args()...)...)
	return path
}

// readerAnswers returns RocksDB's own filter reader's answer for each
// probe over the filter bytes contents.
func (o *oracle) readerAnswers(t *testing.T, contents []byte, probes [][]byte) []bool {
	t.Helper()
	path := filepath.Join(t.TempDir(), "filter")
	if err := os.WriteFile(path, contents, 0o644); err != nil {
		t.Fatal(err)
	}
	out := strings.TrimSpace(string(o.run(t, probes, "reader", path)))
	if len(out) != len(probes) {
		t.Fatalf("filteroracle reader answered %d probes, want %d", len(out), len(probes))
	}
	ans := make([]bool, len(probes))
	for i := range out {
		ans[i] = out[i] == '1'
	}
	return ans
}

// getAnswer is what one Get through a RocksDB database told of the
// table's filter.
type getAnswer struct {
	useful, positive, prefixChecked, prefixUseful int
	found                                         bool
}

// getAnswers ingests the table at path into a new database with spec's
// options and Gets each probe.
func (o *oracle) getAnswers(t *testing.T, path string, spec tableSpec, probes [][]byte) []getAnswer {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	out := o.run(t, probes, append([]string{"get", path, dir}, spec.args()...)...)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(probes) == 0 {
		lines = nil
	}
	if len(lines) != len(probes) {
		t.Fatalf("filteroracle get answered %d probes, want %d", len(lines), len(probes))
	}
	ans := make([]getAnswer, len(lines))
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 5 {
			t.Fatalf("filteroracle get: bad line %q", l)
		}
		n := func(s string) int {
			v, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("filteroracle get: bad line %q", l)
			}
			return v
		}
		ans[i] = getAnswer{n(f[0]), n(f[1]), n(f[2]), n(f[3]), f[4] == "y"}
	}
	return ans
}

// table is the little of a RocksDB table (format_version 2 to 5) these
// tests read themselves: the metaindex, the properties, the filter.
type table struct {
	file     []byte
	fv       uint32
	meta     map[string]blockHandle // metaindex: name -> handle
	props    map[string][]byte
	filter   blockHandle // full filter block, or the top-level index of the partitions
	filterOK bool
	part     bool
}

type blockHandle struct{ off, size uint64 }

const rocksMagic = 0x88e241b785f4cff7

// readTable parses the footer, metaindex and properties of the table at
// path. The footer of format_version 2 to 5 is 53 bytes: a checksum type
// byte, the metaindex and index handles (varints) zero-padded to 40
// bytes after the type byte, format_version u32, magic u64.
func readTable(t *testing.T, path string) *table {
	t.Helper()
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(file) < 53 {
		t.Fatalf("%s: %d bytes, too short for a footer", path, len(file))
	}
	foot := file[len(file)-53:]
	if m := binary.LittleEndian.Uint64(foot[45:]); m != rocksMagic {
		t.Fatalf("%s: magic %#x, want %#x", path, m, uint64(rocksMagic))
	}
	tb := &table{file: file, fv: binary.LittleEndian.Uint32(foot[41:]), meta: map[string]blockHandle{}, props: map[string][]byte{}}
	h, n := codec.DecodeHandle(foot[1:41])
	if n <= 0 {
		t.Fatalf("%s: bad metaindex handle", path)
	}
	for name, v := range tb.blockEntries(t, blockHandle{h.Offset, h.Length}) {
		bh, n := codec.DecodeHandle(v)
		if n <= 0 {
			t.Fatalf("%s: metaindex entry %q: bad handle", path, name)
		}
		tb.meta[name] = blockHandle{bh.Offset, bh.Length}
	}
	if ph, ok := tb.meta["rocksdb.properties"]; ok {
		tb.props = tb.blockEntries(t, ph)
	}
	if fh, ok := tb.meta["fullfilter.rocksdb.BuiltinBloomFilter"]; ok {
		tb.filter, tb.filterOK = fh, true
	}
	if fh, ok := tb.meta["partitionedfilter.rocksdb.BuiltinBloomFilter"]; ok {
		tb.filter, tb.filterOK, tb.part = fh, true, true
	}
	return tb
}

// raw returns the contents of an uncompressed block, checking that its
// trailer says so.
func (tb *table) raw(t *testing.T, h blockHandle) []byte {
	t.Helper()
	end := h.off + h.size
	if end+5 > uint64(len(tb.file)) {
		t.Fatalf("block %+v runs past the file's %d bytes", h, len(tb.file))
	}
	if typ := tb.file[end]; typ != 0 {
		t.Fatalf("block %+v has compression type %d, want 0 (none)", h, typ)
	}
	return tb.file[h.off:end]
}

// blockEntries decodes a block of the LevelDB entry format (the metaindex
// and properties blocks).
func (tb *table) blockEntries(t *testing.T, h blockHandle) map[string][]byte {
	t.Helper()
	var it codec.BlockIter
	if err := it.Init("test", int64(h.off), tb.raw(t, h)); err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for ok := it.First(); ok; ok = it.Next() {
		m[string(it.Key())] = append([]byte(nil), it.Value()...)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

func (tb *table) propUint(t *testing.T, name string) uint64 {
	t.Helper()
	v, ok := tb.props[name]
	if !ok {
		t.Fatalf("no property %q", name)
	}
	u, n := binary.Uvarint(v)
	if n <= 0 {
		t.Fatalf("property %q: bad varint %x", name, v)
	}
	return u
}

// partition is one entry of the top-level index of a partitioned filter.
type partition struct {
	key    []byte // separator: user key, or internal key when keySeq
	handle blockHandle
}

// partitions decodes the top-level index of a partitioned filter: an
// index block whose keys are the index partitions' separators and whose
// values are the handles of the filter partitions. From format_version 4
// (rocksdb.index.value.is.delta.encoded) its entries have no value length
// and only an entry at a restart point holds a whole handle; the others
// hold the size change (a zigzag varint), the offset following the
// previous block and its 5-byte trailer.
func (tb *table) partitions(t *testing.T) []partition {
	t.Helper()
	b := tb.raw(t, tb.filter)
	delta := tb.propUint(t, "rocksdb.index.value.is.delta.encoded") != 0
	nr := int(binary.LittleEndian.Uint32(b[len(b)-4:]))
	end := len(b) - 4 - 4*nr
	restart := map[int]bool{}
	for i := 0; i < nr; i++ {
		restart[int(binary.LittleEndian.Uint32(b[end+4*i:]))] = true
	}
	var parts []partition
	var key []byte
	var prev blockHandle
	uv := func(p int) (uint64, int) {
		v, n := binary.Uvarint(b[p:end])
		if n <= 0 {
			t.Fatalf("top-level filter index: bad varint at %d", p)
		}
		return v, p + n
	}
	for p := 0; p < end; {
		at := p
		shared, p1 := uv(p)
		unshared, p2 := uv(p1)
		p = p2
		vlen := uint64(0)
		if !delta {
			vlen, p = uv(p)
		}
		key = append(key[:shared], b[p:p+int(unshared)]...)
		p += int(unshared)
		var h blockHandle
		switch {
		case !delta || restart[at]:
			bh, n := codec.DecodeHandle(b[p:end])
			if n <= 0 {
				t.Fatalf("top-level filter index: bad handle at %d", p)
			}
			h = blockHandle{bh.Offset, bh.Length}
			if !delta {
				n = int(vlen)
			}
			p += n
		default:
			z, n := binary.Uvarint(b[p:end])
			if n <= 0 {
				t.Fatalf("top-level filter index: bad size delta at %d", p)
			}
			p += n
			d := int64(z>>1) ^ -int64(z&1)
			h = blockHandle{prev.off + prev.size + 5, uint64(int64(prev.size) + d)}
		}
		prev = h
		parts = append(parts, partition{key: append([]byte(nil), key...), handle: h})
	}
	return parts
}
