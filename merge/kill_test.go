package merge_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/bulk"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

const killEnv = "MERGE_COMPACT_KILL_DIR"

// writeInputs writes three overlapping tables with a range deletion each
// into dir and returns their paths, newest first.
func writeInputs(t testing.TB, dir string, n int) []string {
	var paths []string
	for ti := range 3 {
		path := filepath.Join(dir, fmt.Sprintf("in%d.sst", ti))
		b, err := builder.Create(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := ti; i < n; i += 1 + ti {
			if err := b.Add(fmt.Appendf(nil, "key%08d", i), fmt.Appendf(nil, "table %d value %d", ti, i)); err != nil {
				t.Fatal(err)
			}
		}
		lo := n / 4 * (ti + 1)
		if err := b.AddSpan(fmt.Appendf(nil, "key%08d", lo), fmt.Appendf(nil, "key%08d", lo+n/100), nil); err != nil {
			t.Fatal(err)
		}
		if err := b.Finish(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

func openAll(t testing.TB, paths []string) ([]merge.Level, func()) {
	var levels []merge.Level
	var rs []*reader.Reader
	for _, p := range paths {
		r, err := reader.Open(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
		levels = append(levels, merge.Tables(r))
	}
	return levels, func() {
		for _, r := range rs {
			r.Close()
		}
	}
}

func fileHash(t *testing.T, path string) [32]byte {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

// TestCompactKilled kills a process midway through a Compact (SIGKILL,
// once several output tables are finished) and checks that the input
// tables are byte for byte as before, and that the output directory
// holds no table and no manifest: only the writer's staging directory,
// which bulk.IsTempDir recognises. The child is this test binary.
func TestCompactKilled(t *testing.T) {
	if dir := os.Getenv(killEnv); dir != "" {
		compactChild(t, dir)
		return
	}
	switch runtime.GOOS {
	case "windows", "plan9", "js", "wasip1", "ios", "android":
		t.Skipf("no child process killed with SIGKILL on %s", runtime.GOOS)
	}
	dir := t.TempDir()
	inputs := writeInputs(t, dir, 100_000)
	var before [][32]byte
	for _, p := range inputs {
		before = append(before, fileHash(t, p))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCompactKilled$", "-test.count=1")
	cmd.Env = append(os.Environ(), killEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case l, ok := <-lines:
		if !ok || !strings.HasPrefix(l, "midway") {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the child said %q, not that it was midway", l)
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the child said nothing in 2 minutes")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range lines {
		}
	}()
	if err := cmd.Wait(); err == nil {
		t.Fatal("the child was not killed")
	}
	for i, p := range inputs {
		if fileHash(t, p) != before[i] {
			t.Errorf("input %s changed", p)
		}
	}
	outDir := filepath.Join(dir, "out")
	ents, err := os.ReadDir(outDir)
	if err != nil {
		t.Fatal(err)
	}
	staged := 0
	for _, e := range ents {
		if !bulk.IsTempDir(e.Name()) {
			t.Errorf("the output directory holds %s after the kill", e.Name())
			continue
		}
		tables, _ := filepath.Glob(filepath.Join(outDir, e.Name(), "*.sst"))
		staged += len(tables)
	}
	if staged < 2 {
		t.Errorf("%d staged tables: the kill did not land midway through the compaction", staged)
	}
	// The inputs still read, and a compaction can run again there.
	levels, done := openAll(t, inputs)
	defer done()
	if _, err := merge.Compact(levels, &merge.CompactOptions{Dir: outDir, TargetTableSize: 64 << 10}); err != nil {
		t.Fatalf("a compaction beside the killed one's staging directory: %v", err)
	}
}

// compactChild compacts the inputs in dir into dir/out with small
// output tables; once a few thousand entries past the third table it
// says "midway" and waits to be killed.
func compactChild(t *testing.T, dir string) {
	paths, _ := filepath.Glob(filepath.Join(dir, "in*.sst"))
	levels, done := openAll(t, paths)
	defer done()
	n := 0
	_, err := merge.Compact(levels, &merge.CompactOptions{
		Dir:             filepath.Join(dir, "out"),
		TargetTableSize: 64 << 10,
		Drop: func(key, value []byte) bool {
			if n++; n == 40_000 {
				fmt.Println("midway")
				time.Sleep(time.Hour)
			}
			return bytes.HasPrefix(value, []byte("never"))
		},
	})
	t.Fatalf("the compaction ended (%v) before the kill", err)
}
