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

// TestDocsNameNoUnexported checks that what go doc shows for package
// reader (the package comment and the comments of exported names) names
// none of its unexported types, functions or methods that a reader could
// not mistake for words (those with an upper-case letter, such as
// compactIndex): the documentation is a user's manual, and the names are
// the maintainers'.
func TestDocsNameNoUnexported(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	internal := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				internal[d.Name.Name] = !d.Name.IsExported()
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						internal[ts.Name.Name] = !ts.Name.IsExported()
					}
				}
			}
		}
	}
	word := regexp.MustCompile(`\b[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*\b`)
	pkg, err := doc.NewFromFiles(fset, files, "github.com/sstkit/sstable/reader")
	if err != nil {
		t.Fatal(err)
	}
	check := func(what, text string) {
		for _, m := range word.FindAllString(text, -1) {
			if internal[m] {
				t.Errorf("the doc of %s names unexported %s", what, m)
			}
		}
	}
	check("the package", pkg.Doc)
	for _, f := range pkg.Funcs {
		check(f.Name, f.Doc)
	}
	for _, typ := range pkg.Types {
		check(typ.Name, typ.Doc)
		for _, f := range append(typ.Funcs, typ.Methods...) {
			check(typ.Name+"."+f.Name, f.Doc)
		}
	}
	for _, v := range append(pkg.Consts, pkg.Vars...) {
		check(strings.Join(v.Names, ", "), v.Doc)
	}
}
