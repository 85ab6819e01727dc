package filterblock

import (
	"math"
	"sync"
)

// StandardFPR returns the classic Bloom filter false positive rate
// (1 - e^(-k/b))^k for b bits per key and k probes (Bloom 1970; the
// approximation in Broder and Mitzenmacher, "Network Applications of Bloom
// Filters", 2004).
func StandardFPR(bitsPerKey float64, k int) float64 {
	return math.Pow(1-math.Exp(-float64(k)/bitsPerKey), float64(k))
}

// CacheLocalFPR returns the expected false positive rate of a blocked
// Bloom filter whose k probes per key all fall in one 512-bit line, at
// bitsPerKey bits per key (Putze, Sanders and Singler, "Cache-, Hash- and
// Space-Efficient Bloom Filters", 2007). The number of keys landing in a
// line is Poisson with mean 512/bitsPerKey; the rate is the standard
// formula averaged over that distribution.
func CacheLocalFPR(bitsPerKey float64, k int) float64 {
	const lineBits = 512
	lambda := lineBits / bitsPerKey
	// Sum Poisson(x; lambda) * (1-(1-1/512)^(k x))^k over x, in log space
	// so large lambda does not underflow.
	sum := 0.0
	hi := int(lambda + 12*math.Sqrt(lambda) + 20)
	logLambda := math.Log(lambda)
	for x := 0; x <= hi; x++ {
		lg, _ := math.Lgamma(float64(x + 1))
		p := math.Exp(float64(x)*logLambda - lambda - lg)
		fill := 1 - math.Pow(1-1.0/lineBits, float64(k*x))
		sum += p * math.Pow(fill, float64(k))
	}
	return sum
}

// bestK memoises bestCacheLocalK: computing it sums Poisson series for 16
// probe counts, about 250 µs, too slow to repeat on every Open.
var bestK sync.Map // float64 bits per key -> int

// bestCacheLocalK returns the probe count in 1..16 that minimises
// CacheLocalFPR at bitsPerKey.
func bestCacheLocalK(bitsPerKey float64) int {
	if k, ok := bestK.Load(bitsPerKey); ok {
		return k.(int)
	}
	best, bestRate := 1, 2.0
	for k := 1; k <= 16; k++ {
		if r := CacheLocalFPR(bitsPerKey, k); r < bestRate {
			best, bestRate = k, r
		}
	}
	bestK.Store(bitsPerKey, best)
	return best
}
