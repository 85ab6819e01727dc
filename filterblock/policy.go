// Package filterblock holds the filter policies a table can carry and the
// encoding of the filter section. A filter answers "may this key be in the
// table?" with no false negatives: false means certainly absent.
//
// Each policy stores its name in the filter section and owns its filter's
// encoding, specified in its constructor's documentation:
//
//   - Bloom, "sstkit.CacheLocalBloom.xxh64" (the default): a cache-local
//     Bloom filter, 64-byte lines then a k byte.
//   - BinaryFuse8, "sstkit.BinaryFuse8.xxh64": a binary fuse filter with
//     8-bit fingerprints, a 16-byte header (seed, segment length, segment
//     count) then the fingerprints; 0.39% false positives at about 9 bits
//     per key. Its construction can fail, and then falls back to Bloom(10):
//     the table records the policy actually built.
//   - LevelDBBloom, "leveldb.BuiltinBloomFilter2": LevelDB's filter, for
//     compatibility.
//
// Bloom and BinaryFuse8 hash each key once with XXH64 (seed 0), so a
// builder that has the hash already passes it through HashAdder.
package filterblock

// Policy builds and queries filters. Its Name is stored in each table so a
// reader can pick the same policy back; a policy must never change the
// meaning of filters already written under its name.
type Policy interface {
	// Name identifies the policy and its filter encoding in table files.
	Name() string
	// NewGenerator returns an empty generator for one filter.
	NewGenerator() Generator
	// MayContain reports whether key may be in the set filter was built
	// from. False means the key is certainly absent. A filter the policy
	// cannot interpret must make it return true.
	MayContain(filter, key []byte) bool
}

// Generator accumulates keys for one filter. Implementations keep a hash
// per key, not the keys themselves.
type Generator interface {
	// Add records key. The key's bytes may be reused after Add returns.
	Add(key []byte)
	// Generate appends the filter for all keys added so far to dst, returns
	// the extended slice, and resets the generator.
	Generate(dst []byte) []byte
}

// HashAdder is implemented by generators that keep only a key's XXH64
// hash (seed 0, codec.KeyHash), as Bloom's does: a builder that has
// computed the hash already (for the hash index) passes it to AddHash
// instead of hashing the key again in Add.
type HashAdder interface {
	AddHash(h uint64)
}

// HashesAdder is implemented by generators that take a run of hashes, as
// HashAdder's AddHash takes one, and keep the slice itself until
// Generate rather than copying it, as Bloom's does: a builder that holds
// every key's hash already (for a partitioned table) saves copying them,
// 8 bytes a key. The caller must not change hs until Generate returns.
type HashesAdder interface {
	AddHashes(hs []uint64)
}

// Sized is implemented by policies whose filter size is set in bits per
// key. Builders record it in the table's properties.
type Sized interface {
	// BitsPerKey returns the configured filter size in bits per key.
	BitsPerKey() float64
}

// Probed is implemented by policies that test a fixed number of bits per
// key, as Bloom and LevelDBBloom do. Tools use it to report k and the
// theoretical false positive rate.
type Probed interface {
	// Probes returns k, the number of bits set and tested per key.
	Probes() int
}
