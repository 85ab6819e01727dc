package faultio

import (
	"bytes"
	"errors"
	"io"
	"syscall"
	"testing"
)

// TestFaultyNeverLies checks that the bytes Faulty reports as read are
// the source's, that every kind of fault happens, and Break and Quiet.
func TestFaultyNeverLies(t *testing.T) {
	data := make([]byte, 4096)
	for i := range data {
		data[i] = byte(i * 31)
	}
	f := NewFaulty(bytes.NewReader(data), 1)
	f.Short, f.EarlyEOF, f.Transient = 0.2, 0.2, 0.2
	c := &Counting{R: f}
	kinds := map[string]int{}
	for i := range 2000 {
		off := int64(i % 4000)
		p := make([]byte, 64)
		n, err := c.ReadAt(p, off)
		if !bytes.Equal(p[:n], data[off:off+int64(n)]) {
			t.Fatalf("ReadAt(%d) reported %d bytes that differ from the source", off, n)
		}
		switch {
		case err == nil && n < len(p):
			kinds["short"]++
		case errors.Is(err, io.EOF):
			kinds["eof"]++
		case errors.Is(err, ErrTransient):
			kinds["transient"]++
		case err == nil:
			kinds["ok"]++
		}
	}
	for _, k := range []string{"short", "eof", "transient", "ok"} {
		if kinds[k] == 0 {
			t.Errorf("no %s reads in 2000: %v", k, kinds)
		}
	}
	if c.Calls() != 2000 || c.Bytes() != 2000*64 {
		t.Errorf("Counting: %d calls, %d bytes; want 2000, %d", c.Calls(), c.Bytes(), 2000*64)
	}
	f.Break(true)
	if _, err := f.ReadAt(make([]byte, 8), 0); !errors.Is(err, syscall.EIO) {
		t.Errorf("broken ReadAt: %v, want EIO", err)
	}
	f.Break(false)
	f.Quiet()
	p := make([]byte, 100)
	for i := range 100 {
		if n, err := f.ReadAt(p, int64(i)); n != len(p) || err != nil {
			t.Fatalf("quiet ReadAt: %d, %v", n, err)
		}
	}
}
