package fuzz

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// countWords are the number words the README may spell counts with.
var countWords = strings.Fields("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty")

// readmeCounts returns every count the README gives as "<N> <noun>", N in
// digits or a number word, case-insensitive.
func readmeCounts(t *testing.T, noun string) []int {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?i)\b([a-z]+|[0-9]+)\s+` + strings.ReplaceAll(regexp.QuoteMeta(noun), " ", `\s+`) + `\b`)
	var counts []int
	for _, m := range re.FindAllStringSubmatch(string(data), -1) {
		word := strings.ToLower(m[1])
		if n, err := strconv.Atoi(word); err == nil {
			counts = append(counts, n)
			continue
		}
		for n, w := range countWords {
			if w == word {
				counts = append(counts, n)
			}
		}
	}
	return counts
}

// TestREADMEFuzzTargetCount checks every "<N> fuzz targets" of the README
// against the Fuzz functions of this package.
func TestREADMEFuzzTargetCount(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var targets []string
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") {
				targets = append(targets, fn.Name.Name)
			}
		}
	}
	counts := readmeCounts(t, "fuzz targets")
	if len(counts) == 0 {
		t.Fatal(`README gives no "<N> fuzz targets" count`)
	}
	for _, n := range counts {
		if n != len(targets) {
			t.Errorf("README says %d fuzz targets; package fuzz has %d: %v", n, len(targets), targets)
		}
	}
}

// TestREADMEGoldenTableCount checks every "<N> golden tables" of the
// README against testdata/golden/*.sst.
func TestREADMEGoldenTableCount(t *testing.T) {
	tables, err := filepath.Glob("../testdata/golden/*.sst")
	if err != nil {
		t.Fatal(err)
	}
	counts := readmeCounts(t, "golden tables")
	if len(counts) == 0 {
		t.Fatal(`README gives no "<N> golden tables" count`)
	}
	for _, n := range counts {
		if n != len(tables) {
			t.Errorf("README says %d golden tables; testdata/golden holds %d: %v", n, len(tables), tables)
		}
	}
}
