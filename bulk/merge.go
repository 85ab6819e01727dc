package bulk

import (
	"bytes"
	"errors"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/reader"
)

// mergeCacheSize is the capacity of the cache a merge reads its runs
// through: decoded blocks and read-ahead windows, off the Go heap.
const mergeCacheSize = 48 << 20

// mergeSource is a k-way merge of runs: a binary min-heap of iterators
// ordered by their current key (ties by run number, so equal keys come out
// adjacent and in a fixed order).
type mergeSource struct {
	paths   []string // the runs, for messages
	c       *cache.Cache
	readers []*reader.Reader
	heap    []*runIter
	top     *runIter // popped last: advanced on the next call
	e       error
}

type runIter struct {
	it  *reader.Iterator
	run int
}

func openMerge(paths []string) (*mergeSource, error) {
	c, err := cache.New(mergeCacheSize)
	if err != nil {
		return nil, wrap("merge", err) // cache.New's error says "cache: "
	}
	m := &mergeSource{paths: paths, c: c}
	for i, p := range paths {
		r, err := reader.Open(p, &reader.Options{Cache: m.c, NoMmap: true})
		if err != nil {
			m.close()
			return nil, wrap("run", err) // reader.Open's error names the file
		}
		m.readers = append(m.readers, r)
		it := r.NewIterator()
		if !it.First() {
			err := it.Close()
			if err != nil {
				m.close()
				return nil, wrap("reading run "+p, err)
			}
			continue
		}
		m.heap = append(m.heap, &runIter{it: it, run: i})
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m, nil
}

func (m *mergeSource) less(a, b *runIter) bool {
	if c := bytes.Compare(a.it.Key(), b.it.Key()); c != 0 {
		return c < 0
	}
	return a.run < b.run
}

func (m *mergeSource) down(i int) {
	h := m.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && m.less(h[r], h[l]) {
			j = r
		}
		if !m.less(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// next returns the smallest remaining entry. Its slices are valid until the
// following call.
func (m *mergeSource) next() ([]byte, []byte, bool) {
	if m.e != nil {
		return nil, nil, false
	}
	if m.top != nil {
		// Advance the iterator whose entry was returned last.
		if m.top.it.Next() {
			m.down(0)
		} else {
			err := m.top.it.Close()
			last := len(m.heap) - 1
			m.heap[0] = m.heap[last]
			m.heap[last] = nil
			m.heap = m.heap[:last]
			if len(m.heap) > 0 {
				m.down(0)
			}
			if err != nil {
				m.e = wrap("reading run "+m.paths[m.top.run], err)
				return nil, nil, false
			}
		}
		m.top = nil
	}
	if len(m.heap) == 0 {
		return nil, nil, false
	}
	m.top = m.heap[0]
	return m.top.it.Key(), m.top.it.Value(), true
}

func (m *mergeSource) err() error { return m.e }

// close closes the iterators, the readers and the cache. It may be called
// more than once.
func (m *mergeSource) close() error {
	var errs []error
	for _, h := range m.heap {
		errs = append(errs, h.it.Close())
	}
	m.heap, m.top = nil, nil
	for _, r := range m.readers {
		errs = append(errs, r.Close())
	}
	m.readers = nil
	if m.c != nil {
		errs = append(errs, m.c.Close())
		m.c = nil
	}
	if err := errors.Join(errs...); err != nil {
		return wrap("closing runs", err) // "sstable: " or "cache: " trimmed
	}
	return nil
}

// noFilter is the filter policy of spilled runs: an empty filter, so runs
// carry no filter bits. Readers that do not know its name (none do) read
// runs as unfiltered tables.
type noFilter struct{}

func (noFilter) Name() string                        { return "sstkit.bulk.NoFilter" }
func (noFilter) NewGenerator() filterblock.Generator { return noGenerator{} }
func (noFilter) MayContain(filter, key []byte) bool  { return true }

type noGenerator struct{}

func (noGenerator) Add(key []byte)             {}
func (noGenerator) Generate(dst []byte) []byte { return dst }
