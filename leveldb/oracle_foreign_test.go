package leveldb_test

// LevelDB tables written outside a LevelDB database, checked against the
// real LevelDB 1.23 (the oracle of oracle_test.go): tables of plain keys
// from leveldb::TableBuilder, and Mojang's zlib blocks, which LevelDB
// 1.23 cannot read, re-encoded (reencode_test.go) from and to the types
// it reads.

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/reader"
)

func TestOraclePlainAndMojang(t *testing.T) {
	o := newOracle(t)
	t.Run("plain", func(t *testing.T) { testOraclePlain(t, o) })
	t.Run("mojang", func(t *testing.T) { testOracleMojang(t, o) })
}

// testOraclePlain: tables of plain keys written by leveldb::TableBuilder
// over edge keys, read here (KeysDetect and KeysPlain, mapped and not)
// entry for entry as leveldb::Table reads them, and every seek and Get
// landing where Table's iterator lands.
func testOraclePlain(t *testing.T, o *oracle) {
	dir := t.TempDir()
	detected := 0
	for seed := 1; seed <= 10; seed++ {
		for _, comp := range []string{"snappy", "none"} {
			path := filepath.Join(dir, fmt.Sprintf("p%d%s.ldb", seed, comp))
			out := splitLines(o.mustRun(t, "plaintable", path, strconv.Itoa(seed), comp))
			var want []string
			var seeks [][2][]byte
			inSeeks := false
			for _, l := range out {
				if l == "# seeks" {
					inSeeks = true
					continue
				}
				hk, hv, _ := strings.Cut(l, "\t")
				k, err1 := hex.DecodeString(hk)
				v, err2 := hex.DecodeString(hv)
				if hv == "-" {
					v, err2 = nil, nil
				}
				if err1 != nil || err2 != nil {
					t.Fatalf("oracle line %q", l)
				}
				if inSeeks {
					seeks = append(seeks, [2][]byte{k, v})
				} else {
					want = append(want, entryLine(k, 0, leveldb.KindValue, v))
				}
			}
			if len(want) < 300 || len(seeks) != 3*len(want) {
				t.Fatalf("%s: oracle gave %d entries, %d seeks", path, len(want), len(seeks))
			}
			vals := map[string]string{}
			for _, l := range want {
				f := strings.Split(l, "\t")
				k, _ := hex.DecodeString(f[0])
				v, _ := hex.DecodeString(f[3])
				vals[string(k)] = string(v)
			}
			for _, form := range []leveldb.KeyForm{leveldb.KeysDetect, leveldb.KeysPlain} {
				tb, err := leveldb.OpenTable(path, &leveldb.TableOptions{Keys: form, NoMmap: seed%2 == 0})
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				if !tb.PlainKeys() {
					// Keys of 10+ bytes starting with eight 0xff bytes
					// (seed 0 mod 5) may give separators that are all
					// internal keys' shape; the others never do.
					if seed%5 != 0 {
						t.Errorf("%s: not detected as plain keys", path)
					}
					tb.Close()
					continue
				}
				if form == leveldb.KeysDetect {
					detected++
				}
				for _, backward := range []bool{false, true} {
					got, err := tableLines(tb, backward)
					if err != nil {
						t.Fatalf("%s: %v", path, err)
					}
					if d := diffLines(got, want); d != "" {
						t.Fatalf("%s Keys=%d backward=%v: our entries differ from leveldb::Table's: %s", path, form, backward, d)
					}
				}
				if n, err := tb.Verify(); err != nil || n != int64(len(want)) {
					t.Errorf("%s: Verify = %d, %v; want %d", path, n, err, len(want))
				}
				it := tb.NewIter(nil)
				for _, s := range seeks {
					probe, found := s[0], s[1]
					if ok := it.SeekGE(probe); ok != (found != nil) || ok && !bytes.Equal(it.Key(), found) {
						t.Fatalf("%s: SeekGE(%x) = %v at %x; LevelDB's Seek lands on %x", path, probe, ok, it.Key(), found)
					}
					e, err := tb.Get(probe, leveldb.MaxSequence)
					if v, present := vals[string(probe)]; present != (err == nil) || present && string(e.Value) != v || !present && !errors.Is(err, reader.ErrNotFound) {
						t.Fatalf("%s: Get(%x) = %+v, %v; present %v", path, probe, e, err, present)
					}
				}
				if err := it.Close(); err != nil {
					t.Fatal(err)
				}
				tb.Close()
			}
		}
	}
	if detected < 16 {
		t.Errorf("%d of 20 tables detected as plain keys", detected)
	}
	t.Logf("%d of 20 tables detected as plain keys", detected)
}

// testOracleMojang: databases LevelDB 1.23 wrote, their tables re-encoded
// into Mojang's types (each block raw deflate, a zlib stream or raw,
// drawn), read here as LevelDB read the originals; and the Bedrock world
// of testdata/mojang re-encoded into raw blocks, read by LevelDB 1.23 as
// read here from Mojang's blocks.
func testOracleMojang(t *testing.T, o *oracle) {
	for _, c := range []struct {
		seed int
		comp string
	}{{3, "snappy"}, {4, "none"}} {
		t.Run(fmt.Sprintf("seed=%d/%s", c.seed, c.comp), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			o.gen(t, dir, c.seed, c.comp, 6000)
			want, err := o.dump(t, dir)
			if err != nil {
				t.Fatal(err)
			}
			db, err := leveldb.OpenDB(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			files := db.Files()
			db.Close()
			var paths []string
			for _, f := range files {
				paths = append(paths, filepath.Join(dir, fmt.Sprintf("%06d.ldb", f.Number)))
			}
			tables := o.dumpTables(t, paths)
			rng := rand.New(rand.NewPCG(uint64(c.seed), 49))
			types := []byte{leveldb.CompressionZlibRaw, leveldb.CompressionZlibRaw, leveldb.CompressionZlib, leveldb.CompressionNone}
			mdir := filepath.Join(t.TempDir(), "mojang")
			reencodeDB(t, dir, mdir, func(uint64, int) byte { return types[rng.IntN(len(types))] })
			for _, noMmap := range []bool{false, true} {
				db, err := leveldb.OpenDB(mdir, &leveldb.Options{NoMmap: noMmap})
				if err != nil {
					t.Fatal(err)
				}
				for _, backward := range []bool{false, true} {
					got, err := ourView(db, backward)
					if err != nil {
						t.Fatal(err)
					}
					if d := diffLines(got, want); d != "" {
						t.Fatalf("NoMmap=%v backward=%v: the re-encoded database's view differs from LevelDB's of the original: %s", noMmap, backward, d)
					}
				}
				v := parseView(t, want)
				for i, k := range v.keys {
					if got, err := db.Get([]byte(k)); err != nil || string(got) != v.vals[i] {
						t.Fatalf("Get(%x) = %.40x, %v; LevelDB reads %.40x", k, got, err, v.vals[i])
					}
				}
				if _, err := db.Verify(); err != nil {
					t.Fatalf("Verify: %v", err)
				}
				for _, f := range db.Files() {
					orig := fmt.Sprintf("%06d.ldb", f.Number-100000)
					checkTableAgainstOracle(t, filepath.Join(mdir, fmt.Sprintf("%06d.ldb", f.Number)), f, tables[filepath.Join(dir, orig)], nil, noMmap)
				}
				db.Close()
			}
			t.Logf("%d tables re-encoded, %d live keys", len(files), len(want))
		})
	}
	t.Run("bedrock", func(t *testing.T) {
		src := filepath.Join("testdata", "mojang", "mctestdb")
		dir := filepath.Join(t.TempDir(), "mctestdb")
		copyDir(t, src, dir, false)
		db, err := leveldb.OpenDB(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := ourView(db, false)
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		raw := filepath.Join(t.TempDir(), "raw")
		reencodeDB(t, dir, raw, func(uint64, int) byte { return leveldb.CompressionNone })
		want, err := o.dump(t, raw)
		if err != nil {
			t.Fatal(err)
		}
		if d := diffLines(ours, want); d != "" || len(want) != 294 {
			t.Fatalf("our view of the Bedrock database differs from LevelDB 1.23's of its raw re-encoding (%d keys): %s", len(want), d)
		}
		if _, err := os.Stat(filepath.Join(raw, "100005.ldb")); err != nil {
			t.Fatalf("the re-encoded table: %v", err)
		}
	})
}
