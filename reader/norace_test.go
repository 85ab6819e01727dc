//go:build !race

package reader_test

// raceEnabled is true when the tests run under the race detector.
const raceEnabled = false
