package hugemem

import (
	"bytes"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Possible reports whether the kernel may give transparent huge pages
// when asked (MADV_HUGEPAGE): its policy, in
// /sys/kernel/mm/transparent_hugepage/enabled, is not "never".
var Possible = sync.OnceValue(func() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && !bytes.Contains(b, []byte("[never]"))
})

// Advise asks for transparent huge pages in b (on: MADV_HUGEPAGE) or for
// none from now on (MADV_NOHUGEPAGE); pages already huge stay so. b must
// be page-aligned. It reports whether the kernel took the advice.
func Advise(b []byte, on bool) bool {
	advice := unix.MADV_NOHUGEPAGE
	if on {
		advice = unix.MADV_HUGEPAGE
	}
	return unix.Madvise(b, advice) == nil
}
