package main

// The data set: the keys and values of every table, and the absent
// keys looked up in them.

import (
	"encoding/binary"
	"math"
)

// mix is SplitMix64's finaliser: distinct inputs give distinct outputs.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// key i of n: the high 8 bytes increase with i (i's share of 2^64 plus a
// random offset in it), the low 8 are random and even, so keys are sorted
// and random-looking. absentKey(j) has an odd low half: never present.
func key(dst []byte, i, n int) []byte {
	step := math.MaxUint64 / uint64(n)
	dst = binary.BigEndian.AppendUint64(dst[:0], uint64(i)*step+mix(uint64(i))%step)
	return binary.BigEndian.AppendUint64(dst, mix(uint64(i)^0x5bd1e995)&^1)
}

func absentKey(dst []byte, j, n int) []byte {
	dst = key(dst, int(mix(uint64(j)+77)%uint64(n)), n)
	binary.BigEndian.PutUint64(dst[8:], mix(uint64(j)+991)|1)
	return dst
}

const text = "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness, "

func value(dst []byte, i int) []byte {
	dst = dst[:0]
	for j := 0; j < 48; j += 8 {
		dst = binary.LittleEndian.AppendUint64(dst, mix(uint64(i)*7+uint64(j)))
	}
	off := i % (len(text) - (valueLen - 48))
	return append(dst, text[off:off+valueLen-48]...)
}
