package codec_test

import (
	"bytes"
	"testing"

	"github.com/sstkit/sstable/internal/codec"
	"pgregory.net/rapid"
)

func TestAppendSeparatorExamples(t *testing.T) {
	cases := []struct{ a, b, want string }{
		{"abcd", "abzz", "abd"},              // LevelDB: next byte can be incremented
		{"abc", "abd", "abc"},                // 'c'+1 == 'd': not below b, keep a
		{"abc", "abcd", "abc"},               // a is a prefix of b
		{"", "a", ""},                        // empty a
		{"", "", ""},                         // equal (outside the contract) keeps a
		{"a", "c", "b"},                      // single bytes
		{"a\xffz", "c", "b"},                 // rest of a dropped
		{"a\xff", "b", "a\xff"},              // 'a'+1 == 'b'
		{"ab\xff", "ac", "ab\xff"},           // 'b'+1 == 'c'
		{"\xff\x01", "\xff\x05", "\xff\x02"}, // common 0xff prefix kept
		{"\x00", "\xff", "\x01"},             // 0x00 incremented
		{"\xfe", "\xff", "\xfe"},             // 0xfe+1 == 0xff
		{"foo/bar", "foo/zzz", "foo/c"},      // typical key shortening
		{"helloworld", "hellozoomer", "hellox"},
	}
	for _, c := range cases {
		got := codec.AppendSeparator(nil, []byte(c.a), []byte(c.b))
		if string(got) != c.want {
			t.Errorf("AppendSeparator(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
		// The result is appended after dst's contents.
		got = codec.AppendSeparator([]byte("dst:"), []byte(c.a), []byte(c.b))
		if string(got) != "dst:"+c.want {
			t.Errorf("AppendSeparator(\"dst:\", %q, %q) = %q, want %q", c.a, c.b, got, "dst:"+c.want)
		}
	}
}

func TestAppendSuccessorExamples(t *testing.T) {
	cases := []struct{ a, want string }{
		{"\xff\xffa", "\xff\xffb"},
		{"\xff\xff", "\xff\xff"},
		{"", ""},
		{"abc", "b"},
		{"\xfe", "\xff"},
		{"\x00\x00", "\x01"},
		{"\xffz\xff", "\xff{"},
	}
	for _, c := range cases {
		got := codec.AppendSuccessor(nil, []byte(c.a))
		if string(got) != c.want {
			t.Errorf("AppendSuccessor(%q) = %q, want %q", c.a, got, c.want)
		}
		got = codec.AppendSuccessor([]byte("dst:"), []byte(c.a))
		if string(got) != "dst:"+c.want {
			t.Errorf("AppendSuccessor(\"dst:\", %q) = %q, want %q", c.a, got, "dst:"+c.want)
		}
	}
}

var sepKey = rapid.SliceOfN(rapid.OneOf(rapid.SampledFrom([]byte{0x00, 0x01, 'a', 'b', 'c', 0xfe, 0xff}), rapid.Byte()), 0, 10)

func TestSeparatorProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := sepKey.Draw(t, "a")
		b := sepKey.Filter(func(b []byte) bool { return !bytes.Equal(a, b) }).Draw(t, "b")
		if bytes.Compare(a, b) > 0 {
			a, b = b, a
		}
		aCopy, bCopy := bytes.Clone(a), bytes.Clone(b)
		sep := codec.AppendSeparator(nil, a, b)
		if bytes.Compare(a, sep) > 0 || bytes.Compare(sep, b) >= 0 {
			t.Fatalf("AppendSeparator(%q, %q) = %q: not in [a, b)", a, b, sep)
		}
		if len(sep) > len(a) {
			t.Fatalf("AppendSeparator(%q, %q) = %q: longer than a", a, b, sep)
		}
		if !bytes.Equal(a, aCopy) || !bytes.Equal(b, bCopy) {
			t.Fatalf("AppendSeparator modified its arguments")
		}
	})
}

func TestSuccessorProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := sepKey.Draw(t, "a")
		ext := sepKey.Draw(t, "extension")
		aCopy := bytes.Clone(a)
		s := codec.AppendSuccessor(nil, a)
		if bytes.Compare(s, a) < 0 {
			t.Fatalf("AppendSuccessor(%q) = %q < a", a, s)
		}
		if len(s) > len(a) {
			t.Fatalf("AppendSuccessor(%q) = %q: longer than a", a, s)
		}
		if !bytes.Equal(a, aCopy) {
			t.Fatalf("AppendSuccessor modified its argument")
		}
		allFF := true
		for _, c := range a {
			allFF = allFF && c == 0xff
		}
		if allFF {
			if !bytes.Equal(s, a) {
				t.Fatalf("AppendSuccessor(%q) = %q, want a unchanged", a, s)
			}
			return
		}
		// Unless a is all 0xff, s is above every key that extends a.
		if x := append(bytes.Clone(a), ext...); bytes.Compare(x, s) >= 0 {
			t.Fatalf("AppendSuccessor(%q) = %q is not above %q", a, s, x)
		}
	})
}

// TestSeparatorLongKeys checks the exception to LevelDB's rule: a key a
// longer than LongSeparatorKey whose byte after the common prefix is one
// below b's gets a separator of the common prefix and a few bytes, not a
// whole, so a long key is not stored again in the index.
func TestSeparatorLongKeys(t *testing.T) {
	big := bytes.Repeat([]byte{'x'}, 1<<20)
	a := append([]byte("k1"), big...)
	b := []byte("k2")
	if got := codec.AppendSeparator(nil, a, b); string(got) != "k1y" {
		t.Errorf("AppendSeparator(k1 + 1 MiB, k2) = %q, want \"k1y\"", got)
	}
	// A key of up to LongSeparatorKey bytes keeps LevelDB's rule.
	short := append([]byte("k1"), big[:codec.LongSeparatorKey-2]...)
	if got := codec.AppendSeparator(nil, short, b); !bytes.Equal(got, short) {
		t.Errorf("AppendSeparator of a %d-byte key = %q, want the key (LevelDB's rule)", len(short), got)
	}
	// A tail of 0xff bytes leaves nothing to increment.
	ff := append([]byte("k1"), bytes.Repeat([]byte{0xff}, 100)...)
	if got := codec.AppendSeparator(nil, ff, b); !bytes.Equal(got, ff) {
		t.Errorf("AppendSeparator(k1 + 0xff..., k2) = %q, want a", got)
	}
	tail := rapid.SliceOfN(rapid.SampledFrom([]byte{0x00, 'a', 0xfe, 0xff}), 0, 150)
	rapid.Check(t, func(t *rapid.T) {
		prefix := rapid.SliceOfN(rapid.Byte(), 0, 80).Draw(t, "prefix")
		c := rapid.ByteRange(0, 0xfe).Draw(t, "c")
		a := append(append(bytes.Clone(prefix), c), tail.Draw(t, "a tail")...)
		b := append(append(bytes.Clone(prefix), c+1), tail.Draw(t, "b tail")...)
		sep := codec.AppendSeparator(nil, a, b)
		if bytes.Compare(a, sep) > 0 || bytes.Compare(sep, b) >= 0 || len(sep) > len(a) {
			t.Fatalf("AppendSeparator(%q, %q) = %q: not in [a, b) or longer than a", a, b, sep)
		}
		i := len(prefix)
		shortens := false
		for _, x := range a[i+1 : max(len(a)-1, i+1)] {
			shortens = shortens || x != 0xff
		}
		if len(a) > codec.LongSeparatorKey && shortens {
			if len(sep) >= len(a) {
				t.Fatalf("AppendSeparator(%q, %q) = %q: a long key kept whole", a, b, sep)
			}
		}
	})
}
