package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/sstkit/sstable/bulk"
)

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
