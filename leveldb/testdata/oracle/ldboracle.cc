// ldboracle: the real LevelDB (1.23, Debian's libleveldb-dev) as an
// oracle for package leveldb's tests (leveldb/oracle_test.go), which
// compile it at test time:
//
//   g++ -O1 -o ldboracle ldboracle.cc -lleveldb
//
// Modes:
//
//   gen DIR SEED snappy|none [NOPS]
//       creates a database in DIR by a random workload through LevelDB's
//       own API (puts, overwrites, deletes, write batches, binary keys with
//       0x00 and 0xff bytes, the empty key, keys that are prefixes of
//       others, empty and large values, partial CompactRange calls), with a
//       64 KiB write buffer so there are many tables on several levels, and
//       writes a last batch after the final flush, left in the log at close.
//       Prints "lastseq N" (the sequence number of the last write), then
//       "level L N" for each level holding N > 0 tables, then "ops N".
//   dump DIR
//       opens the database (it writes to DIR: run it on a copy) and prints
//       its live view through LevelDB's iterator, one "hexkey\thexvalue"
//       line per key. Exit status 1, the error on stderr, if it cannot.
//   dumptable FILE...
//       opens each table with leveldb::Table and prints a "# FILE" line,
//       then every internal entry: "hexuserkey\tseq\tkind\thexvalue".
//   hold DIR SECONDS
//       opens the database, prints "locked", and keeps it open until its
//       standard input closes or SECONDS pass.
//   plaintable FILE SEED snappy|none
//       writes a table of plain keys with leveldb::TableBuilder (no
//       database: the keys are the user's, with no internal key trailer)
//       over edge keys: the empty key, keys of 0x00 and 0xff bytes, keys
//       of 8 bytes and more whose bytes 8 from the end (an internal key's
//       kind) and last byte are 0x00 or 0x01; SEED 0 mod 5 draws only
//       keys of 10+ bytes starting with eight 0xff bytes, whose
//       separators are all 8 bytes or more. Then it reopens the table
//       with leveldb::Table and prints every entry, "hexkey\thexvalue",
//       a line "# seeks", then for probe keys (each key, each with 0x00
//       appended and with its last byte dropped) "hexprobe\thexfound"
//       where found is the key Iterator::Seek lands on, or "-" past the
//       end.
#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/filter_policy.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>
#include <leveldb/table_builder.h>
#include <leveldb/write_batch.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const std::string& what, const leveldb::Status& s) {
  fprintf(stderr, "ldboracle: %s: %s\n", what.c_str(), s.ToString().c_str());
  exit(1);
}

struct Rng {
  uint64_t s;
  uint64_t next() {  // splitmix64
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint32_t n(uint32_t m) { return static_cast<uint32_t>(next() % m); }
  bool p(uint32_t percent) { return n(100) < percent; }
};

void appendHex(std::string* out, const leveldb::Slice& s) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < s.size(); i++) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out->push_back(digits[c >> 4]);
    out->push_back(digits[c & 15]);
  }
}

void flush(std::string* out) {
  fwrite(out->data(), 1, out->size(), stdout);
  out->clear();
}

char keyByte(Rng& r) {
  switch (r.n(8)) {
    case 0: return '\x00';
    case 1: return '\xff';
    case 2: return static_cast<char>(r.n(2) ? 0x01 : 0xfe);
    case 3: case 4: return static_cast<char>('a' + r.n(4));
    default: return static_cast<char>(r.n(256));
  }
}

// The key pool: random binary keys, prefixes and extensions of them, the
// empty key, and runs of ordered keys.
std::vector<std::string> makeKeys(Rng& r, int n) {
  std::vector<std::string> keys;
  keys.push_back("");
  while (static_cast<int>(keys.size()) < n) {
    uint32_t kind = r.n(10);
    if (kind < 5 || keys.size() < 10) {
      std::string k;
      int len = 1 + r.n(r.p(20) ? 40 : 12);
      for (int i = 0; i < len; i++) k.push_back(keyByte(r));
      keys.push_back(k);
    } else if (kind < 7) {  // a prefix of another key
      const std::string& o = keys[r.n(keys.size())];
      if (o.size() > 1) keys.push_back(o.substr(0, 1 + r.n(o.size() - 1)));
    } else if (kind < 9) {  // an extension of another key
      std::string k = keys[r.n(keys.size())];
      int len = 1 + r.n(4);
      for (int i = 0; i < len; i++) k.push_back(r.p(50) ? '\x00' : keyByte(r));
      keys.push_back(k);
    } else {  // ordered keys, so that some flushes overlap nothing
      char buf[32];
      snprintf(buf, sizeof buf, "ord%08u", static_cast<unsigned>(keys.size()));
      keys.push_back(buf);
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

std::string makeValue(Rng& r) {
  size_t len;
  uint32_t c = r.n(100);
  if (c < 6) {
    len = 0;
  } else if (c < 80) {
    len = 1 + r.n(120);
  } else if (c < 96) {
    len = 120 + r.n(1000);
  } else {
    len = 4097 + r.n(12000);  // larger than a block
  }
  std::string v;
  v.reserve(len);
  bool compressible = r.p(70);
  while (v.size() < len) {
    if (compressible && r.p(50)) {
      v.append(std::min<size_t>(len - v.size(), 1 + r.n(24)), static_cast<char>('A' + r.n(6)));
    } else {
      v.push_back(static_cast<char>(r.n(256)));
    }
  }
  return v;
}

// NoSyncEnv is the default Env without fsync: the test's databases need
// not survive a crash, and syncing each table and MANIFEST write makes
// gen many times slower on a busy disk.
class NoSyncFile : public leveldb::WritableFile {
 public:
  explicit NoSyncFile(leveldb::WritableFile* f) : f_(f) {}
  ~NoSyncFile() override { delete f_; }
  leveldb::Status Append(const leveldb::Slice& data) override { return f_->Append(data); }
  leveldb::Status Close() override { return f_->Close(); }
  leveldb::Status Flush() override { return f_->Flush(); }
  leveldb::Status Sync() override { return f_->Flush(); }

 private:
  leveldb::WritableFile* f_;
};

class NoSyncEnv : public leveldb::EnvWrapper {
 public:
  NoSyncEnv() : leveldb::EnvWrapper(leveldb::Env::Default()) {}
  leveldb::Status NewWritableFile(const std::string& name, leveldb::WritableFile** result) override {
    leveldb::Status s = target()->NewWritableFile(name, result);
    if (s.ok()) *result = new NoSyncFile(*result);
    return s;
  }
  leveldb::Status NewAppendableFile(const std::string& name, leveldb::WritableFile** result) override {
    leveldb::Status s = target()->NewAppendableFile(name, result);
    if (s.ok()) *result = new NoSyncFile(*result);
    return s;
  }
};

int gen(const char* dir, uint64_t seed, const char* comp, int nops) {
  Rng r{seed * 0x51ed270b27c2f1ffULL + 12345};
  leveldb::Options o;
  o.create_if_missing = true;
  o.error_if_exists = true;
  static NoSyncEnv env;
  o.env = &env;
  o.write_buffer_size = 64 << 10;  // LevelDB's smallest
  o.max_file_size = 1 << 20;       // LevelDB's smallest
  static const int restarts[] = {16, 4, 1, 16, 8, 2};
  static const size_t blocks[] = {4096, 1024, 2048};
  o.block_restart_interval = restarts[seed % 6];
  o.block_size = blocks[seed % 3];
  const leveldb::FilterPolicy* filter = nullptr;
  if (seed % 4 != 3) filter = leveldb::NewBloomFilterPolicy(10);
  o.filter_policy = filter;
  if (strcmp(comp, "snappy") == 0) {
    o.compression = leveldb::kSnappyCompression;
  } else if (strcmp(comp, "none") == 0) {
    o.compression = leveldb::kNoCompression;
  } else {
    fprintf(stderr, "ldboracle: compression %s: want snappy or none\n", comp);
    return 2;
  }
  leveldb::DB* db;
  leveldb::Status s = leveldb::DB::Open(o, dir, &db);
  if (!s.ok()) die(std::string("open ") + dir, s);

  std::vector<std::string> keys = makeKeys(r, 200 + nops / 2);
  // Writes come in phases, each to a window of the sorted keys (and a few
  // anywhere), so that tables cover parts of the key space, compactions
  // leave others alone and flushes that overlap nothing go to level 2;
  // keys are overwritten and deleted many times over, in several tables.
  size_t window = 0, windowStart = 0;
  uint32_t anywhere = 0;
  auto pick = [&]() -> const std::string& {
    if (window == 0 || r.p(anywhere)) return keys[r.n(keys.size())];
    return keys[windowStart + r.n(window)];
  };
  auto newPhase = [&]() {
    window = std::max<size_t>(8, keys.size() / (4 + r.n(12)));
    windowStart = r.n(keys.size() - window + 1);
    static const uint32_t anywheres[] = {0, 0, 1, 3, 10};
    anywhere = anywheres[r.n(5)];
  };
  int nextPhase = 0;
  uint64_t seq = 0;
  leveldb::WriteOptions wo;
  auto one = [&](leveldb::WriteBatch* b) {
    const std::string& k = pick();
    if (r.p(22)) {
      b->Delete(k);
    } else {
      b->Put(k, makeValue(r));
    }
    seq++;
  };
  int done = 0;
  int nextCompact = nops / 5 + r.n(nops / 5 + 1);
  while (done < nops) {
    if (done >= nextPhase) {
      newPhase();
      nextPhase = done + nops / 20 + r.n(nops / 10 + 1);
    }
    leveldb::WriteBatch b;
    int n = r.p(85) ? 1 : 2 + r.n(40);
    for (int i = 0; i < n; i++) one(&b);
    done += n;
    s = db->Write(wo, &b);
    if (!s.ok()) die("write", s);
    if (done >= nextCompact) {
      nextCompact = done + nops / 6 + r.n(nops / 4 + 1);
      // A part of the keys: a twentieth, or from one key to the end.
      size_t i = r.n(keys.size()), j = std::min(keys.size() - 1, i + keys.size() / 20);
      std::string a = keys[i], z = keys[j];
      leveldb::Slice as(a), zs(z);
      uint32_t c = r.n(6);
      db->CompactRange(&as, c == 0 ? nullptr : &zs);
    }
  }
  // The final flush (CompactRange flushes the memtable first), over a part
  // of the keys only.
  {
    size_t i = r.n(keys.size() - keys.size() / 20);
    std::string a = keys[i], z = keys[i + keys.size() / 20];
    leveldb::Slice as(a), zs(z);
    db->CompactRange(&as, &zs);
  }
  // The last writes, left in the log: small values so that no flush comes.
  int last = 60 + r.n(200);
  for (int i = 0; i < last;) {
    leveldb::WriteBatch b;
    int n = r.p(70) ? 1 : 2 + r.n(10);
    for (int j = 0; j < n; j++) {
      const std::string& k = pick();
      if (r.p(30)) {
        b.Delete(k);
      } else {
        std::string v = makeValue(r);
        if (v.size() > 200) v.resize(200);
        b.Put(k, v);
      }
      seq++;
    }
    i += n;
    done += n;
    s = db->Write(wo, &b);
    if (!s.ok()) die("write", s);
  }
  std::string out = "lastseq " + std::to_string(seq) + "\n";
  for (int level = 0; level < 7; level++) {
    std::string v;
    if (db->GetProperty("leveldb.num-files-at-level" + std::to_string(level), &v) && v != "0") {
      out += "level " + std::to_string(level) + " " + v + "\n";
    }
  }
  out += "ops " + std::to_string(done) + "\n";
  delete db;  // no flush at close: the last writes stay in the log
  delete filter;
  flush(&out);
  return 0;
}

int dump(const char* dir) {
  leveldb::Options o;
  static NoSyncEnv env;
  o.env = &env;
  o.create_if_missing = false;
  leveldb::DB* db;
  leveldb::Status s = leveldb::DB::Open(o, dir, &db);
  if (!s.ok()) die(std::string("open ") + dir, s);
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  leveldb::Iterator* it = db->NewIterator(ro);
  std::string out;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    appendHex(&out, it->key());
    out.push_back('\t');
    appendHex(&out, it->value());
    out.push_back('\n');
    if (out.size() > (1 << 20)) flush(&out);
  }
  if (!it->status().ok()) die("iterate", it->status());
  flush(&out);
  delete it;
  delete db;
  return 0;
}

int dumptable(int n, char** files) {
  leveldb::Env* env = leveldb::Env::Default();
  std::string out;
  for (int i = 0; i < n; i++) {
    std::string path = files[i];
    leveldb::RandomAccessFile* file;
    leveldb::Status s = env->NewRandomAccessFile(path, &file);
    if (!s.ok()) die(path, s);
    uint64_t size;
    s = env->GetFileSize(path, &size);
    if (!s.ok()) die(path, s);
    leveldb::Options o;
    leveldb::Table* table;
    s = leveldb::Table::Open(o, file, size, &table);
    if (!s.ok()) die(path, s);
    leveldb::ReadOptions ro;
    ro.verify_checksums = true;
    ro.fill_cache = false;
    leveldb::Iterator* it = table->NewIterator(ro);
    out += "# " + path + "\n";
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      leveldb::Slice k = it->key();
      if (k.size() < 8) die(path, leveldb::Status::Corruption("internal key too short"));
      uint64_t t = 0;
      for (int j = 7; j >= 0; j--) t = (t << 8) | static_cast<unsigned char>(k[k.size() - 8 + j]);
      appendHex(&out, leveldb::Slice(k.data(), k.size() - 8));
      out += "\t" + std::to_string(t >> 8) + "\t" + std::to_string(t & 0xff) + "\t";
      appendHex(&out, it->value());
      out.push_back('\n');
      if (out.size() > (1 << 20)) flush(&out);
    }
    if (!it->status().ok()) die(path, it->status());
    delete it;
    delete table;
    delete file;
  }
  flush(&out);
  return 0;
}

int hold(const char* dir, int seconds) {
  leveldb::Options o;
  leveldb::DB* db;
  leveldb::Status s = leveldb::DB::Open(o, dir, &db);
  if (!s.ok()) die(std::string("open ") + dir, s);
  printf("locked\n");
  fflush(stdout);
  alarm(seconds);  // a safety net: SIGALRM ends the process
  char buf[64];
  while (read(0, buf, sizeof buf) > 0) {
  }
  delete db;
  return 0;
}

// plainKeys draws the keys of plaintable.
std::vector<std::string> plainKeys(Rng& r, uint64_t seed) {
  std::vector<std::string> keys;
  bool longOnly = seed % 5 == 0;
  int n = 300 + r.n(1200);
  if (!longOnly) {
    keys = makeKeys(r, n / 2);
    keys.push_back("");
    keys.push_back(std::string(1, '\x00'));
    keys.push_back(std::string(9, '\x00'));
    keys.push_back(std::string(1, '\xff'));
    keys.push_back(std::string(12, '\xff'));
  }
  while (static_cast<int>(keys.size()) < n) {
    std::string k = longOnly ? std::string(8, '\xff') : std::string();
    int extra = r.n(4);
    for (int i = 0; i < extra; i++) k.push_back(keyByte(r));
    // The last 8 bytes as an internal key's trailer would read: a kind
    // of 0 or 1 first, then a sequence number, its top byte often 0 or 1.
    k.push_back(static_cast<char>(r.n(2)));
    for (int i = 0; i < 6; i++) k.push_back(r.p(50) ? keyByte(r) : '\x00');
    k.push_back(static_cast<char>(r.p(70) ? r.n(2) : r.n(256)));
    keys.push_back(k);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

int plaintable(const char* path, uint64_t seed, const char* comp) {
  Rng r{seed * 0x2545f4914f6cdd1dULL + 99};
  leveldb::Options o;
  static const int restarts[] = {16, 1, 4};
  static const size_t blocks[] = {4096, 256, 1024, 64};
  o.block_restart_interval = restarts[seed % 3];
  o.block_size = blocks[seed % 4];
  const leveldb::FilterPolicy* filter = nullptr;
  if (seed % 2 == 1) filter = leveldb::NewBloomFilterPolicy(10);
  o.filter_policy = filter;
  o.compression = strcmp(comp, "snappy") == 0 ? leveldb::kSnappyCompression : leveldb::kNoCompression;
  std::vector<std::string> keys = plainKeys(r, seed);
  leveldb::Env* env = leveldb::Env::Default();
  leveldb::WritableFile* wf;
  leveldb::Status s = env->NewWritableFile(path, &wf);
  if (!s.ok()) die(path, s);
  leveldb::TableBuilder* tb = new leveldb::TableBuilder(o, wf);
  for (const std::string& k : keys) {
    std::string v = makeValue(r);
    if (v.size() > 600) v.resize(600);
    tb->Add(k, v);
  }
  s = tb->Finish();
  if (!s.ok()) die("finish", s);
  delete tb;
  s = wf->Close();
  if (!s.ok()) die("close", s);
  delete wf;

  leveldb::RandomAccessFile* file;
  s = env->NewRandomAccessFile(path, &file);
  if (!s.ok()) die(path, s);
  uint64_t size;
  s = env->GetFileSize(path, &size);
  if (!s.ok()) die(path, s);
  leveldb::Table* table;
  s = leveldb::Table::Open(o, file, size, &table);
  if (!s.ok()) die(path, s);
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  leveldb::Iterator* it = table->NewIterator(ro);
  std::string out;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    appendHex(&out, it->key());
    out.push_back('\t');
    appendHex(&out, it->value());
    out.push_back('\n');
  }
  if (!it->status().ok()) die(path, it->status());
  out += "# seeks\n";
  for (const std::string& k : keys) {
    std::string probes[] = {k, k + std::string(1, '\x00'), k.substr(0, k.empty() ? 0 : k.size() - 1)};
    for (const std::string& p : probes) {
      it->Seek(p);
      appendHex(&out, p);
      out.push_back('\t');
      if (it->Valid()) {
        appendHex(&out, it->key());
      } else {
        out.push_back('-');
      }
      out.push_back('\n');
    }
    if (out.size() > (1 << 20)) flush(&out);
  }
  if (!it->status().ok()) die(path, it->status());
  flush(&out);
  delete it;
  delete table;
  delete file;
  delete filter;
  return 0;
}

int usage() {
  fprintf(stderr,
          "usage: ldboracle gen DIR SEED snappy|none [NOPS]\n"
          "       ldboracle dump DIR\n"
          "       ldboracle dumptable FILE...\n"
          "       ldboracle hold DIR SECONDS\n"
          "       ldboracle plaintable FILE SEED snappy|none\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  std::string mode = argv[1];
  if (mode == "gen" && (argc == 5 || argc == 6)) {
    return gen(argv[2], strtoull(argv[3], nullptr, 10), argv[4], argc == 6 ? atoi(argv[5]) : 12000);
  }
  if (mode == "dump" && argc == 3) return dump(argv[2]);
  if (mode == "dumptable" && argc >= 3) return dumptable(argc - 2, argv + 2);
  if (mode == "hold" && argc == 4) return hold(argv[2], atoi(argv[3]));
  if (mode == "plaintable" && argc == 5) return plaintable(argv[2], strtoull(argv[3], nullptr, 10), argv[4]);
  return usage();
}
