package reader_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
	"pgregory.net/rapid"
)

// smMaxEntries bounds the model (committed plus pending entries) so that a
// check stays fast, also under the race detector.
const smMaxEntries = 300

// smAlphabet is small so that random keys collide and share prefixes, and
// includes the extreme bytes that separator shortening treats specially.
var smAlphabet = []byte{0x00, 0x01, 'a', 'b', 0xfe, 0xff}

// smLongPrefix is shared by many keys, for long common prefixes across
// block and restart boundaries.
const smLongPrefix = "tenant/0000000042/objects/"

// smEntry is a key/value pair as strings, so that cmp.Diff output is
// readable and nil and empty values compare equal.
type smEntry struct{ Key, Value string }

// smTableMode says how the current reader was opened.
type smTableMode int

const (
	smMemNew  smTableMode = iota // reader.New over a bytes.Reader of the table bytes
	smFileNew                    // reader.New over an *os.File
	smOpen                       // reader.Open (memory-mapped where supported)
)

func (m smTableMode) String() string {
	return [...]string{"New(bytes.Reader)", "New(*os.File)", "Open"}[m]
}

// smMachine is the state of one state-machine run: the model, the entries
// waiting for the next build, and the table and reader under test.
type smMachine struct {
	dir    string // per-check directory for on-disk tables
	parted bool   // build partitioned tables (TestStateMachinePartitioned)

	vals    map[string]string // the model: what the current table holds
	keys    []string          // the model's keys, sorted
	pending map[string]string // added since the last build; not in any table yet

	tables   int    // tables built so far, to name files
	inMemory bool   // the table was built into memory (data) rather than by builder.Create
	data     []byte // the table's bytes (kept for both kinds, to check Size)
	path     string // the table's file: built by Create, or data spilled to disk for Open
	opts     builder.Options
	ropts    reader.Options // the reader's options: filter policies and block cache budget
	known    bool           // the reader knows the table's filter policy
	split    *smSplitter    // the table's splitter; nil for none
	splitOK  bool           // the reader knows the splitter (or there is none)
	user     map[string][]byte

	r    *reader.Reader
	mode smTableMode
	file *os.File // the file under reader.New in mode smFileNew
}

// TestStateMachine drives builder and reader through random sequences of
// adds, builds (with random options, format version 1 or 2, in memory or on
// disk), reopens through the other open path, lookups, filter probes, seeks
// and scans, checking every answer against a sorted-map model. The reader
// options are random too: the block cache on, off or tiny, and the filter
// policy built in, registered or unknown to the reader.
func TestStateMachine(t *testing.T) { runStateMachine(t, false) }

// TestStateMachinePartitioned is TestStateMachine with every table built
// partitioned (format version 3 unless it is empty or has a filter other
// than Bloom; with a hash index, and a splitter, in some of them), in
// partitions down to one data block, with zstd among the compressions and
// reader.Open with NoMmap among the ways to open.
func TestStateMachinePartitioned(t *testing.T) { runStateMachine(t, true) }

func runStateMachine(t *testing.T, parted bool) {
	rapid.Check(t, func(t *rapid.T) {
		dir, err := os.MkdirTemp("", "sstable-statemachine-")
		if err != nil {
			t.Fatalf("MkdirTemp: %v", err)
		}
		m := &smMachine{dir: dir, vals: map[string]string{}, pending: map[string]string{}, parted: parted}
		t.Cleanup(func() {
			m.closeReader(t)
			os.RemoveAll(dir)
		})
		t.Repeat(map[string]func(*rapid.T){
			"":           m.check,
			"add":        m.add,
			"build":      m.build,
			"reopen":     m.reopen,
			"get":        m.get,
			"maycontain": m.mayContain,
			"seekge":     m.seekGE,
			"iterate":    m.iterate,
			"verify":     m.verify,
			"seeklt":     m.seekLT,
			"seekprefix": m.seekPrefix,
			"bounded":    m.bounded,
			"setbounds":  m.setBounds,
		})
	})
}

// check is the invariant: an open reader's properties describe the model.
func (m *smMachine) check(t *rapid.T) {
	if m.r == nil {
		return
	}
	p := m.r.Properties()
	if p.NumEntries != uint64(len(m.keys)) {
		t.Fatalf("Properties().NumEntries = %d, model has %d entries", p.NumEntries, len(m.keys))
	}
	var smallest, largest string
	if len(m.keys) > 0 {
		smallest, largest = m.keys[0], m.keys[len(m.keys)-1]
	}
	if string(p.SmallestKey) != smallest || string(p.LargestKey) != largest {
		t.Fatalf("Properties() smallest/largest = %q/%q, model %q/%q", p.SmallestKey, p.LargestKey, smallest, largest)
	}
	if m.r.Size() != int64(len(m.data)) {
		t.Fatalf("Size() = %d, table has %d bytes", m.r.Size(), len(m.data))
	}
	wantVersion := wantVersion(&m.opts, len(m.keys))
	wantParted := wantVersion == format.Version4 && wantPartitioned(&m.opts, len(m.keys))
	if p.FormatVersion != wantVersion || m.r.Footer().Version != wantVersion || (p.HashIndexSize != 0) != wantHashIndex(&m.opts) || p.Partitioned != wantParted {
		t.Fatalf("table built with hash index %v, format version %d, partition threshold %d: format version %d (want %d), footer version %d, hash index size %d, partitioned %v (want %v)",
			m.opts.HashIndex, m.opts.FormatVersion, m.opts.PartitionThreshold, p.FormatVersion, wantVersion, m.r.Footer().Version, p.HashIndexSize, p.Partitioned, wantParted)
	}
	if m.r.FilterKnown() != (m.known && m.splitOK) || p.FilterUnknown == m.known || p.SplitterUnknown == m.splitOK {
		t.Fatalf("policy %q: FilterKnown() = %v, FilterUnknown = %v; the reader should know it: %v", p.FilterPolicy, m.r.FilterKnown(), p.FilterUnknown, m.known)
	}
	if len(m.user) == 0 && p.User != nil || len(m.user) > 0 && !reflect.DeepEqual(p.User, m.user) {
		t.Fatalf("user properties %q, set %q", p.User, m.user)
	}
	if mmapSupported && m.r.Mapped() != (m.mode == smOpen && !m.ropts.NoMmap) {
		t.Fatalf("Mapped() = %v for a reader opened by %v", m.r.Mapped(), m.mode)
	}
}

func (m *smMachine) needReader(t *rapid.T) {
	if m.r == nil {
		t.Skip("no table built yet")
	}
}

// smKey draws a key: sometimes empty, often short over smAlphabet, often
// sharing a long prefix with other keys (smLongPrefix, or an existing key
// extended or cut), sometimes arbitrary bytes, and sometimes a key longer
// than the properties block holds (format.MaxPropertiesKeyLen), which the
// reader takes from the data when it is the smallest or largest.
func smKey(t *rapid.T, existing []string, label string) string {
	short := func(max int) string {
		return string(rapid.SliceOfN(rapid.SampledFrom(smAlphabet), 0, max).Draw(t, label+"Suffix"))
	}
	switch rapid.IntRange(0, 10).Draw(t, label+"Kind") {
	case 0:
		return ""
	case 1, 2:
		return short(5)
	case 3, 4:
		return smLongPrefix + short(3)
	case 5, 6, 7:
		if len(existing) == 0 {
			return short(3)
		}
		k := rapid.SampledFrom(existing).Draw(t, label+"Base")
		if rapid.Bool().Draw(t, label+"Cut") && len(k) > 0 {
			k = k[:rapid.IntRange(0, len(k)-1).Draw(t, label+"CutAt")]
		}
		return k + short(3)
	case 10:
		return strings.Repeat(smLongPrefix, format.MaxPropertiesKeyLen/len(smLongPrefix)+1) + short(3)
	default:
		return string(rapid.SliceOfN(rapid.Byte(), 0, 12).Draw(t, label+"Bytes"))
	}
}

// smValue draws a value: empty, small, medium (larger than small blocks)
// or larger than the largest block size, compressible or not.
func smValue(t *rapid.T) string {
	var n int
	switch rapid.IntRange(0, 11).Draw(t, "valueKind") {
	case 0, 1:
		return ""
	case 2:
		n = rapid.IntRange(4097, 5000).Draw(t, "largeLen")
	case 3, 4:
		n = rapid.IntRange(17, 600).Draw(t, "mediumLen")
	default:
		n = rapid.IntRange(1, 24).Draw(t, "smallLen")
	}
	seed := rapid.Uint64().Draw(t, "valueSeed")
	b := make([]byte, n)
	rng := rand.New(rand.NewPCG(seed, 7))
	if rapid.Bool().Draw(t, "compressible") {
		pat := []byte(strconv.FormatUint(seed%1000, 36))
		for i := range b {
			b[i] = pat[i%len(pat)]
		}
	} else {
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
	}
	return string(b)
}

// add stages 1..20 new entries for the next build.
func (m *smMachine) add(t *rapid.T) {
	if len(m.keys)+len(m.pending) >= smMaxEntries {
		t.Skip("model is full")
	}
	n := rapid.IntRange(1, min(20, smMaxEntries-len(m.keys)-len(m.pending))).Draw(t, "addCount")
	for range n {
		// Short keys collide often: extend a taken key with zero bytes
		// until it is new, which also makes keys sharing long prefixes.
		k := smKey(t, m.keys, "addKey")
		for m.has(k) {
			k += "\x00"
		}
		m.pending[k] = smValue(t)
	}
}

// has reports whether k is in the model or pending.
func (m *smMachine) has(k string) bool {
	_, inModel := m.vals[k]
	_, inPending := m.pending[k]
	return inModel || inPending
}

// closeReader closes the current reader and the file under it, if any.
func (m *smMachine) closeReader(t *rapid.T) {
	if m.r != nil {
		if err := m.r.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		m.r = nil
	}
	if m.file != nil {
		if err := m.file.Close(); err != nil {
			t.Fatalf("closing %s: %v", m.file.Name(), err)
		}
		m.file = nil
	}
}

// build writes the model plus the pending entries into a new table with
// random options, in memory or on disk, and opens it.
func (m *smMachine) build(t *rapid.T) {
	for k, v := range m.pending {
		m.vals[k] = v
		m.keys = append(m.keys, k)
	}
	clear(m.pending)
	sort.Strings(m.keys)

	var policy filterblock.Policy
	m.ropts = *drawCacheOpts(t)
	// Cleanups run last-registered first: close the reader before the
	// drawn cache's cleanup checks that no reader still uses it.
	t.Cleanup(func() { m.closeReader(t) })
	m.known = true
	kind := rapid.IntRange(0, 4).Draw(t, "filterKind")
	if m.parted && kind > 2 && rapid.Bool().Draw(t, "bloomAfterAll") {
		kind = 0 // mostly partitioned tables
	}
	switch kind {
	case 0:
		policy = filterblock.Bloom(float64(rapid.IntRange(1, 20).Draw(t, "bloomBits")))
	case 1:
		policy = filterblock.LevelDBBloom(rapid.IntRange(1, 20).Draw(t, "levelDBBits"))
	case 2:
		policy = filterblock.BloomFPR(rapid.Float64Range(0.001, 0.2).Draw(t, "fpr"))
	case 3: // registered with the reader
		p := &bitmapPolicy{}
		policy = p
		m.ropts.Filters = []filterblock.Policy{p}
	default: // unknown to the reader: read as if there were no filter
		policy = &bitmapPolicy{}
		m.known = false
	}
	m.opts = builder.Options{
		BlockSize:       rapid.IntRange(16, 4096).Draw(t, "blockSize"),
		RestartInterval: rapid.IntRange(1, 32).Draw(t, "restartInterval"),
		Compression:     drawCompression(t, m.parted),
		Filter:          policy,
		HashIndex:       rapid.Bool().Draw(t, "hashIndex"),
	}
	m.opts.DictionarySize = drawDictionary(t, m.opts.Compression)
	drawFormatVersion(t, &m.opts)
	if m.parted {
		drawPartitioning(t, &m.opts)
		m.ropts.NoMmap = rapid.IntRange(0, 3).Draw(t, "noMmap") == 0
	}
	// A splitter keeping the first n bytes meets the contract of
	// format.Splitter for any keys; registered with the reader or not.
	m.split, m.splitOK = nil, true
	if n := rapid.IntRange(0, 3).Draw(t, "splitBytes"); n > 0 {
		m.split = &smSplitter{n}
		m.opts.Splitter = m.split
		if m.splitOK = rapid.Bool().Draw(t, "splitterKnown"); m.splitOK {
			m.ropts.Splitters = []format.Splitter{m.split}
		}
	}
	m.user = rapid.MapOfN(rapid.StringN(1, 6, -1), rapid.SliceOfN(rapid.Byte(), 0, 8), 0, 4).Draw(t, "userProperties")

	m.closeReader(t)
	if m.path != "" {
		if err := os.Remove(m.path); err != nil {
			t.Fatalf("removing the previous table: %v", err)
		}
		m.path = ""
	}
	m.tables++
	m.inMemory = rapid.Bool().Draw(t, "inMemory")
	var b *builder.Builder
	var buf bytes.Buffer
	if m.inMemory {
		b = builder.New(&buf, &m.opts)
	} else {
		m.path = filepath.Join(m.dir, fmt.Sprintf("%06d.sst", m.tables))
		var err error
		if b, err = builder.Create(m.path, &m.opts); err != nil {
			t.Fatalf("Create: %v", err)
		}
	}
	for _, k := range m.keys {
		if err := b.Add([]byte(k), []byte(m.vals[k])); err != nil {
			t.Fatalf("Add(%q): %v", k, err)
		}
	}
	for k, v := range m.user {
		if err := b.SetUserProperty(k, v); err != nil {
			t.Fatalf("SetUserProperty(%q): %v", k, err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if m.inMemory {
		m.data = buf.Bytes()
	} else {
		var err error
		if m.data, err = os.ReadFile(m.path); err != nil {
			t.Fatalf("reading the table back: %v", err)
		}
	}

	mode := smMemNew
	if !m.inMemory {
		mode = rapid.SampledFrom([]smTableMode{smOpen, smFileNew}).Draw(t, "openMode")
	}
	m.open(t, mode)

	p := m.r.Properties()
	if p.FilterPolicy != policy.Name() || p.Compression != m.opts.Compression ||
		p.BlockSize != uint64(m.opts.BlockSize) || p.RestartInterval != uint64(m.opts.RestartInterval) {
		t.Fatalf("properties policy %q, compression %v, block size %d, restart interval %d; built with %q, %v, %d, %d",
			p.FilterPolicy, p.Compression, p.BlockSize, p.RestartInterval,
			policy.Name(), m.opts.Compression, m.opts.BlockSize, m.opts.RestartInterval)
	}
	if m.r.FilterKnown() != (m.known && m.splitOK) {
		t.Fatalf("FilterKnown() = %v for policy %q (known to the reader: %v, splitter known: %v)", m.r.FilterKnown(), p.FilterPolicy, m.known, m.splitOK)
	}
}

// open opens the current table in mode.
func (m *smMachine) open(t *rapid.T, mode smTableMode) {
	var err error
	switch mode {
	case smMemNew:
		m.r, err = reader.New(bytes.NewReader(m.data), int64(len(m.data)), &m.ropts)
	case smFileNew:
		if m.file, err = os.Open(m.path); err != nil {
			t.Fatalf("os.Open: %v", err)
		}
		m.r, err = reader.New(m.file, int64(len(m.data)), &m.ropts)
	case smOpen:
		m.r, err = reader.Open(m.path, &m.ropts)
	}
	if err != nil {
		t.Fatalf("opening table %d by %v: %v", m.tables, mode, err)
	}
	m.mode = mode
}

// reopen closes the reader and opens the table the other way: an on-disk
// table alternates between Open and New over an *os.File, an in-memory
// table between New over its bytes and Open of a copy written to disk.
func (m *smMachine) reopen(t *rapid.T) {
	m.needReader(t)
	m.closeReader(t)
	var mode smTableMode
	switch {
	case m.mode == smOpen && m.inMemory:
		mode = smMemNew
	case m.mode == smOpen:
		mode = smFileNew
	case m.mode == smFileNew:
		mode = smOpen
	default: // smMemNew
		if m.path == "" {
			m.path = filepath.Join(m.dir, fmt.Sprintf("%06d-spilled.sst", m.tables))
			if err := os.WriteFile(m.path, m.data, 0o644); err != nil {
				t.Fatalf("writing the table to disk: %v", err)
			}
		}
		mode = smOpen
	}
	m.open(t, mode)
}

// smAbsentKey draws a key that is not in vals: random, or next to a
// present key.
func smAbsentKey(t *rapid.T, vals map[string]string, keys []string) string {
	var k string
	if len(keys) > 0 && rapid.Bool().Draw(t, "nearPresent") {
		p := rapid.SampledFrom(keys).Draw(t, "nearKey")
		switch rapid.IntRange(0, 3).Draw(t, "nearKind") {
		case 0:
			k = p + "\x00"
		case 1:
			k = p + "\xff"
		case 2:
			if len(p) > 0 {
				k = p[:len(p)-1]
			}
		default:
			if len(p) > 0 && p[len(p)-1] < 0xff {
				k = p[:len(p)-1] + string(p[len(p)-1]+1)
			}
		}
	} else {
		k = smKey(t, keys, "absentKey")
	}
	for {
		if _, ok := vals[k]; !ok {
			return k
		}
		k += "\x00"
	}
}

// get looks up a present key (Get and GetAppend) and an absent one.
func (m *smMachine) get(t *rapid.T) {
	m.needReader(t)
	dst := rapid.SliceOfN(rapid.Byte(), 1, 16).Draw(t, "dst")
	spare := rapid.IntRange(0, 64).Draw(t, "dstSpare")
	mkDst := func() []byte { return append(make([]byte, 0, len(dst)+spare), dst...) }

	if len(m.keys) > 0 {
		k := rapid.SampledFrom(m.keys).Draw(t, "presentKey")
		want := m.vals[k]
		v, err := m.r.Get([]byte(k))
		if err != nil {
			t.Fatalf("Get(%q) of a present key: %v", k, err)
		}
		if v == nil || !bytes.Equal(v, []byte(want)) {
			t.Fatalf("Get(%q) = %s (nil %v), want %s", k, smShort(v), v == nil, smShort([]byte(want)))
		}
		// The value is a copy: scribbling on it changes nothing.
		for i := range v {
			v[i] ^= 0xff
		}
		if v2, err := m.r.Get([]byte(k)); err != nil || !bytes.Equal(v2, []byte(want)) {
			t.Fatalf("Get(%q) after modifying an earlier result = %s, %v; want %s", k, smShort(v2), err, smShort([]byte(want)))
		}
		out, err := m.r.GetAppend(mkDst(), []byte(k))
		if err != nil {
			t.Fatalf("GetAppend(%q, %q): %v", dst, k, err)
		}
		if !bytes.Equal(out, append(slices.Clone(dst), want...)) {
			t.Fatalf("GetAppend(%q, %q) = %s, want the prefix followed by %s", dst, k, smShort(out), smShort([]byte(want)))
		}
	}

	// Several absent keys, since the filter turns most away before the
	// index and data block are searched.
	for range rapid.IntRange(1, 4).Draw(t, "absentCount") {
		k := smAbsentKey(t, m.vals, m.keys)
		if v, err := m.r.Get([]byte(k)); !errors.Is(err, reader.ErrNotFound) {
			t.Fatalf("Get(%q) of an absent key = %s, %v; want ErrNotFound", k, smShort(v), err)
		}
		d := mkDst()
		out, err := m.r.GetAppend(d, []byte(k))
		if !errors.Is(err, reader.ErrNotFound) || !bytes.Equal(out, dst) {
			t.Fatalf("GetAppend(%q, %q) of an absent key = %s, %v; want dst unchanged and ErrNotFound", dst, k, smShort(out), err)
		}
	}
}

// smShort abbreviates long values in failure messages.
func smShort(b []byte) string {
	if len(b) > 40 {
		return fmt.Sprintf("%q... (%d bytes)", b[:40], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// mayContain checks that the filter has no false negatives: every present
// key, and once more a randomly drawn one.
func (m *smMachine) mayContain(t *rapid.T) {
	m.needReader(t)
	for _, k := range m.keys {
		if !m.r.MayContain([]byte(k)) {
			t.Fatalf("MayContain(%q) = false for a present key (policy %q)", k, m.r.Properties().FilterPolicy)
		}
	}
	// An absent key may or may not be reported (always, by a reader that
	// does not know the policy); when the filter rules it out, Get must
	// agree.
	k := smAbsentKey(t, m.vals, m.keys)
	if !m.known && !m.r.MayContain([]byte(k)) {
		t.Fatalf("MayContain(%q) = false, but the reader does not know policy %q", k, m.r.Properties().FilterPolicy)
	}
	if !m.r.MayContain([]byte(k)) {
		if _, err := m.r.Get([]byte(k)); !errors.Is(err, reader.ErrNotFound) {
			t.Fatalf("Get(%q) after MayContain = false: %v; want ErrNotFound", k, err)
		}
	}
}

// smIter is the documented iterator behaviour over the sorted model: a move
// from an unpositioned or exhausted iterator returns false and leaves it so.
// After SeekPrefixGE (inPrefix), Next and Prev stop where they would leave
// the prefix, and leave the iterator exhausted; the other positioning
// methods end prefix iteration mode. Every move stays within the bounds
// (lower inclusive, upper exclusive; nil for none), which SetBounds
// changes, leaving the iterator unpositioned.
type smIter struct {
	t            *rapid.T
	m            *smMachine
	it           *reader.Iterator
	pos          int
	valid        bool
	inPrefix     bool
	prefix       string
	lower, upper *string
}

// inBounds reports whether k lies within the model's bounds.
func (s *smIter) inBounds(k string) bool {
	return (s.lower == nil || k >= *s.lower) && (s.upper == nil || k < *s.upper)
}

// setBounds is SetBounds in the model. It then overwrites the caller's
// slices, which SetBounds must have copied.
func (s *smIter) setBounds(lower, upper []byte) {
	s.lower, s.upper = nil, nil
	if lower != nil {
		l := string(lower)
		s.lower = &l
	}
	if upper != nil {
		u := string(upper)
		s.upper = &u
	}
	op := fmt.Sprintf("SetBounds(%q, %q)", lower, upper)
	s.it.SetBounds(lower, upper)
	for i := range lower {
		lower[i] = 0xff
	}
	for i := range upper {
		upper[i] = 0x00
	}
	s.inPrefix, s.valid = false, false
	s.expect(op, false)
	s.expect("Next after SetBounds", s.it.Next())
	s.expect("Prev after SetBounds", s.it.Prev())
}

func (m *smMachine) newIter(t *rapid.T) *smIter {
	return &smIter{t: t, m: m, it: m.r.NewIterator()}
}

// close closes the iterator, which must not have met an error.
func (s *smIter) close() {
	if err := s.it.Close(); err != nil {
		s.t.Fatalf("Iterator.Close: %v", err)
	}
}

// expect checks the iterator against the model after op returned ok.
func (s *smIter) expect(op string, ok bool) {
	s.t.Helper()
	keys := s.m.keys
	if ok != s.valid || s.it.Valid() != s.valid {
		s.t.Fatalf("%s: returned %v, Valid() = %v; model valid %v at %d of %d", op, ok, s.it.Valid(), s.valid, s.pos, len(keys))
	}
	if err := s.it.Err(); err != nil {
		s.t.Fatalf("%s: Err() = %v", op, err)
	}
	if !s.valid {
		if s.it.Key() != nil || s.it.Value() != nil {
			s.t.Fatalf("%s: unpositioned iterator has Key %q, Value %s", op, s.it.Key(), smShort(s.it.Value()))
		}
		return
	}
	k := keys[s.pos]
	if string(s.it.Key()) != k || string(s.it.Value()) != s.m.vals[k] {
		s.t.Fatalf("%s: at %q = %s, model at %d of %d is %q = %s", op, s.it.Key(), smShort(s.it.Value()), s.pos, len(keys), k, smShort([]byte(s.m.vals[k])))
	}
}

func (s *smIter) first() {
	s.inPrefix = false
	s.pos = 0
	if s.lower != nil {
		s.pos = sort.SearchStrings(s.m.keys, *s.lower)
	}
	s.valid = s.pos < len(s.m.keys) && s.inBounds(s.m.keys[s.pos])
	s.expect("First", s.it.First())
}

func (s *smIter) last() {
	s.inPrefix = false
	s.pos = len(s.m.keys) - 1
	if s.upper != nil {
		s.pos = sort.SearchStrings(s.m.keys, *s.upper) - 1
	}
	s.valid = s.pos >= 0 && s.inBounds(s.m.keys[s.pos])
	s.expect("Last", s.it.Last())
}

func (s *smIter) seekGE(k string) {
	s.inPrefix = false
	s.pos = sort.SearchStrings(s.m.keys, k)
	if s.lower != nil && k < *s.lower {
		s.pos = sort.SearchStrings(s.m.keys, *s.lower)
	}
	s.valid = s.pos < len(s.m.keys) && s.inBounds(s.m.keys[s.pos])
	s.expect("SeekGE("+strconv.Quote(k)+")", s.it.SeekGE([]byte(k)))
}

func (s *smIter) next() {
	if s.valid {
		s.pos++
		s.valid = s.pos < len(s.m.keys) && s.inMode(s.m.keys[s.pos]) && s.inBounds(s.m.keys[s.pos])
	}
	s.expect("Next", s.it.Next())
}

func (s *smIter) prev() {
	if s.valid {
		s.pos--
		s.valid = s.pos >= 0 && s.inMode(s.m.keys[s.pos]) && s.inBounds(s.m.keys[s.pos])
	}
	s.expect("Prev", s.it.Prev())
}

// seekLT is SeekLT in the model, which ends prefix iteration mode.
func (s *smIter) seekLT(k string) {
	s.inPrefix = false
	s.pos = sort.SearchStrings(s.m.keys, k) - 1
	if s.upper != nil && k > *s.upper {
		s.pos = sort.SearchStrings(s.m.keys, *s.upper) - 1
	}
	s.valid = s.pos >= 0 && s.inBounds(s.m.keys[s.pos])
	s.expect("SeekLT("+strconv.Quote(k)+")", s.it.SeekLT([]byte(k)))
}

// inMode reports whether k is within the iterator's mode: any key, or in
// prefix iteration mode a key with the prefix (under the table's splitter
// when the reader knows it, bytes.HasPrefix otherwise).
func (s *smIter) inMode(k string) bool {
	if !s.inPrefix {
		return true
	}
	return s.m.hasPrefix(k, s.prefix)
}

// seekGE seeks to a random key, present, absent or next to a present one,
// then takes random steps each way.
func (m *smMachine) seekGE(t *rapid.T) {
	m.needReader(t)
	var k string
	if len(m.keys) > 0 && rapid.Bool().Draw(t, "seekPresent") {
		k = rapid.SampledFrom(m.keys).Draw(t, "seekKey")
	} else {
		k = smAbsentKey(t, m.vals, m.keys)
	}
	s := m.newIter(t)
	defer s.close()
	s.seekGE(k)
	for _, forward := range rapid.SliceOfN(rapid.Bool(), 0, 40).Draw(t, "seekSteps") {
		if forward {
			s.next()
		} else {
			s.prev()
		}
	}
}

// iterate scans the whole table forwards and backwards, then walks with a
// change of direction midway.
func (m *smMachine) iterate(t *rapid.T) {
	m.needReader(t)
	want := make([]smEntry, len(m.keys))
	for i, k := range m.keys {
		want[i] = smEntry{k, m.vals[k]}
	}

	it := m.r.NewIterator()
	var got []smEntry
	for ok := it.First(); ok; ok = it.Next() {
		got = append(got, smEntry{string(it.Key()), string(it.Value())})
	}
	if err := it.Close(); err != nil {
		t.Fatalf("forward scan: %v", err)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("forward scan (-model +table):\n%s", diff)
	}

	it = m.r.NewIterator()
	got = got[:0]
	for ok := it.Last(); ok; ok = it.Prev() {
		got = append(got, smEntry{string(it.Key()), string(it.Value())})
	}
	if err := it.Close(); err != nil {
		t.Fatalf("backward scan: %v", err)
	}
	slices.Reverse(got)
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("backward scan, reversed (-model +table):\n%s", diff)
	}

	// From one end, k steps in, then j steps back, possibly off the end.
	s := m.newIter(t)
	defer s.close()
	n := len(m.keys)
	k := rapid.IntRange(0, n+1).Draw(t, "walkOut")
	j := rapid.IntRange(0, k+1).Draw(t, "walkBack")
	if rapid.Bool().Draw(t, "walkFromFirst") {
		s.first()
		for range k {
			s.next()
		}
		for range j {
			s.prev()
		}
	} else {
		s.last()
		for range k {
			s.prev()
		}
		for range j {
			s.next()
		}
	}
	// The iterator is reusable: a fresh positioning works after the walk.
	s.first()
	s.last()
}

// verify checks the whole table.
func (m *smMachine) verify(t *rapid.T) {
	m.needReader(t)
	if err := m.r.Verify(); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

// smSplitter keeps the first n bytes of a key as its prefix: fixed-length
// prefixes meet the contract of format.Splitter for any set of keys.
type smSplitter struct{ n int }

func (s *smSplitter) Name() string       { return fmt.Sprintf("test.FirstBytes(%d)", s.n) }
func (s *smSplitter) Split(k []byte) int { return min(s.n, len(k)) }

// prefixOf returns k's prefix under the table's splitter, or k itself.
func (m *smMachine) prefixOf(k string) string {
	if m.split == nil {
		return k
	}
	return k[:m.split.Split([]byte(k))]
}

// smDrawKey draws a present key or an absent one.
func (m *smMachine) drawKey(t *rapid.T, label string) string {
	if len(m.keys) > 0 && rapid.Bool().Draw(t, label+"Present") {
		return rapid.SampledFrom(m.keys).Draw(t, label)
	}
	return smAbsentKey(t, m.vals, m.keys)
}

// seekLT checks SeekLT, then steps back.
func (m *smMachine) seekLT(t *rapid.T) {
	m.needReader(t)
	k := m.drawKey(t, "seekLTKey")
	s := m.newIter(t)
	defer s.close()
	s.seekLT(k)
	for range rapid.IntRange(0, 5).Draw(t, "seekLTSteps") {
		s.prev()
	}
}

// firstWithPrefix returns the model's index of the first key >= k with
// prefix prefix, -1 if none.
func (m *smMachine) firstWithPrefix(k, prefix string) int {
	for i, mk := range m.keys {
		if mk >= k && m.hasPrefix(mk, prefix) {
			return i
		}
	}
	return -1
}

// seekPrefix checks MayContainPrefix and SeekPrefixGE of a present or
// absent key's prefix: the first key >= k with that prefix (under the
// splitter the reader knows; bytes.HasPrefix otherwise).
func (m *smMachine) seekPrefix(t *rapid.T) {
	m.needReader(t)
	k := m.drawKey(t, "seekPrefixKey")
	prefix := m.prefixOf(k)
	want := m.firstWithPrefix(k, prefix)
	if want >= 0 && m.split != nil && !m.r.MayContainPrefix([]byte(prefix)) {
		t.Fatalf("MayContainPrefix(%q) = false, but %q is present", prefix, m.keys[want])
	}
	if m.split == nil && !m.r.MayContainPrefix([]byte(prefix)) {
		t.Fatalf("MayContainPrefix(%q) = false in a table without a splitter", prefix)
	}
	s := m.newIter(t)
	defer s.close()
	s.seekPrefixGE(prefix, k, want)
	// Prefix iteration mode: steps within the prefix, then false; a step
	// that repositions (First, Last, SeekGE, SeekLT) ends the mode, and
	// another SeekPrefixGE starts it again.
	for range rapid.IntRange(0, 12).Draw(t, "prefixSteps") {
		switch rapid.IntRange(-1, 9).Draw(t, "prefixStep") {
		case -1:
			s.seekPrefixLT(m.drawPrefixLT(t, "prefixLT"))
		case 0:
			s.first()
		case 1:
			s.last()
		case 2:
			s.seekGE(m.drawKey(t, "prefixSeekGE"))
		case 3:
			s.seekLT(m.drawKey(t, "prefixSeekLT"))
		case 4:
			k := m.drawKey(t, "prefixAgain")
			prefix := m.prefixOf(k)
			s.seekPrefixGE(prefix, k, m.firstWithPrefix(k, prefix))
		case 5, 6, 7:
			s.next()
		default:
			s.prev()
		}
	}
}

// seekPrefixGE is SeekPrefixGE in the model, want the position of the
// first key >= k with the prefix (-1 for none), ignoring the bounds; it
// starts prefix iteration mode.
func (s *smIter) seekPrefixGE(prefix, k string, want int) {
	s.inPrefix, s.prefix = true, prefix
	if s.lower != nil && want >= 0 && s.m.keys[want] < *s.lower {
		want = s.m.firstWithPrefix(*s.lower, prefix)
	}
	s.pos, s.valid = want, want >= 0 && s.inBounds(s.m.keys[want])
	s.expect("SeekPrefixGE("+strconv.Quote(prefix)+", "+strconv.Quote(k)+")", s.it.SeekPrefixGE([]byte(prefix), []byte(k)))
}

// seekPrefixLT is SeekPrefixLT in the model: the last key < k with the
// prefix, within the bounds; it starts prefix iteration mode.
func (s *smIter) seekPrefixLT(prefix, k string) {
	s.inPrefix, s.prefix = true, prefix
	s.pos, s.valid = -1, false
	for i := len(s.m.keys) - 1; i >= 0; i-- {
		if mk := s.m.keys[i]; mk < k && s.m.hasPrefix(mk, prefix) && s.inBounds(mk) {
			s.pos, s.valid = i, true
			break
		}
	}
	s.expect("SeekPrefixLT("+strconv.Quote(prefix)+", "+strconv.Quote(k)+")", s.it.SeekPrefixLT([]byte(prefix), []byte(k)))
}

// drawPrefixLT draws SeekPrefixLT's arguments: a key's prefix, and as the
// bound the key itself, the key followed by 0xff bytes (above its
// prefix's keys of that length), or another key, which may lie anywhere.
func (m *smMachine) drawPrefixLT(t *rapid.T, label string) (prefix, k string) {
	k = m.drawKey(t, label+"Key")
	prefix = m.prefixOf(k)
	switch rapid.IntRange(0, 2).Draw(t, label+"Bound") {
	case 1:
		k += "\xff\xff\xff"
	case 2:
		k = m.drawKey(t, label+"Bound")
	}
	return prefix, k
}

// hasPrefix reports whether key k has prefix prefix as the reader sees it:
// k begins with prefix and, when the reader knows the table's splitter,
// k's prefix under it is prefix.
func (m *smMachine) hasPrefix(k, prefix string) bool {
	if !strings.HasPrefix(k, prefix) {
		return false
	}
	return m.split == nil || !m.splitOK || m.prefixOf(k) == prefix
}

// setBounds takes one iterator (with bounds from NewIter or not) through
// rounds of SetBounds, each followed by random moves checked against the
// model within the new bounds.
func (m *smMachine) setBounds(t *rapid.T) {
	m.needReader(t)
	lower, upper := m.drawBounds(t, "new")
	s := &smIter{t: t, m: m, it: m.r.NewIter(&reader.IterOptions{LowerBound: lower, UpperBound: upper})}
	defer s.close()
	if lower != nil {
		l := string(lower)
		s.lower = &l
	}
	if upper != nil {
		u := string(upper)
		s.upper = &u
	}
	for round := range rapid.IntRange(1, 4).Draw(t, "boundsRounds") {
		if round > 0 || rapid.Bool().Draw(t, "setFirst") {
			s.setBounds(m.drawBounds(t, "set"))
		}
		for range rapid.IntRange(0, 10).Draw(t, "boundsSteps") {
			switch rapid.IntRange(-1, 9).Draw(t, "boundsStep") {
			case -1:
				s.seekPrefixLT(m.drawPrefixLT(t, "boundsPrefixLT"))
			case 0:
				s.first()
			case 1:
				s.last()
			case 2:
				s.seekGE(m.drawKey(t, "boundsSeekGE"))
			case 3:
				s.seekLT(m.drawKey(t, "boundsSeekLT"))
			case 4:
				k := m.drawKey(t, "boundsPrefix")
				prefix := m.prefixOf(k)
				s.seekPrefixGE(prefix, k, m.firstWithPrefix(k, prefix))
			case 5, 6, 7:
				s.next()
			default:
				s.prev()
			}
		}
	}
}

// drawBounds draws bounds for an iterator: each nil, empty, a present key
// or an absent one, in either order.
func (m *smMachine) drawBounds(t *rapid.T, label string) (lower, upper []byte) {
	draw := func(which string) []byte {
		switch rapid.IntRange(0, 5).Draw(t, label+which+"Kind") {
		case 0, 1:
			return nil
		case 2:
			return []byte{}
		}
		return []byte(m.drawKey(t, label+which))
	}
	return draw("Lower"), draw("Upper")
}

// bounded scans within random bounds both ways and seeks inside them.
func (m *smMachine) bounded(t *rapid.T) {
	m.needReader(t)
	var lower, upper []byte
	if rapid.Bool().Draw(t, "hasLower") {
		lower = []byte(m.drawKey(t, "lower"))
	}
	if rapid.Bool().Draw(t, "hasUpper") {
		upper = []byte(m.drawKey(t, "upper"))
	}
	var want []string
	for _, k := range m.keys {
		if (lower == nil || k >= string(lower)) && (upper == nil || k < string(upper)) {
			want = append(want, k)
		}
	}
	it := m.r.NewIter(&reader.IterOptions{LowerBound: lower, UpperBound: upper})
	defer func() {
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	var got []string
	for ok := it.First(); ok; ok = it.Next() {
		got = append(got, string(it.Key()))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("scan of [%q, %q): %q, want %q", lower, upper, got, want)
	}
	got = got[:0]
	for ok := it.Last(); ok; ok = it.Prev() {
		got = append(got, string(it.Key()))
	}
	slices.Reverse(got)
	if !slices.Equal(got, want) && len(want)+len(got) > 0 {
		t.Fatalf("backward scan of [%q, %q): %q, want %q", lower, upper, got, want)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	k := m.drawKey(t, "boundedSeek")
	i := sort.SearchStrings(want, k)
	if ok := it.SeekGE([]byte(k)); ok != (i < len(want)) || ok && string(it.Key()) != want[i] {
		t.Fatalf("bounded SeekGE(%q) = %v at %q", k, ok, it.Key())
	}
	if ok := it.SeekLT([]byte(k)); ok != (i > 0) || ok && string(it.Key()) != want[i-1] {
		t.Fatalf("bounded SeekLT(%q) = %v at %q", k, ok, it.Key())
	}
}
