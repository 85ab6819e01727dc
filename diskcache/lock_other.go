//go:build !unix

package diskcache

import "os"

// haveFlock tells whether Open refuses a directory another Cache holds.
const haveFlock = false

// lockFile does nothing on systems without flock: two Caches on one
// directory are then not refused, and must not be opened.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }
