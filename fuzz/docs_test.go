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

// countWords are the number words the documents may spell counts with.
var countWords = strings.Fields("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty")

// docCount is a count a document gives.
type docCount struct {
	file string
	n    int
}

// docCounts returns every count the README and the documents under docs/
// give as "<N> <noun>", N in digits or a number word, case-insensitive.
func docCounts(t *testing.T, noun string) []docCount {
	t.Helper()
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../README.md"}, files...)
	re := regexp.MustCompile(`(?i)\b([a-z]+|[0-9]+)\s+` + strings.ReplaceAll(regexp.QuoteMeta(noun), " ", `\s+`) + `\b`)
	var counts []docCount
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			word := strings.ToLower(m[1])
			if n, err := strconv.Atoi(word); err == nil {
				counts = append(counts, docCount{file, n})
				continue
			}
			for n, w := range countWords {
				if w == word {
					counts = append(counts, docCount{file, n})
				}
			}
		}
	}
	return counts
}

// TestDocsFuzzTargetCount checks every "<N> fuzz targets" of the README
// and docs/ against the Fuzz functions of this package.
func TestDocsFuzzTargetCount(t *testing.T) {
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
	counts := docCounts(t, "fuzz targets")
	if len(counts) == 0 {
		t.Fatal(`neither the README nor docs/ gives a "<N> fuzz targets" count`)
	}
	for _, c := range counts {
		if c.n != len(targets) {
			t.Errorf("%s says %d fuzz targets; package fuzz has %d: %v", c.file, c.n, len(targets), targets)
		}
	}
}

// TestDocsGoldenTableCount checks every "<N> golden tables" of the README
// and docs/ against testdata/golden/*.sst.
func TestDocsGoldenTableCount(t *testing.T) {
	tables, err := filepath.Glob("../testdata/golden/*.sst")
	if err != nil {
		t.Fatal(err)
	}
	counts := docCounts(t, "golden tables")
	if len(counts) == 0 {
		t.Fatal(`neither the README nor docs/ gives a "<N> golden tables" count`)
	}
	for _, c := range counts {
		if c.n != len(tables) {
			t.Errorf("%s says %d golden tables; testdata/golden holds %d: %v", c.file, c.n, len(tables), tables)
		}
	}
}
