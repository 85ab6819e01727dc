package main

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sstkit/sstable/filterblock"
)

// The documents that copy what the command prints, relative to this
// package's directory.
const (
	cliDoc     = "../../docs/cli.md"     // the usage block
	filtersDoc = "../../docs/filters.md" // the filter table
)

// readDoc returns the text of the document at path.
func readDoc(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestDocsUsage checks that the usage block of docs/cli.md is exactly
// what "sst help" prints. To update it, paste the output of
// "go run ./cmd/sst help" into the first code block under "## Usage".
func TestDocsUsage(t *testing.T) {
	const head = "\n## Usage\n"
	doc := readDoc(t, cliDoc)
	i := strings.Index(doc, head)
	if i < 0 {
		t.Fatalf("%s has no %q section", cliDoc, strings.TrimSpace(head))
	}
	const fence = "\n```\n"
	j := strings.Index(doc[i:], fence)
	if j < 0 {
		t.Fatalf("%s has no code block under %q", cliDoc, strings.TrimSpace(head))
	}
	block := doc[i+j+len(fence):]
	k := strings.Index(block, "```\n")
	if k < 0 {
		t.Fatalf("%s: the usage block is not closed", cliDoc)
	}
	block = block[:k]
	help := mustSST(t, "help")
	if help != usageText {
		t.Fatalf("sst help prints something other than usageText")
	}
	if block == help {
		return
	}
	got, want := strings.Split(block, "\n"), strings.Split(help, "\n")
	for n := 0; n < max(len(got), len(want)); n++ {
		var g, w string
		if n < len(got) {
			g = got[n]
		}
		if n < len(want) {
			w = want[n]
		}
		if g != w {
			t.Fatalf("%s: usage differs from sst help at line %d of the block:\ndoc:      %q\nsst help: %q\n(paste the output of \"go run ./cmd/sst help\" into its block under \"## Usage\")", cliDoc, n+1, g, w)
		}
	}
}

// TestDocsFilterTable recomputes the false positive rates of the filter
// table in docs/filters.md, which "sst bench filter -bits 10" measures:
// the keys are seeded, so the rates are exact, to the digits the table
// gives. The times in the table are not checked.
func TestDocsFilterTable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ten filters of 1M keys")
	}
	doc := readDoc(t, filtersDoc)
	rows := map[string]string{ // row label prefix -> distribution
		"random 16-byte":  "random16",
		"`%016d` of 2i":   "decimal",
		"12-byte prefix":  "prefix12",
		"100-byte prefix": "prefix100",
		"BE uint64 of 2i": "seq64",
	}
	const header = "| keys (absent probes) | `Bloom(10)` | ns/probe | `LevelDBBloom(10)` | ns/probe | `BinaryFuse8()` | ns/probe |"
	i := strings.Index(doc, header)
	if i < 0 {
		t.Fatalf("%s lacks the filter table header %q", filtersDoc, header)
	}
	var table []string
	for _, line := range strings.Split(doc[i:], "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		table = append(table, line)
	}
	const n = 1_000_000
	percent := regexp.MustCompile(`^\**([0-9.]+)%`)
	// check compares a cell of the table with a rate, to the cell's digits.
	check := func(row, cell string, rate float64) {
		t.Helper()
		m := percent.FindStringSubmatch(strings.TrimSpace(cell))
		if m == nil {
			t.Errorf("%s: filter table, row %q: cell %q is not a percentage", filtersDoc, row, cell)
			return
		}
		digits := 0
		if j := strings.IndexByte(m[1], '.'); j >= 0 {
			digits = len(m[1]) - j - 1
		}
		// Equal when rounded to the cell's digits, a tie either way.
		val, err := strconv.ParseFloat(m[1], 64)
		if err != nil || math.Abs(100*rate-val) > 0.5*math.Pow(10, -float64(digits))+1e-9 {
			t.Errorf("%s: filter table, row %q: %s%%, but the code gives %.*f%% (%.4f%%)", filtersDoc, row, m[1], digits, 100*rate, 100*rate)
		}
	}
	seen := 0
	var batch keyBatch
	for _, line := range table {
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 1+2*len(benchPolicies) {
			t.Errorf("%s: filter table row %q has %d cells, want %d", filtersDoc, line, len(cells), 1+2*len(benchPolicies))
			continue
		}
		label := strings.TrimSpace(cells[0])
		if label == "theory" {
			seen++
			for c, bp := range benchPolicies {
				cell := cells[1+2*c]
				k := fuseProbes
				if p, ok := bp.new(10).(filterblock.Probed); ok {
					k = p.Probes()
				}
				check(label, cell, bp.theory(10, k))
				if want := fmt.Sprintf("k=%d", k); !strings.Contains(cell, want) {
					t.Errorf("%s: filter table, theory of %s: %q lacks %q", filtersDoc, bp.name, cell, want)
				}
			}
			continue
		}
		var dist string
		for prefix, d := range rows {
			if strings.HasPrefix(label, prefix) {
				dist = d
			}
		}
		if dist == "" {
			t.Errorf("%s: filter table: unknown row %q", filtersDoc, label)
			continue
		}
		seen++
		for _, d := range benchDists {
			if d.name != dist {
				continue
			}
			for c, bp := range benchPolicies {
				p := bp.new(10)
				filter, _ := buildFilter(p, d, n, &batch)
				fp, _ := probeFilter(p, filter, d, n, &batch)
				check(label, cells[1+2*c], float64(fp)/n)
			}
		}
	}
	if seen != len(rows)+1 {
		t.Errorf("%s: filter table has %d known rows, want %d", filtersDoc, seen, len(rows)+1)
	}
}
