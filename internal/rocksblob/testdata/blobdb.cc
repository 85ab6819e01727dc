// blobdb writes RocksDB databases with integrated BlobDB (enable_blob_files)
// for package rocksblob's tests, and records what RocksDB itself reads.
//
//   blobdb DIR            the test matrix: one database per blob compression
//   blobdb -golden DIR    two small databases, for testdata/golden
//
// Each database DIR/NAME gets a transcript DIR/NAME.txt, one line each:
//
//   put SEQ KEYHEX VALUEHEX   a Put and the sequence number it was given
//   del SEQ KEYHEX            a Delete and its sequence number
//   get KEYHEX VALUEHEX       DB::Get's value of the key once all is written
//   get KEYHEX -              DB::Get found nothing
//
// (an empty key or value is the hex "_"). DIR/manifest lists the databases:
// NAME, the blob compression type, min_blob_size.
#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <random>
#include <string>
#include <vector>

using namespace rocksdb;

static void check(const Status& s, const char* what) {
  if (!s.ok()) {
    fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    exit(1);
  }
}

static std::string hex(const std::string& s) {
  if (s.empty()) return "_";
  static const char* d = "0123456789abcdef";
  std::string out;
  out.reserve(2 * s.size());
  for (unsigned char c : s) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

struct Config {
  std::string name;
  CompressionType blob_compression;
  CompressionType table_compression;
  bool gc;        // blob garbage collection in a final full compaction
  bool big;       // a 1 MiB value among the writes
  int keys;       // distinct random keys besides the special ones
  uint64_t seed;
  // RocksDB 7.8's bzip2 fails on a blob that does not shrink ("Error
  // compressing blob"): only text, and no small blobs.
  bool text_only;
  uint64_t min_blob;
  size_t max_value;  // values are at most this long (the 1 MiB one aside)
};

// value returns n bytes: compressible text, or random bytes (which some
// codecs expand: RocksDB stores a blob compressed even then).
static std::string value(std::mt19937_64& rng, size_t n, bool text_only) {
  std::string v(n, '\0');
  bool random = rng() % 3 == 0 && !text_only;
  for (size_t i = 0; i < n; i++) {
    v[i] = random ? char(rng()) : "abcdefgh "[(i / 7 + rng() % 2) % 9];
  }
  return v;
}

static void run(const std::string& dir, const Config& c) {
  std::string path = dir + "/" + c.name;
  Options o;
  o.create_if_missing = true;
  o.error_if_exists = true;
  o.disable_auto_compactions = true;
  o.enable_blob_files = true;
  o.min_blob_size = c.min_blob;
  o.blob_file_size = 64 << 10;  // several blob files per flush
  o.blob_compression_type = c.blob_compression;
  o.compression = c.table_compression;
  o.enable_blob_garbage_collection = c.gc;
  o.blob_garbage_collection_age_cutoff = 1.0;
  DB* db;
  check(DB::Open(o, path, &db), "open");

  FILE* out = fopen((path + ".txt").c_str(), "w");
  if (!out) {
    perror("transcript");
    exit(1);
  }
  std::mt19937_64 rng(c.seed);
  std::vector<std::string> keys = {std::string(), std::string("\0", 1),
                                   std::string("\xff"), std::string("\xff\xff"),
                                   std::string("\x00\xff", 2)};
  for (int i = 0; i < c.keys; i++) {
    std::string k(1 + rng() % 24, '\0');
    for (auto& ch : k) ch = char(rng());
    keys.push_back(k);
  }
  static const size_t sizes[] = {0, 1, 19, 20, 21, 100, 1000, 5000, 20000};
  auto put = [&](const std::string& k, const std::string& v) {
    check(db->Put(WriteOptions(), k, v), "put");
    fprintf(out, "put %llu %s %s\n",
            (unsigned long long)db->GetLatestSequenceNumber(), hex(k).c_str(),
            hex(v).c_str());
  };
  auto del = [&](const std::string& k) {
    check(db->Delete(WriteOptions(), k), "delete");
    fprintf(out, "del %llu %s\n",
            (unsigned long long)db->GetLatestSequenceNumber(), hex(k).c_str());
  };
  // Three flushes: every key, then overwrites and deletes of some, so the
  // tables hold blob indexes into older and newer blob files.
  for (int round = 0; round < 3; round++) {
    for (size_t i = 0; i < keys.size(); i++) {
      if (round > 0 && rng() % 3 != 0) continue;
      if (round == 2 && rng() % 4 == 0) {
        del(keys[i]);
        continue;
      }
      size_t n = sizes[rng() % (sizeof sizes / sizeof sizes[0])];
      n = std::min(n, c.max_value);
      if (i < 5) n = c.min_blob + i;  // the special keys' values go to blob files
      put(keys[i], value(rng, n, c.text_only));
    }
    if (c.big && round == 1) put(keys[6], value(rng, 1 << 20, c.text_only));
    check(db->Flush(FlushOptions()), "flush");
  }
  if (c.gc) {
    // A full compaction relocates every blob into new blob files.
    CompactRangeOptions cro;
    cro.blob_garbage_collection_policy = BlobGarbageCollectionPolicy::kForce;
    cro.blob_garbage_collection_age_cutoff = 1.0;
    check(db->CompactRange(cro, nullptr, nullptr), "compact");
  }
  for (const auto& k : keys) {
    std::string v;
    Status s = db->Get(ReadOptions(), k, &v);
    if (s.IsNotFound()) {
      fprintf(out, "get %s -\n", hex(k).c_str());
      continue;
    }
    check(s, "get");
    fprintf(out, "get %s %s\n", hex(k).c_str(), hex(v).c_str());
  }
  fclose(out);
  check(db->Close(), "close");
  delete db;
}

int main(int argc, char** argv) {
  bool golden = argc == 3 && strcmp(argv[1], "-golden") == 0;
  if (argc != 2 && !golden) {
    fprintf(stderr, "usage: blobdb [-golden] DIR\n");
    return 2;
  }
  std::string dir = argv[argc - 1];
  std::vector<Config> cs;
  if (golden) {
    cs = {
        {"golden-snappy", kSnappyCompression, kNoCompression, false, false, 12, 7, false, 20, 1000},
        {"golden-zstd", kZSTD, kSnappyCompression, false, false, 12, 8, false, 20, 1000},
    };
  } else {
    cs = {
        {"none", kNoCompression, kSnappyCompression, false, true, 150, 1, false, 20, 1 << 30},
        {"snappy", kSnappyCompression, kNoCompression, false, true, 150, 2, false, 20, 1 << 30},
        {"zlib", kZlibCompression, kSnappyCompression, false, false, 150, 3, false, 20, 1 << 30},
        {"bzip2", kBZip2Compression, kSnappyCompression, false, false, 150, 4, true, 1000, 1 << 30},
        {"lz4", kLZ4Compression, kLZ4Compression, false, true, 150, 5, false, 20, 1 << 30},
        {"lz4hc", kLZ4HCCompression, kSnappyCompression, false, false, 150, 6, false, 20, 1 << 30},
        {"zstd", kZSTD, kZSTD, false, true, 150, 7, false, 20, 1 << 30},
        {"zstd-notfinal", kZSTDNotFinalCompression, kNoCompression, false, false, 150, 10, false, 20, 1 << 30},
        {"zstd-gc", kZSTD, kSnappyCompression, true, false, 150, 8, false, 20, 1 << 30},
        {"none-gc", kNoCompression, kNoCompression, true, true, 150, 9, false, 20, 1 << 30},
    };
  }
  FILE* m = fopen((dir + "/manifest").c_str(), "w");
  if (!m) {
    perror("manifest");
    return 1;
  }
  for (const auto& c : cs) {
    run(dir, c);
    fprintf(m, "%s %d %llu\n", c.name.c_str(), int(c.blob_compression),
            (unsigned long long)c.min_blob);
  }
  fclose(m);
  printf("wrote %zu databases\n", cs.size());
  return 0;
}
