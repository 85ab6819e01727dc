package reader_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsNameNoSourceFiles checks that the documentation go doc shows for
// the library packages (package comments and the comments of exported
// names) never points at a source file such as "(tail.go)": files are
// the maintainers' business and move; users read behaviour.
func TestDocsNameNoSourceFiles(t *testing.T) {
	goFile := regexp.MustCompile(`\b[a-z0-9_]+\.go\b`)
	for _, dir := range []string{".", "../builder", "../format", "../cache", "../filterblock", "../footer"} {
		fset := token.NewFileSet()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var files []*ast.File
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		pkg, err := doc.NewFromFiles(fset, files, "example.com/"+filepath.Base(dir))
		if err != nil {
			t.Fatal(err)
		}
		check := func(what, text string) {
			if m := goFile.FindString(text); m != "" {
				t.Errorf("%s: the doc of %s names source file %q", dir, what, m)
			}
		}
		check("the package", pkg.Doc)
		values := func(vs []*doc.Value) {
			for _, v := range vs {
				check(strings.Join(v.Names, ", "), v.Doc)
			}
		}
		funcs := func(fs []*doc.Func) {
			for _, f := range fs {
				check(f.Name, f.Doc)
			}
		}
		values(pkg.Consts)
		values(pkg.Vars)
		funcs(pkg.Funcs)
		for _, typ := range pkg.Types {
			check(typ.Name, typ.Doc)
			values(typ.Consts)
			values(typ.Vars)
			funcs(typ.Funcs)
			funcs(typ.Methods)
			// Exported fields' comments.
			for _, spec := range typ.Decl.Specs {
				if st, ok := spec.(*ast.TypeSpec).Type.(*ast.StructType); ok {
					for _, f := range st.Fields.List {
						if len(f.Names) > 0 && f.Names[0].IsExported() {
							check(typ.Name+"."+f.Names[0].Name, f.Doc.Text()+f.Comment.Text())
						}
					}
				}
			}
		}
	}
}
