package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/bulk"
)

// buildInput is one INPUT of sst build: a directory or a text file.
type buildInput struct {
	path    string
	dir     bool
	entries []buildEntry // entries given directly (tests)
}

// buildConfig is what a build needs besides its inputs.
type buildConfig struct {
	opts     *builder.Options
	memory   int64     // bulk.Options.MemoryBudget
	split    int64     // bulk.Options.TargetTableSize; 0: one table
	progress io.Writer // where the progress line goes; nil: none
	hex      bool      // text inputs are hexkey<TAB>hexvalue lines
	spans    string    // a text file of spans, start<TAB>end<TAB>value lines (hex digits with hex); "": none
}

// forceProgress makes progressWriter return stderr even when it is not a
// terminal (tests).
var forceProgress = false

// progressWriter returns stderr if it is a terminal, else nil.
func progressWriter(stderr io.Writer) io.Writer {
	if forceProgress {
		return stderr
	}
	f, ok := stderr.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return stderr
}

// progressInterval is how often the progress line is redrawn.
var progressInterval = time.Second

// showProgress redraws a progress line on out every progressInterval
// until the returned function is called, which ends the line.
func showProgress(out io.Writer, w *bulk.Writer) (stop func()) {
	if out == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	drawn := false
	draw := func() {
		s := w.Stats()
		line := fmt.Sprintf("sst build: %-8s %d entries, %s read", s.Phase.String()+":", s.Entries, humanBytes(uint64(s.Bytes)))
		if s.Runs > 0 {
			line += fmt.Sprintf(", %d runs", s.Runs)
		}
		if s.Phase == bulk.PhaseMerging {
			line += fmt.Sprintf(", %d written, %d tables", s.Written, s.Tables)
		}
		line += fmt.Sprintf(" (%s)", time.Since(start).Round(time.Second))
		fmt.Fprintf(out, "\r%-100s", line)
		drawn = true
	}
	wg.Go(func() {
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				draw()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		if drawn {
			draw()
			fmt.Fprintln(out)
		}
	}
}

// buildTable writes the entries of inputs into one table at out, through a
// bulk.Writer in a working directory beside out (workdir.go), and renames
// the table to out once it is complete: a failed or interrupted build
// leaves a table already at out as it was.
func buildTable(out string, cfg buildConfig, inputs []buildInput) error {
	parent, name := filepath.Dir(out), filepath.Base(out)
	removeStale(parent, name)
	wd, err := newWorkDir(parent, name)
	if err != nil {
		// The working directory's name means nothing to the user.
		return userPathErr("create", out, err)
	}
	defer wd.remove()
	cfg.split = 0
	tables, err := buildDir(wd.path, []string{out, wd.path}, cfg, inputs)
	if err != nil {
		return err
	}
	if len(tables) == 0 {
		// No entries: an empty table.
		b, err := builder.Create(out, cfg.opts)
		if err != nil {
			return err
		}
		defer b.Abort()
		return b.Finish()
	}
	if err := os.Rename(tables[0].Path, out); err != nil {
		return userPathErr("rename into", out, err)
	}
	if err := syncDir(parent); err != nil {
		return userPathErr("fsync directory", parent, err)
	}
	return nil
}

// buildSplit writes the entries of inputs into tables of about cfg.split
// bytes and a manifest in the directory out, which exists: through a
// bulk.Writer in a working directory inside out, whose tables and manifest
// replace out's earlier build (install) once they are complete, so that a
// failed or interrupted build leaves an earlier build as it was.
func buildSplit(out string, cfg buildConfig, inputs []buildInput) ([]bulk.TableInfo, error) {
	name := filepath.Base(out)
	if abs, err := filepath.Abs(out); err == nil {
		name = filepath.Base(abs) // "." names no directory
	}
	removeStale(out, name)
	wd, err := newWorkDir(out, name)
	if err != nil {
		return nil, userPathErr("create tables in", out, err)
	}
	defer wd.remove()
	tables, err := buildDir(wd.path, []string{out}, cfg, inputs)
	if err != nil {
		return nil, err
	}
	return install(out, wd.path, tables)
}

// install moves a complete build's tables and manifest from the working
// directory work into dir, in place of an earlier build's, and returns the
// tables at their new paths. A reader that goes by the manifest sees, in
// turn: the earlier manifest and tables; no manifest, while the new tables
// are renamed over the old names and the earlier build's other tables are
// removed (a table already open keeps its contents); the new manifest,
// renamed into place last. A reader that read the earlier manifest must
// have opened its tables by then, or check each table it opens against
// the manifest (size, smallest and largest keys). Killed in the middle,
// install leaves dir without
// a manifest, which the next build (with -f) replaces. The directory is
// fsynced between the steps, so that a crash cannot bring the earlier
// manifest back over new tables.
func install(dir, work string, tables []bulk.TableInfo) ([]bulk.TableInfo, error) {
	old, err := buildFiles(dir)
	if err != nil {
		return nil, err
	}
	broken := func(err error) error {
		return fmt.Errorf("replacing the build in %s (it has no manifest now; build it again): %w", dir, err)
	}
	manifest := filepath.Join(dir, bulk.ManifestName)
	if err := removeFile(manifest); err == nil {
		if err := syncDir(dir); err != nil {
			return nil, broken(err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err // nothing changed yet
	}
	installed := make([]bulk.TableInfo, len(tables))
	names := map[string]bool{}
	for i, t := range tables {
		name := filepath.Base(t.Path)
		dst := filepath.Join(dir, name)
		if err := renameFile(t.Path, dst); err != nil {
			return nil, broken(err)
		}
		t.Path = dst
		installed[i] = t
		names[name] = true
	}
	for _, name := range old {
		if name != bulk.ManifestName && !names[name] {
			if err := removeFile(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, broken(err)
			}
		}
	}
	if err := syncDir(dir); err != nil {
		return nil, broken(err)
	}
	if err := renameFile(filepath.Join(work, bulk.ManifestName), manifest); err != nil {
		return nil, broken(err)
	}
	if err := syncDir(dir); err != nil {
		return nil, err
	}
	return installed, nil
}

// renameFile and removeFile are os.Rename and os.Remove as install calls
// them: tests replace them to watch the order of its steps, or to fail
// one.
var renameFile, removeFile = os.Rename, os.Remove

// buildFiles returns the names of a build's files in dir: the manifest,
// first when there is one, and the tables (NNNNNN.sst) in name order.
func buildFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		switch n := e.Name(); {
		case n == bulk.ManifestName:
			names = append([]string{n}, names...)
		case tableName.MatchString(n):
			names = append(names, n)
		}
	}
	return names, nil
}

var tableName = regexp.MustCompile(`^[0-9]{6,}\.sst$`)

// userPathErr reports the failure of op on path, a path the user gave,
// with the cause of err: an error about a working directory or a file in
// it would name a path the user never saw.
func userPathErr(op, path string, err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

// notifySignals relays the signals that interrupt a build to c (tests
// replace it, to send a signal of their own at a point they choose).
var notifySignals = func(c chan<- os.Signal) { signal.Notify(c, os.Interrupt, syscall.SIGTERM) }

// finishWriter finishes the bulk writer of buildDir, while a goroutine
// watches for a signal (tests replace it, to send one before or after).
var finishWriter = (*bulk.Writer).Finish

// buildDir writes the entries of inputs into tables in dir through a
// bulk.Writer, which also writes dir/manifest.json. On any error, or on an
// interrupt signal, it aborts the writer, so that nothing is left behind.
// The files and directories at the paths in skip (the output, the working
// directory) are not read from a directory input.
func buildDir(dir string, skip []string, cfg buildConfig, inputs []buildInput) ([]bulk.TableInfo, error) {
	if os.Getenv("GOMEMLIMIT") == "" {
		// Keep the collector from letting the heap grow to twice the
		// buffer: the buffer is live, and little else is allocated.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(cfg.memory + cfg.memory/4 + 96<<20))
	}
	w, err := bulk.NewWriter(dir, &bulk.Options{Builder: cfg.opts, MemoryBudget: cfg.memory, TargetTableSize: cfg.split})
	if err != nil {
		return nil, err
	}
	sig := make(chan os.Signal, 1)
	notifySignals(sig)
	defer signal.Stop(sig)
	stop := showProgress(cfg.progress, w)
	err = addInputs(w, inputs, cfg.hex, skip, sig)
	if err == nil && cfg.spans != "" {
		err = addSpans(w, cfg.spans, cfg.hex, sig)
	}
	var tables []bulk.TableInfo
	if err == nil {
		// A signal during Finish aborts the writer from another goroutine
		// (bulk.Writer allows that), which Finish then reports. The
		// goroutine sets interrupted after caught, so that a Load that
		// sees it true sees caught too; the build waits for the goroutine
		// to end before it reads them, so that a signal taken as Finish
		// returns is not lost.
		finished, watched := make(chan struct{}), make(chan struct{})
		var interrupted atomic.Bool
		var caught os.Signal
		go func() {
			defer close(watched)
			select {
			case s := <-sig:
				caught = s
				interrupted.Store(true)
				w.Abort()
			case <-finished:
			}
		}()
		tables, err = finishWriter(w)
		close(finished)
		<-watched
		if interrupted.Load() {
			err = fmt.Errorf("interrupted (%v)", caught)
		}
	}
	stop()
	if err != nil {
		w.Abort()
		var de *bulk.DuplicateKeyError
		if errors.As(err, &de) {
			return nil, duplicateError(de.Key, inputs, cfg.hex)
		}
		return nil, err
	}
	return tables, nil
}

// addInputs adds the entries of every input to w, checking sig between
// entries.
func addInputs(w *bulk.Writer, inputs []buildInput, hexInput bool, skip []string, sig <-chan os.Signal) error {
	for _, in := range inputs {
		if in.entries != nil {
			if err := addEntries(w, in.entries, sig); err != nil {
				return err
			}
			continue
		}
		if in.dir {
			entries, err := walkInput(in.path, skip)
			if err != nil {
				return err
			}
			if err := addEntries(w, entries, sig); err != nil {
				return err
			}
			continue
		}
		err := readLines(in.path, hexInput, sig, func(key, value []byte, _ int) error {
			select {
			case s := <-sig:
				return fmt.Errorf("interrupted (%v)", s)
			default:
			}
			return w.Add(key, value)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// addSpans adds the spans of the text file path to w: each line is
// start<TAB>end<TAB>value (value may be empty, its tab too), or with
// hexInput the three as hex digits. Spans may come in any order and
// overlap.
func addSpans(w *bulk.Writer, path string, hexInput bool, sig <-chan os.Signal) error {
	name, form := inputName(path), keyForm{hex: hexInput}
	return readLines(path, false, sig, func(start, rest []byte, line int) error {
		select {
		case s := <-sig:
			return fmt.Errorf("interrupted (%v)", s)
		default:
		}
		if rest == nil {
			// No tab: readLines gives a nil value. Without an end the
			// line is no span at all; say what one is.
			return fmt.Errorf("%s:%d: a -spans line is start<TAB>end<TAB>value (the value may be empty), got %s with no tab", name, line, quoteKey(start))
		}
		end, value, _ := bytes.Cut(rest, []byte("\t"))
		if hexInput {
			fields := [][]byte{start, end, value}
			for i, what := range []string{"start", "end", "value"} {
				d, err := decodeHex(fields[i])
				if err != nil {
					return fmt.Errorf("%s:%d: -hex: bad span %s %s: %v", name, line, what, quoteKey(fields[i]), err)
				}
				fields[i] = d
			}
			start, end, value = fields[0], fields[1], fields[2]
		}
		if bytes.Compare(start, end) >= 0 {
			// Said here, as the line has it: the writer's error names
			// its working directory.
			return fmt.Errorf("%s:%d: span start %s is not below its end %s", name, line, form.show(start), form.show(end))
		}
		if err := w.AddSpan(start, end, value); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		return nil
	})
}

// addEntries adds directory entries, reading each file's value as it goes.
func addEntries(w *bulk.Writer, entries []buildEntry, sig <-chan os.Signal) error {
	var buf []byte
	for i := range entries {
		select {
		case s := <-sig:
			return fmt.Errorf("interrupted (%v)", s)
		default:
		}
		e := &entries[i]
		value := e.value
		if e.path != "" {
			var err error
			if buf, err = readRegular(e.path, buf); err != nil {
				return err
			}
			value = buf
		}
		if err := w.Add(e.key, value); err != nil {
			return err
		}
	}
	return nil
}

// stdin is what an INPUT of "-" reads (tests replace it).
var stdin io.Reader = os.Stdin

// interruptible reads r, but returns an error as soon as a signal comes on
// sig, rather than when r next returns: standard input may be a terminal
// or a pipe with nothing to read for as long as the user likes. The read
// it leaves waiting ends with the process.
type interruptible struct {
	r       io.Reader
	sig     <-chan os.Signal
	pending chan readResult // the result of the read in progress, if any
	rest    []byte          // read but not yet returned
	restErr error           // to return after rest
}

type readResult struct {
	data []byte
	err  error
}

func (in *interruptible) Read(p []byte) (int, error) {
	for {
		if len(in.rest) > 0 || in.restErr != nil {
			n := copy(p, in.rest)
			in.rest = in.rest[n:]
			if len(in.rest) > 0 {
				return n, nil
			}
			err := in.restErr
			in.restErr = nil
			return n, err
		}
		if in.pending == nil {
			in.pending = make(chan readResult, 1)
			buf := make([]byte, max(len(p), 64<<10))
			go func() {
				n, err := in.r.Read(buf)
				in.pending <- readResult{buf[:n], err}
			}()
		}
		select {
		case res := <-in.pending:
			in.pending = nil
			in.rest, in.restErr = res.data, res.err
		case s := <-in.sig:
			return 0, fmt.Errorf("interrupted (%v)", s)
		}
	}
}

// inputName names a text input in messages.
func inputName(path string) string {
	if path == "-" {
		return "standard input"
	}
	return path
}

// readLines calls fn with each "key<TAB>value" line of the text file at
// path ("-": standard input) and its 1-based number, streaming: a line is
// split at its first tab (no tab: an empty value, nil without -hex, which
// addSpans tells from a tab followed by nothing), and a trailing "\n" or
// "\r\n" is stripped. With hexInput, key and value are hex digits, passed
// to fn decoded. The slices are valid only during the call. A signal on sig
// ends a read of standard input that waits for more.
func readLines(path string, hexInput bool, sig <-chan os.Signal, fn func(key, value []byte, line int) error) error {
	var r io.Reader = stdin
	if path == "-" && sig != nil {
		r = &interruptible{r: stdin, sig: sig}
	}
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	br := bufio.NewReaderSize(r, 1<<20)
	var long, dec []byte
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: %w", inputName(path), err)
		}
		if err == io.EOF && len(line) == 0 {
			return nil
		}
		if l, ok := bytes.CutSuffix(line, []byte("\n")); ok {
			line = bytes.TrimSuffix(l, []byte("\r"))
		}
		key, value, _ := bytes.Cut(line, []byte("\t"))
		if hexInput {
			var kerr, verr error
			dec, kerr = hex.AppendDecode(dec[:0], key)
			kn := len(dec)
			if kerr == nil {
				dec, verr = hex.AppendDecode(dec, value)
			}
			if kerr != nil || verr != nil {
				what, digits := "key", key
				if kerr == nil {
					what, digits = "value", value
				}
				_, derr := decodeHex(digits) // the error in words
				return fmt.Errorf("%s:%d: -hex: bad %s %s: %v", inputName(path), n, what, quoteKey(digits), derr)
			}
			key, value = dec[:kn], dec[kn:]
		}
		if ferr := fn(key, value, n); ferr != nil {
			return ferr
		}
		if err == io.EOF {
			return nil
		}
	}
}

// duplicateError names a key found twice, with the lines holding it when
// the inputs are text files (standard input cannot be read again).
func duplicateError(key []byte, inputs []buildInput, hexInput bool) error {
	form := keyForm{hex: hexInput}
	var where []string
	files := 0
	onlyFile := "" // the text input, when there is one
	for _, in := range inputs {
		if !in.dir && in.entries == nil {
			files++
			onlyFile = in.path
		}
	}
	for _, in := range inputs {
		if in.dir || in.entries != nil || in.path == "-" {
			continue
		}
		readLines(in.path, hexInput, nil, func(k, _ []byte, line int) error {
			if bytes.Equal(k, key) {
				if files == 1 {
					where = append(where, strconv.Itoa(line))
				} else {
					where = append(where, fmt.Sprintf("%s:%d", in.path, line))
				}
				if len(where) == 2 {
					return io.EOF
				}
			}
			return nil
		})
		if len(where) == 2 {
			break
		}
	}
	switch {
	case len(where) == 2 && files == 1:
		return fmt.Errorf("%s: duplicate key %s (lines %s and %s)", onlyFile, form.show(key), where[0], where[1])
	case len(where) == 2:
		return fmt.Errorf("duplicate key %s (%s and %s)", form.show(key), where[0], where[1])
	case files == 1 && onlyFile == "-" && len(inputs) == 1:
		return fmt.Errorf("%s: duplicate key %s", inputName(onlyFile), form.show(key))
	}
	return fmt.Errorf("duplicate key %s", form.show(key))
}

// parseBytes parses a size in bytes: a decimal number with an optional
// unit, KiB, MiB, GiB, TiB (powers of 1024; K, M, G, T too) or KB, MB, GB,
// TB (powers of 1000), as in "256MiB" or "1.5GiB".
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') {
		i--
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult := map[string]float64{
		"": 1, "b": 1,
		"k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tib": 1 << 40,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	}[unit]
	if mult == 0 || num == "" {
		return 0, fmt.Errorf("bad size %q", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || f*mult > 1<<62 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return int64(f * mult), nil
}
