package rocksdb

import (
	"encoding/binary"
	"fmt"
)

// StringAppendOperator returns RocksDB's string append operator
// (utilities/merge_operators/string_append/stringappend.cc, named
// "StringAppendOperator"): the base and the operands, oldest first,
// joined with delim; without a base, the operands alone.
func StringAppendOperator(delim string) MergeOperator { return stringAppend{delim} }

type stringAppend struct{ delim string }

func (stringAppend) Name() string { return "StringAppendOperator" }

func (s stringAppend) FullMerge(key, base []byte, hasBase bool, operands [][]byte) ([]byte, error) {
	var out []byte
	first := true
	if hasBase {
		out, first = append(out, base...), false
	}
	for _, op := range operands {
		if !first {
			out = append(out, s.delim...)
		}
		out, first = append(out, op...), false
	}
	if out == nil {
		out = []byte{}
	}
	return out, nil
}

// UInt64AddOperator returns RocksDB's uint64 add operator
// (utilities/merge_operators/uint64add.cc, named "UInt64AddOperator"):
// the base and the operands, each a little-endian fixed64, summed
// modulo 2^64 into one. A value of another size counts as 0, as RocksDB
// reads it (it logs the error and goes on).
func UInt64AddOperator() MergeOperator { return uint64Add{} }

type uint64Add struct{}

func (uint64Add) Name() string { return "UInt64AddOperator" }

func (uint64Add) FullMerge(key, base []byte, hasBase bool, operands [][]byte) ([]byte, error) {
	var sum uint64
	if hasBase {
		sum = decodeFixed64(base)
	}
	for _, op := range operands {
		sum += decodeFixed64(op)
	}
	return binary.LittleEndian.AppendUint64(nil, sum), nil
}

func decodeFixed64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// MergeOperatorByName returns the built-in operator RocksDB names name
// ("StringAppendOperator", with the delimiter delim; "UInt64AddOperator"),
// or an error naming it.
func MergeOperatorByName(name, delim string) (MergeOperator, error) {
	switch name {
	case "StringAppendOperator", "stringappend":
		return StringAppendOperator(delim), nil
	case "UInt64AddOperator", "uint64add":
		return UInt64AddOperator(), nil
	}
	return nil, fmt.Errorf("%w: merge operator %q (this package has StringAppendOperator and UInt64AddOperator)", ErrUnsupported, name)
}
