// rocksbench is the C++ half of bench/cmd/rocksdb: it writes the benchmark's
// tables with RocksDB itself (Debian's librocksdb-dev 7.8.3) and times
// RocksDB's own reading of them, one round per process, for the Go command
// to set beside package rocksdb and Pebble v2. The Go command compiles it
// at run time: g++ -O2 -o rocksbench rocksbench.cc -lrocksdb.
//
//   rocksbench write FV TABLE DBDIR < RECORDS
//
// reads 116-byte records (a 16-byte key, a 100-byte value, in ascending
// key order) from stdin and writes TABLE with rocksdb::SstFileWriter and
// RocksDB's default BlockBasedTableOptions (4 KiB blocks, snappy, the
// default checksum) but for a full Bloom filter of 10 bits per key and,
// when FV is not 5 (the default), format_version FV with CRC-32C
// checksums. It then creates the database DBDIR and ingests a copy of
// TABLE (IngestExternalFileOptions: move_files false), so that DB::Get
// reads the very same table.
//
//   rocksbench read TABLE DBDIR KEYS CACHE_BYTES
//
// times, in this order, and prints one "figure value" line each:
//   scan, scan-cpu  a full forward scan of TABLE with a fresh
//                   rocksdb::SstFileReader's iterator: ns per entry of wall
//                   time, and of the process's CPU time (every thread's,
//                   CLOCK_PROCESS_CPUTIME_ID);
//   seek            Seek to each seek key of KEYS with one iterator of the
//                   same reader, after one untimed pass over them that
//                   warms its block cache, ns per seek;
//   get, get-absent DB::Get (into a reused PinnableSlice) of each present
//                   key, then of each absent key, in a database opened
//                   read-only over DBDIR, after one untimed pass over both
//                   lists to warm its block cache; ns per Get.
// Both the reader and the database read through an LRU block cache of
// CACHE_BYTES, the same size the Go side gives its readers. Every timed
// pass checks what it reads (the scan's count; each found key and its
// value's text tail) and exits 1 on a mismatch.
//
//   rocksbench dbwrite DBDIR < OPS
//
// creates the database DBDIR (RocksDB's defaults but for: snappy, a full
// Bloom filter of 10 bits per key, a 4 MiB write buffer, 2 MiB target
// table size, a 4 MiB level 1, so that the data spreads over level 0 and
// several deeper levels; avoid_flush_during_shutdown, so that the writes
// after the last flush stay in the write-ahead log) and applies OPS from
// stdin: records of an op byte, then a 16-byte key, then for 'P' a
// 100-byte value: 'P' put, 'D' delete (both into the current WriteBatch),
// 'B' write the batch, 'F' write it, flush the memtable and wait until no
// flush or compaction is pending or running, 'E' write it and close. It
// prints the table count of every level after the last 'F'.
//
//   rocksbench dbread DBDIR KEYS CACHE_BYTES OPENS
//
// times, on a database opened read-only (DB::OpenForReadOnly), each open
// with a new LRU block cache of CACHE_BYTES:
//   open            OPENS opens (each closed after but the last): the
//                   median, ms;
//   scan, scan-cpu  a full forward scan of the default column family with
//                   the last open's iterator (ReadOptions()), ns per entry
//                   of wall and of process CPU time; "entries" and "bytes"
//                   (the keys' and values' sizes summed) for the checks;
//   get, get-absent as for read, with the last open.
//
//   rocksbench dbverify DBDIR
//
// scans DBDIR read-only once and prints "entries N" and "fnv H": the
// 64-bit FNV-1a hash of every key then value, in scan order (in hex).
//
// KEYS: "RBK1", then little-endian uint64 counts of seek, present and
// absent keys and a uint32 text length, the text (the second half of
// value i is text[i%64 : i%64+50]), then 24-byte records: a 16-byte key
// and its number i as a little-endian uint64.

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

using namespace rocksdb;

namespace {

const size_t kKeyLen = 16, kValueLen = 100;

[[noreturn]] void die(const std::string& what, const Status& s) {
  fprintf(stderr, "rocksbench: %s: %s\n", what.c_str(), s.ToString().c_str());
  exit(1);
}

[[noreturn]] void fail(const std::string& what) {
  fprintf(stderr, "rocksbench: %s\n", what.c_str());
  exit(1);
}

// options returns the options every table, reader and database here uses:
// RocksDB's defaults, a full Bloom filter of 10 bits per key, the block
// cache given (nullptr: RocksDB's default), and format_version fv with
// CRC-32C when fv is not the default 5.
Options options(int fv, std::shared_ptr<Cache> cache) {
  BlockBasedTableOptions t;
  t.filter_policy.reset(NewBloomFilterPolicy(10));
  if (fv != 5) {
    t.format_version = fv;
    t.checksum = kCRC32c;
  }
  if (cache) t.block_cache = cache;
  Options o;
  o.table_factory.reset(NewBlockBasedTableFactory(t));
  return o;
}

int write(int fv, const std::string& table, const std::string& dbdir) {
  Options o = options(fv, nullptr);
  SstFileWriter w(EnvOptions(), o);
  Status s = w.Open(table);
  if (!s.ok()) die("open " + table, s);
  std::vector<char> rec(kKeyLen + kValueLen);
  size_t n = 0;
  while (fread(rec.data(), rec.size(), 1, stdin) == 1) {
    s = w.Put(Slice(rec.data(), kKeyLen), Slice(rec.data() + kKeyLen, kValueLen));
    if (!s.ok()) die("put", s);
    n++;
  }
  s = w.Finish();
  if (!s.ok()) die("finish " + table, s);

  o.create_if_missing = true;
  o.error_if_exists = true;
  DB* db;
  s = DB::Open(o, dbdir, &db);
  if (!s.ok()) die("create " + dbdir, s);
  IngestExternalFileOptions io;
  io.move_files = false;
  s = db->IngestExternalFile({table}, io);
  if (!s.ok()) die("ingest " + table, s);
  s = db->Close();
  if (!s.ok()) die("close " + dbdir, s);
  delete db;
  printf("wrote %zu entries\n", n);
  return 0;
}

struct Key {
  char k[kKeyLen];
  uint64_t i;
};

struct Keys {
  std::vector<Key> seek, present, absent;
  std::string text;
};

uint64_t le64(const unsigned char* p) {
  uint64_t v = 0;
  for (int j = 7; j >= 0; j--) v = v << 8 | p[j];
  return v;
}

Keys readKeys(const std::string& path) {
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) fail("cannot open " + path);
  unsigned char h[4 + 3 * 8 + 4];
  if (fread(h, sizeof h, 1, f) != 1 || memcmp(h, "RBK1", 4) != 0) fail(path + ": bad header");
  Keys k;
  uint64_t n[3] = {le64(h + 4), le64(h + 12), le64(h + 20)};
  uint32_t tl = uint32_t(le64(h + 28) & 0xffffffff);
  k.text.resize(tl);
  if (fread(&k.text[0], tl, 1, f) != 1) fail(path + ": short text");
  std::vector<Key>* lists[3] = {&k.seek, &k.present, &k.absent};
  unsigned char r[24];
  for (int l = 0; l < 3; l++) {
    for (uint64_t j = 0; j < n[l]; j++) {
      if (fread(r, 24, 1, f) != 1) fail(path + ": short");
      Key key;
      memcpy(key.k, r, kKeyLen);
      key.i = le64(r + kKeyLen);
      lists[l]->push_back(key);
    }
  }
  fclose(f);
  return k;
}

int64_t nanos(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// sink keeps what the loops read observable.
volatile size_t sink;

// checkValue exits unless v is key k's value (its text tail).
void checkValue(const Keys& ks, const Key& k, const Slice& v) {
  if (v.size() != kValueLen || memcmp(v.data() + kValueLen / 2, ks.text.data() + k.i % 64, kValueLen / 2) != 0)
    fail("wrong value for " + std::string(k.k, kKeyLen));
}

// timeGets times Gets of the present then the absent keys after an untimed
// pass over both, checking each, and prints get and get-absent.
void timeGets(DB* db, const Keys& ks) {
  ColumnFamilyHandle* cf = db->DefaultColumnFamily();
  ReadOptions ro;
  PinnableSlice v;
  auto gets = [&](const std::vector<Key>& keys, bool present) {
    for (const Key& k : keys) {
      v.Reset();
      Status s = db->Get(ro, cf, Slice(k.k, kKeyLen), &v);
      if (present) {
        if (!s.ok()) die("Get " + std::string(k.k, kKeyLen), s);
        checkValue(ks, k, v);
      } else if (!s.IsNotFound()) {
        fail("Get of absent " + std::string(k.k, kKeyLen) + ": " + s.ToString());
      }
    }
  };
  gets(ks.present, true);  // warm the block cache
  gets(ks.absent, false);
  int64_t t0 = nanos(CLOCK_MONOTONIC);
  gets(ks.present, true);
  int64_t t1 = nanos(CLOCK_MONOTONIC);
  gets(ks.absent, false);
  int64_t t2 = nanos(CLOCK_MONOTONIC);
  if (!ks.present.empty()) printf("get %.2f\n", double(t1 - t0) / ks.present.size());
  if (!ks.absent.empty()) printf("get-absent %.2f\n", double(t2 - t1) / ks.absent.size());
}

int read(const std::string& table, const std::string& dbdir, const std::string& keysPath, size_t cacheBytes) {
  Keys ks = readKeys(keysPath);
  {
    SstFileReader r(options(5, NewLRUCache(cacheBytes)));  // the table's own format is read from its footer
    Status s = r.Open(table);
    if (!s.ok()) die("open " + table, s);

    std::unique_ptr<Iterator> it(r.NewIterator(ReadOptions()));
    int64_t cpu0 = nanos(CLOCK_PROCESS_CPUTIME_ID), t0 = nanos(CLOCK_MONOTONIC);
    size_t n = 0, sum = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      n++;
      sum += it->key().size() + it->value().size();
    }
    int64_t t1 = nanos(CLOCK_MONOTONIC), cpu1 = nanos(CLOCK_PROCESS_CPUTIME_ID);
    if (!it->status().ok()) die("scan", it->status());
    sink += sum;
    uint64_t want = r.GetTableProperties()->num_entries;
    if (n != want) fail("scan: " + std::to_string(n) + " entries, want " + std::to_string(want));
    printf("entries %zu\nscan %.2f\nscan-cpu %.2f\n", n, double(t1 - t0) / n, double(cpu1 - cpu0) / n);
    it.reset();

    it.reset(r.NewIterator(ReadOptions()));
    auto seeks = [&]() {
      for (const Key& k : ks.seek) {
        it->Seek(Slice(k.k, kKeyLen));
        if (!it->Valid() || it->key() != Slice(k.k, kKeyLen)) fail("seek to " + std::string(k.k, kKeyLen) + " missed it");
        checkValue(ks, k, it->value());
      }
    };
    seeks();  // warm the block cache
    t0 = nanos(CLOCK_MONOTONIC);
    seeks();
    t1 = nanos(CLOCK_MONOTONIC);
    if (!ks.seek.empty()) printf("seek %.2f\n", double(t1 - t0) / ks.seek.size());
  }

  DB* db;
  Status s = DB::OpenForReadOnly(options(5, NewLRUCache(cacheBytes)), dbdir, &db);
  if (!s.ok()) die("open " + dbdir, s);
  timeGets(db, ks);
  delete db;
  return 0;
}

// settle waits until the database has no flush or compaction pending or
// running, twice in a row 50 ms apart (7.8.3 has no WaitForCompact).
void settle(DB* db) {
  const char* props[] = {"rocksdb.mem-table-flush-pending", "rocksdb.num-running-flushes",
                         "rocksdb.compaction-pending", "rocksdb.num-running-compactions"};
  for (int quiet = 0; quiet < 2;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    bool busy = false;
    for (const char* p : props) {
      uint64_t v = 0;
      if (!db->GetIntProperty(p, &v)) fail(std::string("no property ") + p);
      busy = busy || v != 0;
    }
    quiet = busy ? 0 : quiet + 1;
  }
}

// dbOptions are the written database's options (see dbwrite above), with
// the block cache given (nullptr: RocksDB's default).
Options dbOptions(std::shared_ptr<Cache> cache) {
  Options o = options(5, cache);
  o.compression = kSnappyCompression;
  o.write_buffer_size = 4 << 20;
  o.target_file_size_base = 2 << 20;
  o.max_bytes_for_level_base = 4 << 20;
  o.avoid_flush_during_shutdown = true;
  return o;
}

int dbwrite(const std::string& dbdir) {
  Options o = dbOptions(nullptr);
  o.create_if_missing = true;
  o.error_if_exists = true;
  DB* db;
  Status s = DB::Open(o, dbdir, &db);
  if (!s.ok()) die("create " + dbdir, s);
  WriteBatch b;
  auto commit = [&]() {
    if (b.Count() == 0) return;
    Status s = db->Write(WriteOptions(), &b);
    if (!s.ok()) die("write", s);
    b.Clear();
  };
  std::string levels;
  size_t ops = 0;
  char rec[kKeyLen + kValueLen];
  for (int op; (op = getchar()) != EOF;) {
    if (op == 'P' || op == 'D') {
      size_t n = kKeyLen + (op == 'P' ? kValueLen : 0);
      if (fread(rec, n, 1, stdin) != 1) fail("short op");
      s = op == 'P' ? b.Put(Slice(rec, kKeyLen), Slice(rec + kKeyLen, kValueLen)) : b.Delete(Slice(rec, kKeyLen));
      if (!s.ok()) die("batch", s);
      ops++;
    } else if (op == 'B') {
      commit();
    } else if (op == 'F') {
      commit();
      s = db->Flush(FlushOptions());
      if (!s.ok()) die("flush", s);
      settle(db);
      levels.clear();
      for (int l = 0; l < db->NumberLevels(); l++) {
        std::string v;
        db->GetProperty("rocksdb.num-files-at-level" + std::to_string(l), &v);
        if (v != "0") levels += " L" + std::to_string(l) + " " + v;
      }
    } else if (op == 'E') {
      commit();
      s = db->Close();
      if (!s.ok()) die("close " + dbdir, s);
      delete db;
      printf("%zu writes; tables at the last flush:%s\n", ops, levels.c_str());
      return 0;
    } else {
      fail("unknown op " + std::to_string(op));
    }
  }
  fail("no 'E' at the end of the ops");
}

int dbread(const std::string& dbdir, const std::string& keysPath, size_t cacheBytes, int opens) {
  Keys ks = readKeys(keysPath);
  std::vector<double> ms;
  DB* db = nullptr;
  for (int i = 0; i < opens; i++) {
    Options o = dbOptions(NewLRUCache(cacheBytes));
    int64_t t0 = nanos(CLOCK_MONOTONIC);
    Status s = DB::OpenForReadOnly(o, dbdir, &db);
    int64_t t1 = nanos(CLOCK_MONOTONIC);
    if (!s.ok()) die("open " + dbdir, s);
    ms.push_back(double(t1 - t0) / 1e6);
    if (i < opens - 1) {
      delete db;
      db = nullptr;
    }
  }
  std::sort(ms.begin(), ms.end());
  double med = ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  printf("open %.4f\n", med);

  std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
  int64_t cpu0 = nanos(CLOCK_PROCESS_CPUTIME_ID), t0 = nanos(CLOCK_MONOTONIC);
  size_t n = 0, sum = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    n++;
    sum += it->key().size() + it->value().size();
  }
  int64_t t1 = nanos(CLOCK_MONOTONIC), cpu1 = nanos(CLOCK_PROCESS_CPUTIME_ID);
  if (!it->status().ok()) die("scan", it->status());
  it.reset();
  sink += sum;
  printf("entries %zu\nbytes %zu\nscan %.2f\nscan-cpu %.2f\n", n, sum, double(t1 - t0) / n, double(cpu1 - cpu0) / n);
  timeGets(db, ks);
  delete db;
  return 0;
}

int dbverify(const std::string& dbdir) {
  DB* db;
  Status s = DB::OpenForReadOnly(dbOptions(nullptr), dbdir, &db);
  if (!s.ok()) die("open " + dbdir, s);
  std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
  uint64_t h = 14695981039346656037ull;
  size_t n = 0;
  auto add = [&](const Slice& x) {
    for (size_t j = 0; j < x.size(); j++) h = (h ^ (unsigned char)x[j]) * 1099511628211ull;
  };
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    add(it->key());
    add(it->value());
    n++;
  }
  if (!it->status().ok()) die("scan", it->status());
  it.reset();
  delete db;
  printf("entries %zu\nfnv %016" PRIx64 "\n", n, h);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  if (a.size() == 4 && a[0] == "write") return write(atoi(a[1].c_str()), a[2], a[3]);
  if (a.size() == 5 && a[0] == "read") return read(a[1], a[2], a[3], strtoull(a[4].c_str(), nullptr, 10));
  if (a.size() == 2 && a[0] == "dbwrite") return dbwrite(a[1]);
  if (a.size() == 5 && a[0] == "dbread") return dbread(a[1], a[2], strtoull(a[3].c_str(), nullptr, 10), atoi(a[4].c_str()));
  if (a.size() == 2 && a[0] == "dbverify") return dbverify(a[1]);
  fprintf(stderr,
          "usage: rocksbench write FV TABLE DBDIR < RECORDS\n       rocksbench read TABLE DBDIR KEYS CACHE_BYTES\n"
          "       rocksbench dbwrite DBDIR < OPS\n       rocksbench dbread DBDIR KEYS CACHE_BYTES OPENS\n       rocksbench dbverify DBDIR\n");
  return 2;
}
