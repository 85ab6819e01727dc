package diskcache

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"pgregory.net/rapid"
)

// TestPropertyReadsMatchSource checks random reads of a few objects
// against their bytes, with random damage to the cache's files and
// restarts of the cache between them: every read returns the source's
// bytes; a chunk whose file was flipped, truncated, removed or replaced
// by another chunk's file is, after a restart, fetched again when read
// whole (and, but for the removed file, counted as dropped). Without a
// restart the damage may go unseen (a kept file descriptor of a removed
// file, a header checked before it was damaged), but the bytes are right.
func TestPropertyReadsMatchSource(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		dir, err := os.MkdirTemp(t.TempDir(), "")
		if err != nil {
			rt.Fatal(err)
		}
		capacity := rapid.Int64Range(MinCapacity, 12*(ChunkSize+blockSize)).Draw(rt, "capacity")
		c, err := Open(dir, &Options{Capacity: capacity})
		if err != nil {
			rt.Fatal(err)
		}
		defer func() { c.Close() }()
		nobj := rapid.IntRange(1, 3).Draw(rt, "objects")
		objs := make([][]byte, nobj)
		srcs := make([]*source, nobj)
		ras := make([]io.ReaderAt, nobj)
		open := func() {
			for i := range objs {
				ras[i] = c.ReaderAt(fmt.Sprint("object/", i), int64(len(objs[i])), srcs[i])
			}
		}
		for i := range objs {
			objs[i] = object(uint64(i+10), rapid.IntRange(1, 6*ChunkSize).Draw(rt, "size"))
			srcs[i] = &source{b: objs[i]}
		}
		open()
		// chunkFile returns the path of chunk ci of object i.
		chunkFile := func(i int, ci int64) string {
			return filepath.Join(dir, ras[i].(*objReader).name(ci))
		}
		rt.Repeat(map[string]func(*rapid.T){
			"read": func(rt *rapid.T) {
				i := rapid.IntRange(0, nobj-1).Draw(rt, "object")
				size := len(objs[i])
				off := rapid.Int64Range(0, int64(size)+10).Draw(rt, "off")
				n := rapid.IntRange(0, 3*ChunkSize).Draw(rt, "n")
				got := make([]byte, n)
				m, err := ras[i].ReadAt(got, off)
				want := make([]byte, n)
				wm, werr := bytes.NewReader(objs[i]).ReadAt(want, off)
				if m != wm || err != werr || !bytes.Equal(got[:m], want[:wm]) {
					rt.Fatalf("object %d: ReadAt(%d bytes at %d) = %d, %v; want %d, %v; bytes equal %v", i, n, off, m, err, wm, werr, bytes.Equal(got[:m], want[:wm]))
				}
			},
			"damage": func(rt *rapid.T) {
				i := rapid.IntRange(0, nobj-1).Draw(rt, "object")
				size := int64(len(objs[i]))
				ci := rapid.Int64Range(0, (size-1)/ChunkSize).Draw(rt, "chunk")
				path := chunkFile(i, ci)
				b, err := os.ReadFile(path)
				if err != nil {
					return // not cached
				}
				how := rapid.IntRange(0, 3).Draw(rt, "how")
				switch how {
				case 0:
					at := rapid.IntRange(0, len(b)-1).Draw(rt, "at")
					b[at] ^= byte(rapid.IntRange(1, 255).Draw(rt, "xor"))
					os.WriteFile(path, b, 0o644)
				case 1:
					os.Truncate(path, rapid.Int64Range(0, int64(len(b))-1).Draw(rt, "length"))
				case 2:
					os.Remove(path)
				case 3: // another chunk's file in its place
					j := rapid.IntRange(0, nobj-1).Draw(rt, "other object")
					cj := rapid.Int64Range(0, int64(len(objs[j])-1)/ChunkSize).Draw(rt, "other chunk")
					if j == i && cj == ci {
						return
					}
					other := encodeChunk(fmt.Sprint("object/", j), int64(len(objs[j])), cj, objs[j][cj*ChunkSize:min((cj+1)*ChunkSize, int64(len(objs[j])))])
					os.WriteFile(path, other, 0o644)
				}
				// intact: the file still holds the chunk (a flip undone by
				// a later one, or in the header's padding, which is never
				// read).
				lo := ci * ChunkSize
				chunk := objs[i][lo:min(lo+ChunkSize, size)]
				enc := encodeChunk(fmt.Sprint("object/", i), size, ci, chunk)
				hl := headerLen(len(fmt.Sprint("object/", i)), int64(len(chunk)))
				d, err := os.ReadFile(path)
				intact := err == nil && len(d) == len(enc) && bytes.Equal(d[:hl], enc[:hl]) && bytes.Equal(d[dataOffset(hl):], enc[dataOffset(hl):])
				restart := rapid.Bool().Draw(rt, "restart")
				if restart {
					if err := c.Close(); err != nil {
						rt.Fatal(err)
					}
					if c, err = Open(dir, &Options{Capacity: capacity}); err != nil {
						rt.Fatal(err)
					}
					open()
				}
				// Read the chunk whole: the bytes are right; after a
				// restart, the damage is found, the chunk dropped and
				// read from the source.
				before, calls := c.Stats().Dropped, srcs[i].calls.Load()
				wantDropped, wantCalls := before+1, calls+1
				c.mu.Lock()
				switch {
				case c.index[filepath.Base(path)] == nil:
					// Removed, or evicted by the Open after the restart
					// (a replacing file may be larger).
					wantDropped = before
				case intact:
					wantDropped, wantCalls = before, calls
				}
				c.mu.Unlock()
				got := make([]byte, min(ChunkSize, size-lo))
				if _, err := ras[i].ReadAt(got, lo); err != nil || !bytes.Equal(got, objs[i][lo:lo+int64(len(got))]) {
					rt.Fatalf("read of damaged chunk %d of object %d: %v, bytes right %v", ci, i, err, bytes.Equal(got, objs[i][lo:lo+int64(len(got))]))
				}
				if restart && (c.Stats().Dropped != wantDropped || srcs[i].calls.Load() != wantCalls) {
					rt.Fatalf("damaged chunk %d of object %d: dropped %d -> %d, source reads %d -> %d; want %d and %d", ci, i, before, c.Stats().Dropped, calls, srcs[i].calls.Load(), wantDropped, wantCalls)
				}
			},
			"restart": func(rt *rapid.T) {
				if err := c.Close(); err != nil {
					rt.Fatal(err)
				}
				if c, err = Open(dir, &Options{Capacity: capacity}); err != nil {
					rt.Fatal(err)
				}
				open()
			},
			"": func(rt *rapid.T) {
				if st := c.Stats(); st.BytesOnDisk > capacity {
					rt.Fatalf("%d bytes charged, capacity %d", st.BytesOnDisk, capacity)
				}
				if used, _ := diskBytes(rt, dir); used > capacity+ChunkSize {
					rt.Fatalf("directory holds %d bytes, capacity %d", used, capacity)
				}
			},
		})
	})
}
