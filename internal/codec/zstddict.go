package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/sstkit/sstable/format"
)

// ZstdDictID is the dictionary ID builders of this package give the
// dictionaries they train: the first ID outside the range RFC 8878
// (section 5) reserves for registered dictionaries. A table holds one
// dictionary, so the ID only has to be non-zero for the frames to name
// it; readers accept any non-zero ID and check that each frame names
// the table's.
const ZstdDictID = 32768

// MinZstdDictSize and MaxZstdDictSize bound the dictionary size a builder
// trains, in bytes (builder.Options.DictionarySize).
const (
	MinZstdDictSize = 256
	MaxZstdDictSize = 256 << 10
)

// TrainZstdDict trains a Zstandard dictionary (RFC 8878 section 5) with
// at most size bytes of content from samples (each sample one data
// block's decoded contents), tuned for encoder level l, with ID
// ZstdDictID. The content is chosen by selectDictContent; the entropy
// tables and repeat offsets are github.com/klauspost/compress/zstd's
// BuildDict's, from encoding about 1 MiB of the samples, evenly spaced,
// with that content. Training is
// deterministic: the same samples give the same dictionary. It returns an
// error when the samples share too little to make one.
func TrainZstdDict(samples [][]byte, size int, l format.CompressionLevel) ([]byte, error) {
	content := selectDictContent(samples, size)
	if len(content) < 8 {
		return nil, errors.New("samples share no content")
	}
	// The entropy tables need statistics, not every sample: an evenly
	// spaced subset of about dictStatsBytes is encoded for them.
	stats, total := samples, 0
	for _, s := range samples {
		total += len(s)
	}
	if total > dictStatsBytes {
		step := (total + dictStatsBytes - 1) / dictStatsBytes
		stats = nil
		for i := 0; i < len(samples); i += step {
			stats = append(stats, samples[i])
		}
	}
	for i, s := range stats {
		if len(s) > dictStatsSample {
			// BuildDict encodes each sample as one zstd block (it panics
			// on samples over 128 KiB, as of v1.20.3).
			if &stats[0] == &samples[0] {
				stats = slices.Clone(stats)
			}
			stats[i] = s[:dictStatsSample]
		}
	}
	return buildDict(content, stats, l)
}

// buildDict is zstd.BuildDict with this package's ID and offsets,
// recovering from a panic of the library as an error.
func buildDict(content []byte, stats [][]byte, l format.CompressionLevel) (d []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("zstd.BuildDict failed: %v", r)
		}
	}()
	d, err = zstd.BuildDict(zstd.BuildDictOptions{
		ID:       ZstdDictID,
		Contents: stats,
		History:  content,
		Offsets:  [3]int{1, 4, 8},
		Level:    zstdLevel(l),
	})
	if err != nil {
		return nil, err
	}
	if _, err := zstd.InspectDictionary(d); err != nil {
		return nil, err
	}
	return d, nil
}

// dictStatsBytes is about how many sample bytes TrainZstdDict encodes for
// the dictionary's entropy tables, in samples of at most dictStatsSample
// bytes (each sample's first bytes).
const (
	dictStatsBytes  = 1 << 20
	dictStatsSample = 64 << 10
)

// Dictionary content selection, after the idea of zstd's COVER trainer
// (Liao, Petri, Moffat, Wirth, "Effective Construction of Relative
// Lempel-Ziv Dictionaries", WWW 2016): every sample is cut into segments
// of dictSegment bytes; a segment's score is, over its distinct 8-byte
// windows not yet covered, the number of other samples holding the same
// window; segments are taken greedily by score (ties to the earlier
// segment), their windows then covered, until size bytes are taken. The
// best segment goes last in the content, nearest the data, where
// offsets are cheapest.
const (
	dictWindow  = 8
	dictSegment = 64
)

type dictCand struct {
	score   int64
	sample  int32
	off     int32
	version int32 // covered windows when scored
}

type dictHeap []dictCand

func (h dictHeap) less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score > h[j].score
	}
	if h[i].sample != h[j].sample {
		return h[i].sample < h[j].sample
	}
	return h[i].off < h[j].off
}

func (h *dictHeap) push(c dictCand) {
	*h = append(*h, c)
	for i := len(*h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		(*h)[i], (*h)[p] = (*h)[p], (*h)[i]
		i = p
	}
}

func (h *dictHeap) pop() dictCand {
	old := *h
	top := old[0]
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h.less(l, m) {
			m = l
		}
		if r < n && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		(*h)[i], (*h)[m] = (*h)[m], (*h)[i]
		i = m
	}
	return top
}

// selectDictContent returns at most size bytes of dictionary content
// chosen from samples (see above). Windows are counted in a table of at
// most 2^21 slots indexed by a multiplicative hash of the window, so that
// memory stays bounded (12 MiB at most) whatever the samples; windows
// sharing a slot share a count, which only blurs the scores.
func selectDictContent(samples [][]byte, size int) []byte {
	windows := 0
	for _, s := range samples {
		windows += max(len(s)-dictWindow+1, 0)
	}
	bits := 12
	for bits < 21 && 1<<bits < 2*windows {
		bits++
	}
	n := make([]uint16, 1<<bits)   // samples holding the slot's windows (saturating)
	last := make([]int32, 1<<bits) // last sample counted in the slot, plus 1
	slot := func(b []byte) uint32 {
		return uint32(binary.LittleEndian.Uint64(b) * 0x9E3779B97F4A7C15 >> (64 - bits))
	}
	for si, s := range samples {
		for i := 0; i+dictWindow <= len(s); i++ {
			h := slot(s[i:])
			if last[h] != int32(si)+1 {
				last[h] = int32(si) + 1
				if n[h] < 0xffff {
					n[h]++
				}
			}
		}
	}
	var seen [dictSegment]uint32
	score := func(seg []byte) int64 {
		var sc int64
		k := 0
	next:
		for i := 0; i+dictWindow <= len(seg); i++ {
			h := slot(seg[i:])
			for _, x := range seen[:k] {
				if x == h {
					continue next
				}
			}
			seen[k] = h
			k++
			sc += int64(n[h]) - 1 // other samples holding it; 0 once covered
		}
		return sc
	}
	var h dictHeap
	for si, s := range samples {
		for off := 0; off+dictWindow <= len(s); off += dictSegment {
			seg := s[off:min(off+dictSegment, len(s))]
			if sc := score(seg); sc > 0 {
				h.push(dictCand{score: sc, sample: int32(si), off: int32(off)})
			}
		}
	}
	var picked [][]byte
	total, version := 0, int32(0)
	for len(h) > 0 && total < size {
		c := h.pop()
		s := samples[c.sample]
		seg := s[c.off:min(int(c.off)+dictSegment, len(s))]
		if c.version != version {
			// Rescore against the windows covered since; take it only if
			// it still beats the next candidate.
			c.score, c.version = score(seg), version
			if c.score <= 0 {
				continue
			}
			if len(h) > 0 && (dictHeap{c, h[0]}).less(1, 0) {
				h.push(c)
				continue
			}
		}
		if len(seg) > size-total {
			seg = seg[:size-total]
		}
		picked = append(picked, seg)
		total += len(seg)
		for i := 0; i+dictWindow <= len(seg); i++ {
			if x := slot(seg[i:]); n[x] > 1 {
				n[x] = 1
			}
		}
		version++
	}
	content := make([]byte, 0, total)
	for i := len(picked) - 1; i >= 0; i-- {
		content = append(content, picked[i]...)
	}
	return content
}

func zstdLevel(l format.CompressionLevel) zstd.EncoderLevel {
	switch l {
	case format.LevelFastest:
		return zstd.SpeedFastest
	case format.LevelBetter:
		return zstd.SpeedBetterCompression
	case format.LevelBest:
		return zstd.SpeedBestCompression
	}
	return zstd.SpeedDefault
}

// ZstdDictEncoder encodes blocks with one dictionary. It is for one
// goroutine (a builder's); Close releases it.
type ZstdDictEncoder struct{ enc *zstd.Encoder }

// NewZstdDictEncoder returns an encoder of frames with dictionary d (as
// TrainZstdDict returns it) at level l: single-segment frames recording
// their content size and d's ID, without a frame checksum.
func NewZstdDictEncoder(d []byte, l format.CompressionLevel) (*ZstdDictEncoder, error) {
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstdLevel(l)),
		zstd.WithEncoderDict(d),
		zstd.WithEncoderCRC(false),
		zstd.WithSingleSegment(true),
		zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	return &ZstdDictEncoder{enc: enc}, nil
}

// Append appends the encoding of src to dst and returns the extended
// slice.
func (e *ZstdDictEncoder) Append(dst, src []byte) []byte { return e.enc.EncodeAll(src, dst) }

// Close releases the encoder's state.
func (e *ZstdDictEncoder) Close() { e.enc.Close() }

// ZstdDict is a table's dictionary as readers use it: checked when made,
// with a decoder made on first use and shared by every goroutine
// (klauspost's Decoder is safe for concurrent DecodeAll calls and pools
// GOMAXPROCS states, so steady-state decoding does not allocate). Close
// releases the decoder.
type ZstdDict struct {
	raw  []byte
	id   uint32
	once sync.Once
	dec  *zstd.Decoder
	err  error
	mu   sync.Mutex // guards closed against a decoder made after Close
	done bool
}

// NewZstdDict checks the header of raw, a table's dictionary (property
// tag 28): the magic number 0xEC30A437 and a non-zero ID, each 4 bytes
// LE (RFC 8878 section 5); the rest is parsed when the decoder is made,
// on first use, and a dictionary that does not parse is reported then.
// Errors wrap ErrCorrupt naming section and off.
func NewZstdDict(section string, off int64, raw []byte) (*ZstdDict, error) {
	if len(raw) < 8 || binary.LittleEndian.Uint32(raw) != zstdDictMagic {
		return nil, format.Corruptf(section, off, "bad zstd dictionary (no dictionary magic number)")
	}
	id := binary.LittleEndian.Uint32(raw[4:])
	if id == 0 {
		return nil, format.Corruptf(section, off, "zstd dictionary with ID 0")
	}
	return &ZstdDict{raw: raw, id: id}, nil
}

// zstdDictMagic starts a Zstandard dictionary (RFC 8878 section 5).
const zstdDictMagic = 0xEC30A437

// ID returns the dictionary's ID.
func (d *ZstdDict) ID() uint32 { return d.id }

func (d *ZstdDict) decoder() (*zstd.Decoder, error) {
	d.once.Do(func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.done {
			d.err = errors.New("dictionary closed")
			return
		}
		d.dec, d.err = newDictDecoder(d.raw)
	})
	return d.dec, d.err
}

// newDictDecoder makes the decoder of dictionary raw, recovering from a
// panic of the dictionary parser as an error: raw is untrusted bytes.
func newDictDecoder(raw []byte) (dec *zstd.Decoder, err error) {
	defer func() {
		if r := recover(); r != nil {
			dec, err = nil, fmt.Errorf("dictionary parser failed: %v", r)
		}
	}()
	dec, err = zstd.NewReader(nil,
		zstd.WithDecoderDicts(raw),
		zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		return nil, fmt.Errorf("bad zstd dictionary (%v)", err)
	}
	return dec, nil
}

// Close releases the decoder, if one was made. Decoding after Close is
// an error.
func (d *ZstdDict) Close() {
	d.mu.Lock()
	d.done = true
	d.mu.Unlock()
	d.once.Do(func() { d.err = errors.New("dictionary closed") })
	if d.dec != nil {
		d.dec.Close()
	}
}

// decodeZstdDict decodes the zstd frame stored, encoded with dictionary
// d and claiming n decoded bytes (n already bounded by the caller), into
// dst's capacity, or a new buffer of exactly n bytes when dst is smaller.
func decodeZstdDict(section string, off int64, stored []byte, n int, dst []byte, d *ZstdDict) ([]byte, error) {
	if d == nil {
		return nil, format.Corruptf(section, off, "zstd dictionary block in a table without a dictionary")
	}
	var h zstd.Header
	if err := h.Decode(stored); err != nil {
		return nil, format.Corruptf(section, off, "bad zstd frame header (%v)", err)
	}
	if h.DictionaryID != d.id {
		return nil, format.Corruptf(section, off, "zstd frame names dictionary %d, the table's is %d", h.DictionaryID, d.id)
	}
	dec, err := d.decoder()
	if err != nil {
		return nil, format.Corruptf(section, off, "zstd dictionary: %v", err)
	}
	if cap(dst) < n {
		dst = make([]byte, 0, n)
	}
	out, err := dec.DecodeAll(stored, dst[:0])
	if err != nil {
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return nil, format.Corruptf(section, off, "zstd block decodes to more than the %d bytes its header claims", n)
		}
		return nil, format.Corruptf(section, off, "bad zstd data (%v)", err)
	}
	if len(out) != n {
		return nil, format.Corruptf(section, off, "zstd block decodes to %d bytes, its header claims %d", len(out), n)
	}
	return out, nil
}
