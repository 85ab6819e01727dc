// Package scratchdir makes the temporary directories the benchmark
// commands build their tables in, and removes them on every way out the
// process can see: a normal return, Exit, and SIGINT or SIGTERM. A run of
// cmd/manytables writes about 10 GB there; before this, a run stopped by a
// signal left its tables behind, and a few such runs filled the disk.
// Nothing can remove them after a SIGKILL.
package scratchdir

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

var (
	mu      sync.Mutex
	dirs    = map[string]bool{}
	watcher sync.Once
)

// Make creates a new directory in parent (os.TempDir() when parent is
// empty), named from pattern as os.MkdirTemp names it, and returns its
// path and a function that removes it with its contents. Until that
// function runs, a SIGINT or SIGTERM to the process removes the directory
// and exits with status 128 plus the signal's number, as a shell reports
// a process the signal killed. Errors are os.MkdirTemp's.
func Make(parent, pattern string) (dir string, remove func(), err error) {
	dir, err = os.MkdirTemp(parent, pattern)
	if err != nil {
		return "", nil, err
	}
	watcher.Do(watch)
	mu.Lock()
	dirs[dir] = true
	mu.Unlock()
	return dir, func() {
		mu.Lock()
		delete(dirs, dir)
		mu.Unlock()
		os.RemoveAll(dir)
	}, nil
}

// Exit removes every directory Make returned and not yet removed, then
// exits with code: for a command's error path, where deferred removals
// would not run.
func Exit(code int) {
	removeAll()
	os.Exit(code)
}

func removeAll() {
	mu.Lock()
	defer mu.Unlock()
	for dir := range dirs {
		os.RemoveAll(dir)
		delete(dirs, dir)
	}
}

func watch() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-ch
		removeAll()
		code := 1
		if s, ok := sig.(syscall.Signal); ok {
			code = 128 + int(s)
		}
		os.Exit(code)
	}()
}
