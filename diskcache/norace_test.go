//go:build !race

package diskcache

const raceEnabled = false
