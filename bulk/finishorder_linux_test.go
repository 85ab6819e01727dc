//go:build linux

package bulk_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/sstkit/sstable/bulk"
)

// dirEvent is one change inotify reports in a watched directory: a name
// created, moved in, moved out or removed.
type dirEvent struct {
	op   string // "create", "moved_to", "moved_from", "delete"
	name string
}

// watchDir watches dir with inotify (non-blocking) and returns a function
// that stops the watch and returns the changes made in dir since, in the
// order they happened: the kernel queues a directory's events in order,
// so the list shows which name appeared first, as a process killed at any
// point would have left them.
func watchDir(t *testing.T, dir string) (stop func() []dirEvent) {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	const mask = syscall.IN_CREATE | syscall.IN_MOVED_TO | syscall.IN_MOVED_FROM | syscall.IN_DELETE
	if _, err := syscall.InotifyAddWatch(fd, dir, mask); err != nil {
		syscall.Close(fd)
		t.Fatalf("inotify watch of %s: %v", dir, err)
	}
	return func() []dirEvent {
		t.Helper()
		defer syscall.Close(fd)
		var evs []dirEvent
		buf := make([]byte, 64<<10)
		for {
			n, err := syscall.Read(fd, buf)
			if errors.Is(err, syscall.EAGAIN) {
				return evs
			}
			if err != nil {
				t.Fatalf("reading inotify events: %v", err)
			}
			for off := 0; off+syscall.SizeofInotifyEvent <= n; {
				e := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
				name := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(e.Len)]
				off += syscall.SizeofInotifyEvent + int(e.Len)
				if e.Mask&syscall.IN_Q_OVERFLOW != 0 {
					t.Fatal("inotify queue overflow: the order of the events is lost")
				}
				var op string
				switch {
				case e.Mask&syscall.IN_CREATE != 0:
					op = "create"
				case e.Mask&syscall.IN_MOVED_TO != 0:
					op = "moved_to"
				case e.Mask&syscall.IN_MOVED_FROM != 0:
					op = "moved_from"
				case e.Mask&syscall.IN_DELETE != 0:
					op = "delete"
				default:
					continue
				}
				evs = append(evs, dirEvent{op, string(bytes.TrimRight(name, "\x00"))})
			}
		}
	}
}

// TestFinishOrder watches the output directory while Finish (of a
// SortedWriter, as merge.Compact uses, and of a Writer, with runs spilled
// and without) puts its tables in place, and checks that manifest.json
// appears last: after every table it lists is in the directory under its
// final name, after the SortedWriter's staging directory is gone, and
// with nothing in the directory changing after it. A process killed
// before the manifest's rename then leaves no manifest, and one killed
// after it leaves every table: a manifest never lists a table that is not
// there. Each build writes several tables, so that a manifest written
// before any one of them shows.
func TestFinishOrder(t *testing.T) {
	const n = 600
	key := func(i int) []byte { return fmt.Appendf(nil, "key%08d", i) }
	builds := map[string]func(t *testing.T, dir string) (finish func() ([]bulk.TableInfo, error)){
		"sorted": func(t *testing.T, dir string) func() ([]bulk.TableInfo, error) {
			w, err := bulk.NewSortedWriter(dir, &bulk.Options{TargetTableSize: 4 << 10})
			if err != nil {
				t.Fatal(err)
			}
			writeSorted(t, w, 0, n)
			return w.Finish
		},
		"writer": func(t *testing.T, dir string) func() ([]bulk.TableInfo, error) {
			w, err := bulk.NewWriter(dir, &bulk.Options{TargetTableSize: 4 << 10})
			if err != nil {
				t.Fatal(err)
			}
			for i := n - 1; i >= 0; i-- {
				if err := w.Add(key(i), make([]byte, 100)); err != nil {
					t.Fatal(err)
				}
			}
			return w.Finish
		},
		"writer-spilled": func(t *testing.T, dir string) func() ([]bulk.TableInfo, error) {
			w, err := bulk.NewWriter(dir, &bulk.Options{TargetTableSize: 4 << 10, MemoryBudget: 1 << 20, TempDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			for i := 20000 - 1; i >= 0; i-- {
				if err := w.Add(key(i), make([]byte, 100)); err != nil {
					t.Fatal(err)
				}
			}
			return w.Finish
		},
	}
	for name, build := range builds {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			finish := build(t, dir) // the writer has made dir
			stop := watchDir(t, dir)
			before := dirNames(t, dir) // the SortedWriter's staging directory
			tables, err := finish()
			evs := stop()
			if err != nil {
				t.Fatal(err)
			}
			if len(tables) < 3 {
				t.Fatalf("%d tables, want several", len(tables))
			}
			in := map[string]bool{} // names in dir, as the events tell
			stage := ""             // a staging directory present
			for _, name := range before {
				in[name] = true
				if bulk.IsTempDir(name) {
					stage = name
				}
			}
			manifest := -1
			for i, e := range evs {
				switch e.op {
				case "create", "moved_to":
					in[e.name] = true
					if bulk.IsTempDir(e.name) {
						stage = e.name
					}
				default:
					delete(in, e.name)
					if e.name == stage {
						stage = ""
					}
				}
				if e.name != bulk.ManifestName || e.op == "moved_from" || e.op == "delete" {
					continue
				}
				if manifest >= 0 {
					t.Fatalf("manifest.json appeared twice: events %v", evs)
				}
				manifest = i
				var missing []string
				for _, tb := range tables {
					if !in[filepath.Base(tb.Path)] {
						missing = append(missing, filepath.Base(tb.Path))
					}
				}
				if len(missing) > 0 {
					t.Errorf("manifest.json appeared before %d of its %d tables were in place (%s): events %v",
						len(missing), len(tables), strings.Join(missing, " "), evs)
				}
				if stage != "" {
					t.Errorf("manifest.json appeared before the staging directory %s was removed", stage)
				}
			}
			if manifest < 0 {
				t.Fatalf("no manifest.json among the events %v", evs)
			}
			if rest := evs[manifest+1:]; len(rest) > 0 {
				t.Errorf("the directory changed after manifest.json appeared: %v", rest)
			}
			// The events saw what is there.
			var names []string
			for name := range in {
				names = append(names, name)
			}
			slices.Sort(names)
			if got := dirNames(t, dir); !slices.Equal(got, names) {
				t.Errorf("dir holds %q, the events tell %q", got, names)
			}
		})
	}
}
