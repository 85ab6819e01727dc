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
		"cache: close: in use: 1 table open":          "close: in use: 1 table open",
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
	// A context the message names already is not said twice.
	named := Wrap("sstable: ", "d/t.sst", errors.New("sstable: builder: write at offset 3: x"))
	if got, want := named.Error(), "sstable: d/t.sst: write at offset 3: x"; got != want {
		t.Errorf("Wrap naming a path: %q, want %q", got, want)
	}
	if got, want := Wrap("bulk: ", "d/t.sst", named).Error(), "bulk: d/t.sst: write at offset 3: x"; got != want {
		t.Errorf("Wrap with the context the message names: %q, want %q", got, want)
	}
	if got, want := Wrap("bulk: ", "d", named).Error(), "bulk: d: d/t.sst: write at offset 3: x"; got != want {
		t.Errorf("Wrap with another context: %q, want %q", got, want)
	}
}
