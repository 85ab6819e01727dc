package merge_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/bulk"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// TestCompactModel compacts the newest m of n random levels and checks
// that the output, read over the levels left out (or alone, at the
// bottom), reads exactly as the inputs did, and that each TableInfo
// describes its table.
func TestCompactModel(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(rt *rapid.T) {
		s := shape{mvcc: rapid.Bool().Draw(rt, "mvcc")}
		n := rapid.IntRange(1, 4).Draw(rt, "levels")
		var mls []modelLevel
		var levels []merge.Level
		for i := range n {
			ml := drawLevel(rt, s, i, i == 0)
			l, rs := buildLevel(rt, dir, s, ml, true)
			for _, r := range rs {
				defer r.Close()
			}
			mls, levels = append(mls, ml), append(levels, l)
		}
		m := rapid.IntRange(1, n).Draw(rt, "compacted")
		bottom := m == n && rapid.Bool().Draw(rt, "bottom")
		out := filepath.Join(dir, fmt.Sprint("out", caseSeq.Add(1)))
		opts := &merge.CompactOptions{
			Options:         *modelOpts,
			Dir:             out,
			Bottom:          bottom,
			TargetTableSize: []int64{0, 150, 600}[rapid.IntRange(0, 2).Draw(rt, "target")],
			Builder:         &builder.Options{BlockSize: 64},
		}
		infos, err := merge.Compact(levels[:m], opts)
		if err != nil {
			rt.Fatal(err)
		}
		man, err := bulk.ReadManifest(filepath.Join(out, bulk.ManifestName))
		if err != nil {
			rt.Fatal(err)
		}
		if len(man.Tables) != len(infos) {
			rt.Fatalf("manifest lists %d tables, Compact returned %d", len(man.Tables), len(infos))
		}
		var outRs []*reader.Reader
		for i, ti := range infos {
			r := openTable(rt, ti.Path, true)
			defer r.Close()
			outRs = append(outRs, r)
			p := r.Properties()
			st, err := os.Stat(ti.Path)
			if err != nil {
				rt.Fatal(err)
			}
			if ti.Entries != int64(p.NumEntries) || !bytes.Equal(ti.Smallest, p.SmallestKey) || !bytes.Equal(ti.Largest, p.LargestKey) ||
				ti.Size != st.Size() || ti.Spans != int64(p.NumSpanFragments) || man.Tables[i].Path != ti.Path {
				rt.Fatalf("table %d: info %+v, properties %d entries [%q, %q], %d fragments, size %d; manifest %+v", i, ti, p.NumEntries, p.SmallestKey, p.LargestKey, p.NumSpanFragments, st.Size(), man.Tables[i])
			}
			if bottom {
				// Nothing deletes in a bottom compaction's output.
				for k, v := range r.All(&err) {
					if isDel(v) {
						rt.Fatalf("bottom output keeps deletion %q", k)
					}
				}
				si := r.NewSpanIterator()
				for ok := si.First(); ok; ok = si.Next() {
					for _, v := range si.Span().Values {
						if isRangeDel(v) {
							rt.Fatalf("bottom output keeps range deletion %q", si.Span().Start)
						}
					}
				}
				si.Close()
			}
		}
		stack := append([]merge.Level{merge.Tables(outRs...)}, levels[m:]...)
		keys, vals := view(mls)
		it := merge.NewIterator(stack, modelOpts)
		defer it.Close()
		var got, want []string
		for ok := it.First(); ok; ok = it.Next() {
			got = append(got, string(it.Key())+"="+string(it.Value()))
		}
		if err := it.Err(); err != nil {
			rt.Fatal(err)
		}
		for i := range keys {
			want = append(want, keys[i]+"="+vals[i])
		}
		if !slices.Equal(got, want) {
			rt.Fatalf("after compacting %d of %d levels (bottom %v)\n got %q\nwant %q", m, n, bottom, got, want)
		}
		for _, l := range mls {
			for _, k := range l.keys {
				wv, wok := lookup(mls, k)
				v, err := merge.Get(stack, []byte(k), modelOpts)
				if wok != (err == nil) || err != nil && !errors.Is(err, reader.ErrNotFound) || string(v) != wv {
					rt.Fatalf("Get(%q) after compaction = %q, %v; model %q, %v", k, v, err, wv, wok)
				}
			}
		}
	})
}
