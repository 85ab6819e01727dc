// Package rapidfail keeps the test runs of the packages that use
// pgregory.net/rapid the same on every checkout. Import it for its side
// effect from one test file of each such package.
//
// On a failure, rapid saves the failing case's draws under
// testdata/rapid/TEST/, and every later run of TEST replays every file
// saved there before it draws new cases, whatever its flags (rapid
// v1.3.0, engine.go: doCheck). A checkout holding such a file then tests
// differently from a clean one, as CI's is: a case saved against code
// since changed fails, or passes, for reasons of its own, and a planted
// bug keeps failing other people's runs after it is removed.
//
// So the package's init sets -rapid.nofailfile: a failure writes no
// file, and prints the -rapid.seed that reproduces it. The flag stays the
// user's to set (-rapid.nofailfile=false, or RAPID_NOFAILFILE in the
// environment) for a case worth keeping, which then becomes a named
// test. When the package's directory holds saved cases anyway, init says
// so on stderr, since rapid replays them.
package rapidfail

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	_ "pgregory.net/rapid" // registers the flag set below, in its init
)

func init() {
	if _, set := os.LookupEnv("RAPID_NOFAILFILE"); !set {
		if err := flag.Set("rapid.nofailfile", "true"); err != nil {
			panic(fmt.Sprintf("rapidfail: %v", err)) // rapid's flags renamed
		}
	}
	// A test binary runs in its package's directory.
	if saved, _ := filepath.Glob(filepath.Join("testdata", "rapid", "*", "*.fail")); len(saved) > 0 {
		fmt.Fprintf(os.Stderr, "rapidfail: testdata/rapid holds %d saved failing case(s) (%s ...), which rapid replays on every run: remove them to test as a clean checkout does\n", len(saved), saved[0])
	}
}
