package errmsg

import (
	"errors"
	"io/fs"
	"testing"
)

func TestTrim(t *testing.T) {
	for msg, want := range map[string]string{
		"sstable: open f.sst: no such file":           "open f.sst: no such file",
		"sstable: builder: write at offset 3: x":      "write at offset 3: x",
		"bulk: duplicate key \"k\"":                   "duplicate key \"k\"",
		"f.sst: sstable: corrupt footer at offset 10": "f.sst: corrupt footer at offset 10",
		"open f.sst: no such file":                    "open f.sst: no such file",
		"sstable:no space":                            "sstable:no space",
		"":                                            "",
	} {
		if got := Trim(msg); got != want {
			t.Errorf("Trim(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestWrap(t *testing.T) {
	cause := &fs.PathError{Op: "open", Path: "f.sst", Err: fs.ErrNotExist}
	inner := Wrap("sstable: ", "", cause)
	err := Wrap("bulk: ", "run", inner)
	if got, want := err.Error(), "bulk: run: open f.sst: file does not exist"; got != want {
		t.Errorf("Wrap: %q, want %q", got, want)
	}
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || errors.Unwrap(err) != inner {
		t.Errorf("Wrap lost the cause: %v", err)
	}
	if got, want := Wrap("bulk: ", "", cause).Error(), "bulk: open f.sst: file does not exist"; got != want {
		t.Errorf("Wrap without context: %q, want %q", got, want)
	}
}
