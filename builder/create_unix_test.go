//go:build unix

package builder_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sstkit/sstable/builder"
)

// TestCreateModeUmask checks that a table's mode is 0644 less the umask,
// as any file the user creates, not 0644 whatever the umask.
func TestCreateModeUmask(t *testing.T) {
	for _, umask := range []int{0o022, 0o077, 0o002} {
		old := syscall.Umask(umask)
		path := filepath.Join(t.TempDir(), "t.sst")
		b, err := builder.Create(path, nil)
		if err == nil {
			if err = b.Add([]byte("k"), []byte("v")); err == nil {
				err = b.Finish()
			}
		}
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := st.Mode().Perm(), fs.FileMode(0o644&^umask); got != want {
			t.Errorf("umask %03o: table mode %v, want %v", umask, got, want)
		}
	}
}
