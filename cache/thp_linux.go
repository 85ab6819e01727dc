package cache

import (
	"bytes"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// thpPossible reports whether the kernel may give the cache transparent
// huge pages when asked (MADV_HUGEPAGE): its policy is not "never".
var thpPossible = sync.OnceValue(func() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && !bytes.Contains(b, []byte("[never]"))
})

// adviseHuge asks for transparent huge pages in b (on) or for none from
// now on (off); pages already huge stay so. It reports success.
func adviseHuge(b []byte, on bool) bool {
	advice := unix.MADV_NOHUGEPAGE
	if on {
		advice = unix.MADV_HUGEPAGE
	}
	return unix.Madvise(b, advice) == nil
}

// populate faults b's pages in for writing (MADV_POPULATE_WRITE, Linux
// 5.14), as the first write to each would.
func populate(b []byte) error { return unix.Madvise(b, unix.MADV_POPULATE_WRITE) }
