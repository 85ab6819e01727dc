package builder

// SetBatchBytes sets the decoded bytes from which a batch of data blocks
// goes to a goroutine to be compressed (pipeline.go); 0 compresses each
// block in Add, as a builder with one core does. Call it before Add.
func SetBatchBytes(b *Builder, n int) { b.batchBytes = n }

// BatchBytes returns b's batch size: 0 if it compresses in Add.
func BatchBytes(b *Builder) int { return b.batchBytes }

// MaxInFlight is the number of batches handed to the compressor before
// a builder waits for the oldest.
const MaxInFlight = maxInFlight

// DictPays is dictPays: whether a dictionary whose sampled blocks take
// with bytes stored with it (the dictionary's included), against without
// bytes without it, is kept.
func DictPays(with, without int) bool { return dictPays(with, without) }

// StoredLen is storedLen: the bytes a block of n bytes compressing to c
// is stored in.
func StoredLen(n, c int) int { return storedLen(n, c) }

// MaxDictBlock is maxDictBlock.
const MaxDictBlock = maxDictBlock
