//go:build unix

package diskcache

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Child processes of the tests below: the test binary runs itself with
// DISKCACHE_CHILD set to the child's role.
func TestMain(m *testing.M) {
	switch os.Getenv("DISKCACHE_CHILD") {
	case "":
		os.Exit(m.Run())
	case "fill":
		os.Exit(childFill())
	case "fsize":
		os.Exit(childFsize())
	default:
		fmt.Fprintln(os.Stderr, "unknown DISKCACHE_CHILD")
		os.Exit(2)
	}
}

// The object the children and their parents read: 48 chunks and a bit,
// through a cache of 16 chunks, so that the children keep writing and
// evicting.
const (
	childObjSize  = 48*ChunkSize + 777
	childCapacity = 16 * (ChunkSize + blockSize)
	childKey      = "bucket/child.sst"
)

// childFill reads random ranges of the object through the cache in
// $DISKCACHE_DIR forever, checking each, and writes a line to stdout
// after each: its parent kills it with SIGKILL after some of them.
func childFill() int {
	obj := object(42, childObjSize)
	c, err := Open(os.Getenv("DISKCACHE_DIR"), &Options{Capacity: childCapacity})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	seed, _ := strconv.ParseUint(os.Getenv("DISKCACHE_SEED"), 10, 64)
	rng := rand.New(rand.NewPCG(seed, 1))
	ra := c.ReaderAt(childKey, childObjSize, &source{b: obj})
	w := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		off := rng.Int64N(childObjSize)
		p := make([]byte, 1+rng.IntN(4*ChunkSize))
		n, err := ra.ReadAt(p, off)
		if err != nil && err != io.EOF || !bytes.Equal(p[:n], obj[off:off+int64(n)]) {
			fmt.Fprintf(os.Stderr, "read %d: %d bytes at %d: %d, %v\n", i, len(p), off, n, err)
			return 3
		}
		fmt.Fprintln(w, i)
		w.Flush()
	}
}

// TestKilledWhileFilling kills a process filling the cache with SIGKILL
// at a random point, 20 times, each followed by an Open of the directory
// and a read of the whole object, checked: no wrong byte, no failed read,
// no temporary file left, the directory within its capacity. At least
// one kill must land mid-write, leaving a temporary file for Open to
// remove: if none of the 20 does, more rounds kill the child sooner (after
// 1 to 3 reads and a pause under a millisecond) until one does, and the
// test fails if none has after maxCutRounds of them.
func TestKilledWhileFilling(t *testing.T) {
	if raceEnabled {
		t.Skip("child processes built with -race take minutes; the run without -race covers it")
	}
	const maxCutRounds = 100
	dir := t.TempDir()
	obj := object(42, childObjSize)
	rng := rand.New(rand.NewPCG(20, 20))
	var served, fetched int64
	cuts, leftTemps := 0, 0 // kills that left temporary files (writes cut short), and the files
	// kill runs a child, kills it after it reports lines reads and then
	// pause, and checks the directory after an Open.
	kill := func(round, lines int, pause time.Duration) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "DISKCACHE_CHILD=fill", "DISKCACHE_DIR="+dir, fmt.Sprint("DISKCACHE_SEED=", round))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		for range lines {
			if !sc.Scan() {
				cmd.Wait()
				t.Fatalf("round %d: the child ended: %s", round, stderr.String())
			}
		}
		if pause > 0 {
			time.Sleep(pause)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if _, temps := diskBytes(t, dir); temps > 0 {
			cuts++
			leftTemps += temps
		}

		c := mustOpen(t, dir, childCapacity)
		if _, temps := diskBytes(t, dir); temps != 0 {
			t.Fatalf("round %d: %d temporary files after Open", round, temps)
		}
		before := c.Stats().Chunks
		src := &source{b: obj}
		ra := c.ReaderAt(childKey, childObjSize, src)
		for off := int64(0); off < childObjSize; {
			n := 1 + rng.IntN(2*ChunkSize)
			p := make([]byte, n)
			m, err := ra.ReadAt(p, off)
			if err != nil && !(err == io.EOF && off+int64(m) == childObjSize) || !bytes.Equal(p[:m], obj[off:off+int64(m)]) {
				t.Fatalf("round %d, after %d lines: %d bytes at %d: %d, %v; bytes right %v", round, lines, n, off, m, err, bytes.Equal(p[:m], obj[off:off+int64(m)]))
			}
			off += int64(m)
		}
		st := c.Stats()
		if used, _ := diskBytes(t, dir); used > childCapacity+ChunkSize {
			t.Fatalf("round %d: the directory holds %d bytes, capacity %d", round, used, childCapacity)
		}
		served += st.Hits
		fetched += st.Misses
		t.Logf("round %d: killed after %d reads and %v; %d chunks on reopen, %d hits, %d fetched, %d dropped", round, lines, pause, before, st.Hits, st.Misses, st.Dropped)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	rounds := 20
	for round := range rounds {
		kill(round, 1+rng.IntN(30), 0)
	}
	for ; cuts == 0 && rounds < 20+maxCutRounds; rounds++ {
		kill(rounds, 1+rng.IntN(3), time.Duration(rng.IntN(1000))*time.Microsecond)
	}
	if served == 0 {
		t.Fatal("no chunk was ever served from disk after a kill")
	}
	if cuts == 0 {
		t.Fatalf("none of %d kills landed mid-write (no temporary file left): the test did not exercise a torn write", rounds)
	}
	t.Logf("%d of the %d kills left %d temporary files (writes cut short); every Open removed them", cuts, rounds, leftTemps)
}

// childFsize reads the object twice through a cache in $DISKCACHE_DIR
// with the file size limit (RLIMIT_FSIZE) below a chunk file's size, so
// that every full chunk's write fails (EFBIG), as on a full disk, and
// prints the Stats as JSON; exit status 3 on a wrong read.
func childFsize() int {
	signal.Ignore(syscall.SIGXFSZ)
	c, err := Open(os.Getenv("DISKCACHE_DIR"), &Options{Capacity: childCapacity})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: ChunkSize / 2, Max: ChunkSize / 2}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	obj := object(42, childObjSize)
	ra := c.ReaderAt(childKey, childObjSize, &source{b: obj})
	for pass := range 2 {
		for off := int64(0); off < childObjSize; off += 10000 {
			p := make([]byte, 10000)
			n, err := ra.ReadAt(p, off)
			if err != nil && err != io.EOF || !bytes.Equal(p[:n], obj[off:off+int64(n)]) {
				fmt.Fprintf(os.Stderr, "pass %d: read at %d: %d, %v\n", pass, off, n, err)
				return 3
			}
		}
	}
	json.NewEncoder(os.Stdout).Encode(c.Stats())
	return 0
}

// TestFileSizeLimitDegrades runs childFsize: with every chunk write
// failing, every read is right and counted as a write error, and no
// temporary file is left.
func TestFileSizeLimitDegrades(t *testing.T) {
	if raceEnabled {
		t.Skip("a child process built with -race is slow; the run without -race covers it")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DISKCACHE_CHILD=fsize", "DISKCACHE_DIR="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v: %s", err, stderr.String())
	}
	var st Stats
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("child printed %q: %v", out, err)
	}
	// Every fetch of a full chunk fails to be written, and so every read
	// of one fetches it again; the short last chunk fits the limit.
	if st.WriteErrors == 0 || st.WriteErrors != st.Misses-1 || st.Chunks != 1 || st.SourceBytes < 2*48*ChunkSize {
		t.Fatalf("with writes over the file size limit failing: %+v", st)
	}
	if _, temps := diskBytes(t, dir); temps != 0 {
		t.Fatalf("%d temporary files left", temps)
	}
}

// TestDirectoryRemovedDegrades removes the cache's directory after Open:
// reads come from the source, right, and count as write errors.
func TestDirectoryRemovedDegrades(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	c := mustOpen(t, dir, 1<<20)
	defer c.Close()
	obj := object(9, 5*ChunkSize)
	ra := c.ReaderAt("k", int64(len(obj)), &source{b: obj})
	check(t, ra, obj, 0, ChunkSize)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		check(t, ra, obj, 0, len(obj))
	}
	if st := c.Stats(); st.WriteErrors != 10 || st.Dropped != 1 || st.Chunks != 0 {
		t.Fatalf("with the directory gone: %+v", st)
	}
}
