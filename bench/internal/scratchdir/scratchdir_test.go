package scratchdir

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary runs itself as a child that makes a directory, writes
// a file into it, prints its path and waits to be signalled.
func TestMain(m *testing.M) {
	if parent := os.Getenv("SCRATCHDIR_CHILD"); parent != "" {
		dir, _, err := Make(parent, "child-")
		if err != nil {
			os.Exit(3)
		}
		if err := os.WriteFile(dir+"/table.sst", []byte("x"), 0o644); err != nil {
			os.Exit(4)
		}
		os.Stdout.WriteString(dir + "\n")
		time.Sleep(time.Minute)
		os.Exit(5)
	}
	os.Exit(m.Run())
}

// TestSignalRemovesDir: SIGTERM and SIGINT each remove the child's
// directory, and the child exits with 128 plus the signal's number.
func TestSignalRemovesDir(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		parent := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run", "^$")
		cmd.Env = append(os.Environ(), "SCRATCHDIR_CHILD="+parent)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		dir, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			cmd.Process.Kill()
			t.Fatalf("child printed no directory: %v", err)
		}
		dir = strings.TrimSpace(dir)
		if _, err := os.Stat(dir + "/table.sst"); err != nil {
			cmd.Process.Kill()
			t.Fatalf("child's file: %v", err)
		}
		cmd.Process.Signal(sig)
		err = cmd.Wait()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 128+int(sig) {
			t.Errorf("%v: child ended with %v, want exit status %d", sig, err, 128+int(sig))
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%v: %s still there (%v)", sig, dir, err)
		}
	}
}

// TestRemove: the function Make returns removes the directory
// and forgets it, so that a later removeAll (Exit's) leaves others alone.
func TestRemove(t *testing.T) {
	parent := t.TempDir()
	a, removeA, err := Make(parent, "a-")
	if err != nil {
		t.Fatal(err)
	}
	b, removeB, err := Make(parent, "b-")
	if err != nil {
		t.Fatal(err)
	}
	defer removeB()
	removeA()
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Fatalf("%s still there after its remove: %v", a, err)
	}
	mu.Lock()
	_, listedA := dirs[a]
	_, listedB := dirs[b]
	mu.Unlock()
	if listedA || !listedB {
		t.Fatalf("listed after remove: a %v (want false), b %v (want true)", listedA, listedB)
	}
	removeAll()
	if _, err := os.Stat(b); !os.IsNotExist(err) {
		t.Fatalf("%s still there after removeAll: %v", b, err)
	}
}
