//go:build unix

package bulk_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sstkit/sstable/bulk"
)

// TestFileModes checks that the manifest gets the tables' mode, 0644 less
// the umask, under several umasks.
func TestFileModes(t *testing.T) {
	for _, umask := range []int{0o022, 0o077, 0o002} {
		dir := t.TempDir()
		old := syscall.Umask(umask)
		w, err := bulk.NewWriter(dir, nil)
		if err == nil {
			w.Add([]byte("k"), []byte("v"))
			_, err = w.Finish()
		}
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		want := fs.FileMode(0o644 &^ umask)
		for _, name := range []string{"000001.sst", bulk.ManifestName} {
			st, err := os.Stat(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != want {
				t.Errorf("umask %03o: %s has mode %v, want %v", umask, name, got, want)
			}
		}
	}
}
