package builder_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// Environment variables that make the test binary, re-executed by a test
// below, run the child half of that test in the given directory.
const (
	crashChildEnv = "GO_SSTABLE_CRASH_CHILD"
	fsizeChildEnv = "GO_SSTABLE_FSIZE_CHILD"
)

// crashEntry writes entry i: a 16-byte key and a 100-byte value that
// snappy cannot shrink much, so the table grows by about 120 bytes per
// entry.
func crashEntry(key, val []byte, i int) ([]byte, []byte) {
	key = fmt.Appendf(key[:0], "key:%012d", i)
	val = val[:0]
	x := uint64(i)*0x9e3779b97f4a7c15 + 1
	for len(val) < 100 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		val = binary.LittleEndian.AppendUint64(val, x)
	}
	return key, val[:100]
}

// startChild re-executes the test binary to run only the test named run,
// with env set to dir. If shell is not empty the binary runs under
// /bin/sh -c shell, which must end by exec'ing "$0" "$@".
func startChild(t *testing.T, run, env, dir, shell string, out *bytes.Buffer) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary: %v", err)
	}
	args := []string{"-test.run=^" + run + "$", "-test.count=1", "-test.v"}
	var cmd *exec.Cmd
	if shell != "" {
		sh, err := exec.LookPath("sh")
		if err != nil {
			t.Skipf("no shell: %v", err)
		}
		cmd = exec.Command(sh, append([]string{"-c", shell, exe}, args...)...)
	} else {
		cmd = exec.Command(exe, args...)
	}
	cmd.Env = append(os.Environ(), env+"="+dir)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// TestCrashMidBuild kills a process in the middle of a Create build, as a
// crash or power cut would: nothing may appear at the target path, and the
// temporary file left behind must be recognisable by IsTempFile, not be
// mistaken for a table, and be removable.
func TestCrashMidBuild(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skipf("needs SIGKILL and re-executing the test binary; not on %s", runtime.GOOS)
	}
	const minSize = 256 << 10 // the temporary file must reach this before the kill
	dir := t.TempDir()
	var out bytes.Buffer
	cmd := startChild(t, "TestCrashMidBuildChild", crashChildEnv, dir, "", &out)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			<-exited
		}
	}()

	// Wait for the temporary file to grow past minSize.
	start := time.Now()
	var temp string
	var size int64
	for temp == "" {
		select {
		case err := <-exited:
			killed = true
			t.Fatalf("the child exited by itself (%v):\n%s", err, out.String())
		case <-time.After(2 * time.Millisecond):
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("no temporary file of %d bytes after %v; directory holds %q", minSize, time.Since(start), dirNames(t, dir))
		}
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if fi, err := e.Info(); err == nil && builder.IsTempFile(e.Name()) && fi.Size() >= minSize {
				temp, size = filepath.Join(dir, e.Name()), fi.Size()
			}
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	killed = true
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child ended with %v, not by SIGKILL:\n%s", err, out.String())
	}
	t.Logf("killed the child %v after start, with a %d-byte temporary file %s", time.Since(start).Round(time.Millisecond), size, filepath.Base(temp))

	// Nothing at the target path.
	target := filepath.Join(dir, "table.sst")
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after the crash, Lstat(%s): %v; want no such file", target, err)
	}
	// Only temporary files, recognised as such, which are not tables.
	names := dirNames(t, dir)
	if len(names) == 0 {
		t.Fatal("the crashed build left no temporary file")
	}
	for _, name := range names {
		if !builder.IsTempFile(name) || !strings.HasPrefix(name, ".table.sst.") {
			t.Errorf("the crashed build left %q, which IsTempFile does not recognise as its temporary file", name)
			continue
		}
		path := filepath.Join(dir, name)
		r, err := reader.Open(path, nil)
		if err == nil {
			r.Close()
			t.Errorf("reader.Open opened the unfinished table %s", name)
		} else if !errors.Is(err, format.ErrCorrupt) {
			t.Errorf("reader.Open(%s): %v; want an error wrapping format.ErrCorrupt", name, err)
		} else {
			t.Logf("reader.Open of the unfinished table: %v", err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := reader.New(bytes.NewReader(data), int64(len(data)), nil); !errors.Is(err, format.ErrCorrupt) {
			if r != nil {
				r.Close()
			}
			t.Errorf("reader.New over the unfinished table: %v; want an error wrapping format.ErrCorrupt", err)
		}
		if err := os.Remove(path); err != nil {
			t.Errorf("removing the temporary file: %v", err)
		}
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Fatalf("after removing the temporary files the directory holds %q", names)
	}
}

// TestCrashMidBuildChild is the child process of TestCrashMidBuild: it
// builds a table in $GO_SSTABLE_CRASH_CHILD until it is killed. Past 4 MiB
// it slows to an entry per millisecond, and it gives up after two minutes
// or when its parent goes away, so a lost child cannot fill the disk.
func TestCrashMidBuildChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("the child half of TestCrashMidBuild")
	}
	const slowAfter = (4 << 20) / 120 // entries
	ppid := os.Getppid()
	deadline := time.Now().Add(2 * time.Minute)
	b, err := builder.Create(filepath.Join(dir, "table.sst"), &builder.Options{BlockSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	var key, val []byte
	for i := 0; ; i++ {
		key, val = crashEntry(key, val, i)
		if err := b.Add(key, val); err != nil {
			t.Fatal(err)
		}
		if i >= slowAfter {
			time.Sleep(time.Millisecond)
		}
		if i%256 == 0 && (os.Getppid() != ppid || time.Now().After(deadline)) {
			b.Abort()
			t.Fatal("not killed in time, or the parent went away")
		}
	}
}

// TestFailedBuildLeavesNothing checks the failures TestCreateAbort and
// TestCreateFailedFinish do not: each happens after the temporary file
// holds data, and none may leave a temporary file or touch the target.
func TestFailedBuildLeavesNothing(t *testing.T) {
	// addUntilFlushed adds entries until the temporary file in dir holds
	// data, and returns the number added.
	addUntilFlushed := func(t *testing.T, b *builder.Builder, dir string) int {
		t.Helper()
		var key, val []byte
		for i := 0; i < 100000; i++ {
			key, val = crashEntry(key, val, i)
			if err := b.Add(key, val); err != nil {
				t.Fatal(err)
			}
			if i%1000 == 999 {
				for _, name := range dirNames(t, dir) {
					if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && builder.IsTempFile(name) && fi.Size() > 0 {
						return i + 1
					}
				}
			}
		}
		t.Fatalf("the temporary file stayed empty; directory holds %q", dirNames(t, dir))
		return 0
	}

	t.Run("key order then Abort", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "table.sst")
		b, err := builder.Create(path, &builder.Options{BlockSize: 256})
		if err != nil {
			t.Fatal(err)
		}
		n := addUntilFlushed(t, b, dir)
		key, val := crashEntry(nil, nil, n/2)
		if err := b.Add(key, val); !errors.Is(err, builder.ErrKeyOrder) {
			t.Fatalf("Add of an earlier key: %v; want ErrKeyOrder", err)
		}
		if err := b.Abort(); err != nil {
			t.Fatal(err)
		}
		if names := dirNames(t, dir); len(names) != 0 {
			t.Fatalf("after Abort the directory holds %q", names)
		}
		if err := b.Finish(); !errors.Is(err, builder.ErrClosed) {
			t.Fatalf("Finish after Abort: %v", err)
		}
		if names := dirNames(t, dir); len(names) != 0 {
			t.Fatalf("after Finish on an aborted builder the directory holds %q", names)
		}
	})

	t.Run("target becomes a directory mid-build", func(t *testing.T) {
		// Tests run as root here, so a read-only directory would not stop
		// the rename; a non-empty directory at the target does.
		dir := t.TempDir()
		path := filepath.Join(dir, "table.sst")
		b, err := builder.Create(path, &builder.Options{BlockSize: 256})
		if err != nil {
			t.Fatal(err)
		}
		addUntilFlushed(t, b, dir)
		if err := os.MkdirAll(filepath.Join(path, "inner"), 0o755); err != nil {
			t.Fatal(err)
		}
		err = b.Finish()
		if err == nil {
			t.Fatal("Finish renamed the table onto a non-empty directory")
		}
		if !strings.Contains(err.Error(), "rename") || !strings.Contains(err.Error(), path) {
			t.Errorf("Finish error %q should say the rename into %s failed", err, path)
		}
		if diff := cmp.Diff([]string{"table.sst"}, dirNames(t, dir)); diff != "" {
			t.Fatalf("directory after the failed Finish (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"inner"}, dirNames(t, path)); diff != "" {
			t.Fatalf("the directory at the target changed (-want +got):\n%s", diff)
		}
	})

	t.Run("write error keeps the old table", func(t *testing.T) {
		// A file size limit (RLIMIT_FSIZE, set by the shell's ulimit -f
		// in a child process) makes a write fail with EFBIG, as a full
		// disk would. The table already at the path must survive intact.
		if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
			t.Skipf("needs ulimit -f; not on %s", runtime.GOOS)
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "table.sst")
		old, err := builder.Create(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := old.Add([]byte("old"), []byte("table")); err != nil {
			t.Fatal(err)
		}
		if err := old.Finish(); err != nil {
			t.Fatal(err)
		}
		oldData, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		// 512 blocks: 256 KiB in dash's 512-byte units, 512 KiB in bash's.
		cmd := startChild(t, "TestFailedBuildWriteErrorChild", fsizeChildEnv, dir, `ulimit -f 512 && exec "$0" "$@"`, &out)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child: %v\n%s", err, out.String())
		}
		if !strings.Contains(out.String(), "--- PASS: TestFailedBuildWriteErrorChild") {
			t.Fatalf("the child did not run the test:\n%s", out.String())
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.Contains(line, "crash_test.go") {
				t.Log(strings.TrimSpace(line))
			}
		}
		if diff := cmp.Diff([]string{"table.sst"}, dirNames(t, dir)); diff != "" {
			t.Fatalf("directory after the failed build (-want +got):\n%s", diff)
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, oldData) {
			t.Fatalf("the old table changed (err %v)", err)
		}
		if diff := cmp.Diff([]pair{{"old", "table"}}, readFile(t, path)); diff != "" {
			t.Fatal(diff)
		}
	})
}

// TestFailedBuildWriteErrorChild is the child process of the "write error"
// case of TestFailedBuildLeavesNothing: under a file size limit it builds
// a table over the one in $GO_SSTABLE_FSIZE_CHILD until a write fails.
func TestFailedBuildWriteErrorChild(t *testing.T) {
	dir := os.Getenv(fsizeChildEnv)
	if dir == "" {
		t.Skip("the child half of TestFailedBuildLeavesNothing")
	}
	path := filepath.Join(dir, "table.sst")
	b, err := builder.Create(path, &builder.Options{BlockSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	var key, val []byte
	var addErr error
	for i := 0; i < (64<<20)/120 && addErr == nil; i++ {
		key, val = crashEntry(key, val, i)
		addErr = b.Add(key, val)
	}
	if addErr == nil {
		b.Abort()
		t.Fatal("64 MiB written without a write error: is the file size limit set?")
	}
	t.Logf("Add: %v", addErr)
	if !errors.Is(addErr, syscall.EFBIG) {
		t.Errorf("Add error %q does not wrap EFBIG", addErr)
	}
	err = b.Finish()
	if err == nil {
		t.Fatal("Finish succeeded after a write error")
	}
	t.Logf("Finish: %v", err)
	if names := dirNames(t, dir); len(names) != 1 || names[0] != "table.sst" {
		t.Fatalf("after the failed build the directory holds %q", names)
	}
}
