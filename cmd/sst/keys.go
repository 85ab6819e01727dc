package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// quoteBytes renders b as a Go string literal, byte by byte: printable
// ASCII as it is (with " and \ escaped), every other byte as \xHH, so that
// strconv.Unquote gives b back exactly and no byte is shown as a decoded
// rune. It is how keys are shown without -hex (info, messages).
func quoteBytes(b []byte) string {
	const digits = "0123456789abcdef"
	var sb strings.Builder
	sb.Grow(len(b) + 2)
	sb.WriteByte('"')
	for _, c := range b {
		switch {
		case c == '"' || c == '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			sb.WriteByte(c)
		default:
			sb.WriteString(`\x`)
			sb.WriteByte(digits[c>>4])
			sb.WriteByte(digits[c&15])
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// maxShownKey is how many bytes of a key messages show.
const maxShownKey = 100

// quoteKey renders a key for messages with quoteBytes, cut after
// maxShownKey bytes with the full length noted.
func quoteKey(k []byte) string {
	if len(k) > maxShownKey {
		return fmt.Sprintf("%s... (%d bytes)", quoteBytes(k[:maxShownKey]), len(k))
	}
	return quoteBytes(k)
}

// keyForm is how a command reads keys from its arguments and shows them:
// as they are, or, with -hex, as hexadecimal.
type keyForm struct{ hex bool }

// parse returns the key an argument stands for. what names the argument
// in the error for bad hex, which is a usage error.
func (f keyForm) parse(cmd, what, arg string) ([]byte, error) {
	if !f.hex {
		return []byte(arg), nil
	}
	k, err := decodeHex([]byte(arg))
	if err != nil {
		return nil, usagef("%s: -hex: bad %s %s: %v", cmd, what, quoteKey([]byte(arg)), err)
	}
	return k, nil
}

// show renders a key for messages: quoteKey, or its hex digits in quotes
// (cut after maxShownKey bytes of key).
func (f keyForm) show(k []byte) string {
	if !f.hex {
		return quoteKey(k)
	}
	if len(k) > maxShownKey {
		return fmt.Sprintf("%q... (%d bytes)", hex.EncodeToString(k[:maxShownKey]), len(k))
	}
	return `"` + hex.EncodeToString(k) + `"`
}

// decodeHex decodes hexadecimal digits (either case), with an error that
// says what is wrong in words.
func decodeHex(src []byte) ([]byte, error) {
	dst := make([]byte, hex.DecodedLen(len(src)))
	_, err := hex.Decode(dst, src)
	var ib hex.InvalidByteError
	switch {
	case errors.As(err, &ib):
		return nil, fmt.Errorf("%s is not a hex digit", quoteBytes([]byte{byte(ib)}))
	case errors.Is(err, hex.ErrLength):
		return nil, fmt.Errorf("odd number of hex digits (%d)", len(src))
	case err != nil:
		return nil, err
	}
	return dst, nil
}
