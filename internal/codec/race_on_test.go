//go:build race

package codec_test

// raceEnabled: the race detector makes sync.Pool drop items at random,
// so allocation counts of pooled paths do not hold.
const raceEnabled = true
