// dboracle: RocksDB itself (Debian's librocksdb-dev 7.8.3) as the oracle
// for package rocksdb's database reader (rocksdb/dboracle_test.go, which
// compiles it at test time):
//
//   g++ -O1 -std=c++17 -o dboracle dboracle.cc -lrocksdb
//
// Modes:
//
//   gen [-small] OUTDIR SEED...
//       for each SEED, runs `write` in a child process, then `dump` of
//       its database into OUTDIR/sSEED/want.
//   write [-small] OUTDIR SEED
//       runs SEED's random workload into OUTDIR/sSEED/db through RocksDB's
//       own API and leaves it without a final flush: closed, or (in the
//       seeds with recycled logs) abandoned as by a crash, since only a
//       crash leaves a recycled log's stale tail (a log is truncated to
//       its contents when closed). Beside the database (never in it):
//         info    the workload's settings and what it left: "config
//                 key=value...", "lastseq N", "cf NAME levels L0=N...
//                 blobs=N" (from GetColumnFamilyMetaData), "wal NAME SIZE"
//         probes  "CF<TAB>HEXKEY" lines: the keys to Get in each column
//                 family (written, deleted, range-deletion bounds,
//                 neighbours, never written; a dropped family's too)
//         final   the view the writing process read just before it
//                 closed (or abandoned) the database: dump's @cf and
//                 @view sections
//       -small writes the small databases of the golden corpus.
//   dump PROBES DIR OUT [DIR OUT]...
//       for each DIR: copies it to OUT.copy, opens the copy with
//       DB::OpenForReadOnly (default DBOptions, so the WAL recovery mode
//       is kPointInTimeRecovery; every column family, with the merge
//       operator its name implies) and writes to OUT:
//         @lastseq N              GetLatestSequenceNumber
//         @cf NAME                per column family, in ListColumnFamilies'
//                                 order (default first, then by ID):
//         @view                   the iterator's view, "HEXKEY<TAB>HEXVALUE"
//         !ok | !error MSG        lines, then the iterator's status
//         @merged-view            (a family with a merge operator) the keys
//                                 the operator merged while reading the view
//         @gets                   a Get per probe of the family:
//                                 "HEXKEY<TAB>HEXVALUE", "HEXKEY<TAB>-"
//                                 (not found) or "HEXKEY<TAB>!error MSG"
//         @merged-gets            (a family with a merge operator) the
//                                 probes whose Get called the operator
//         @touched NAME HOW       each file of the copy the open created,
//                                 changed or removed
//       or a single "@open-error MSG" line when it cannot open the copy.
//       The @merged sections are where a reader without the operator must
//       fail. They are recorded by wrapping the operator rather than by a
//       read without one, because RocksDB 7.8.3 then refuses to open a
//       database whose logs hold merge records at all ("Corruption: SST
//       file is ahead of WALs in CF default": replaying the merge into a
//       memtable without an operator fails, which ends the replay early).
//       OUT.copy is removed afterwards.
//   hold DIR
//       opens the database read-write (every column family), prints
//       "locked" and keeps it open until its standard input closes.
//
// Column families and their merge operators (by name, here and in the
// Go test): "cf-with-append" uses StringAppendOperator (delimiter ','),
// "cf-with-add" UInt64AddOperator, both this program's own classes under
// RocksDB's names and with the semantics of RocksDB's
// utilities/merge_operators (not in Debian's shared library's headers).
//
// The workload (per seed, deterministic in what it writes; background
// flushes and compactions make the file layout vary from run to run):
// column families default, cf-with-append, cf-with-add, cf-blob, and in
// some seeds cf-recreated (dropped and re-created under the same name,
// or dropped for good) and cf-wal-only (created at the end, written only
// to the log); binary keys with the empty key, 0x00 and 0xff runs, keys
// of 8 bytes and more; empty, large (> 4 KiB) and very large (> 64 KiB)
// values; overwrites, deletes, single deletes (only on keys put once
// since their last single delete, never range-deleted or merged),
// range deletions, merges; write batches over several families; a 64 KiB
// write buffer and target file size, so level 0 and deeper levels; manual
// flushes, partial CompactRange calls and snapshots held across them (so
// tables hold several versions of a key); blob files (enable_blob_files,
// small min_blob_size and blob_file_size, blob compression none, snappy,
// lz4 or zstd, blob garbage collection in some seeds); table compressions,
// checksums and format versions varying by seed and family;
// recycle_log_file_num (then with a single column family and
// kSkipAnyCorruptedRecords, the only way RocksDB 7.8.3 recycles logs
// without crashing, and ending in a crash) and atomic_flush in some
// seeds; and an ending left only in the write-ahead log
// (avoid_flush_during_shutdown): one last batch in the default family,
// or writes to every family with one family flushed in between (so the
// log holds records below that family's log number), or a family that
// only the log knows.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/wide_columns.h>
#include <rocksdb/write_batch.h>

using namespace rocksdb;
namespace fs = std::filesystem;

namespace {

[[noreturn]] void die(const std::string& what, const Status& s) {
  std::fprintf(stderr, "dboracle: %s: %s\n", what.c_str(), s.ToString().c_str());
  std::exit(1);
}

[[noreturn]] void dieMsg(const std::string& what) {
  std::fprintf(stderr, "dboracle: %s\n", what.c_str());
  std::exit(1);
}

void check(const std::string& what, const Status& s) {
  if (!s.ok()) die(what, s);
}

std::string hex(const Slice& s) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() * 2);
  for (size_t i = 0; i < s.size(); i++) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

std::string unhex(const std::string& h) {
  std::string out;
  auto nib = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    dieMsg("bad hex " + h);
  };
  if (h.size() % 2) dieMsg("bad hex " + h);
  for (size_t i = 0; i < h.size(); i += 2) out.push_back(static_cast<char>(nib(h[i]) << 4 | nib(h[i + 1])));
  return out;
}

// Status messages go on one line.
std::string oneLine(const Status& s) {
  std::string m = s.ToString();
  std::replace(m.begin(), m.end(), '\n', ' ');
  std::replace(m.begin(), m.end(), '\t', ' ');
  return m;
}

// Rng is SplitMix64: small, and the same everywhere.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed) {}
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint32_t n(uint32_t k) { return static_cast<uint32_t>(next() % k); }
  bool p(uint32_t pct) { return n(100) < pct; }
};

// ---------------------------------------------------------------- merge operators

// StringAppendOperator is RocksDB's string append operator
// (utilities/merge_operators/string_append/stringappend.cc) under its
// name: the base (when there is one) and each operand joined with ','.
class StringAppendOperator : public AssociativeMergeOperator {
 public:
  bool Merge(const Slice&, const Slice* existing, const Slice& value, std::string* out,
             Logger*) const override {
    out->clear();
    if (existing != nullptr) {
      out->assign(existing->data(), existing->size());
      out->push_back(',');
    }
    out->append(value.data(), value.size());
    return true;
  }
  const char* Name() const override { return "StringAppendOperator"; }
};

// UInt64AddOperator is RocksDB's uint64 add operator
// (utilities/merge_operators/uint64add.cc) under its name: values are
// little-endian fixed64, summed modulo 2^64; a value of another size
// counts as 0, and the result is always 8 bytes.
class UInt64AddOperator : public AssociativeMergeOperator {
 public:
  bool Merge(const Slice&, const Slice* existing, const Slice& value, std::string* out,
             Logger*) const override {
    uint64_t sum = decode(value);
    if (existing != nullptr) sum += decode(*existing);
    out->assign(8, '\0');
    for (int i = 0; i < 8; i++) (*out)[i] = static_cast<char>(sum >> (8 * i));
    return true;
  }
  const char* Name() const override { return "UInt64AddOperator"; }

 private:
  static uint64_t decode(const Slice& v) {
    if (v.size() != 8) return 0;
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--) x = x << 8 | static_cast<unsigned char>(v[i]);
    return x;
  }
};

std::shared_ptr<MergeOperator> mergeOperatorFor(const std::string& cf) {
  if (cf == "cf-with-append") return std::make_shared<StringAppendOperator>();
  if (cf == "cf-with-add") return std::make_shared<UInt64AddOperator>();
  return nullptr;
}

// Recorder wraps a merge operator and records the keys RocksDB fully
// merges: the keys a read cannot resolve without the operator (read-only,
// nothing else merges: no compaction, and max_successive_merges is 0).
class Recorder : public MergeOperator {
 public:
  explicit Recorder(std::shared_ptr<MergeOperator> op) : op_(std::move(op)) {}
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    keys.push_back(in.key.ToString());
    return op_->FullMergeV2(in, out);
  }
  bool PartialMerge(const Slice& key, const Slice& left, const Slice& right, std::string* out,
                    Logger* logger) const override {
    return op_->PartialMerge(key, left, right, out, logger);
  }
  const char* Name() const override { return op_->Name(); }
  mutable std::vector<std::string> keys;

 private:
  std::shared_ptr<MergeOperator> op_;
};

// ---------------------------------------------------------------- a file system without fsync

// NoSyncFS is the default file system without fsync: the test's
// databases need not survive a crash, and with a small write buffer
// RocksDB syncs the MANIFEST, the log and each table many times.
class NoSyncFile : public FSWritableFileOwnerWrapper {
 public:
  explicit NoSyncFile(std::unique_ptr<FSWritableFile>&& f) : FSWritableFileOwnerWrapper(std::move(f)) {}
  IOStatus Sync(const IOOptions& o, IODebugContext* d) override { return target()->Flush(o, d); }
  IOStatus Fsync(const IOOptions& o, IODebugContext* d) override { return target()->Flush(o, d); }
  IOStatus RangeSync(uint64_t, uint64_t, const IOOptions&, IODebugContext*) override { return IOStatus::OK(); }
};

class NoSyncDir : public FSDirectory {
 public:
  explicit NoSyncDir(std::unique_ptr<FSDirectory>&& d) : d_(std::move(d)) {}
  IOStatus Fsync(const IOOptions&, IODebugContext*) override { return IOStatus::OK(); }
  IOStatus FsyncWithDirOptions(const IOOptions&, IODebugContext*, const DirFsyncOptions&) override {
    return IOStatus::OK();
  }
  IOStatus Close(const IOOptions& o, IODebugContext* d) override { return d_->Close(o, d); }
  size_t GetUniqueId(char* id, size_t max) const override { return d_->GetUniqueId(id, max); }

 private:
  std::unique_ptr<FSDirectory> d_;
};

class NoSyncFS : public FileSystemWrapper {
 public:
  NoSyncFS() : FileSystemWrapper(FileSystem::Default()) {}
  const char* Name() const override { return "NoSyncFS"; }
  IOStatus NewWritableFile(const std::string& f, const FileOptions& o, std::unique_ptr<FSWritableFile>* r,
                           IODebugContext* d) override {
    return wrap(target()->NewWritableFile(f, o, r, d), r);
  }
  IOStatus ReopenWritableFile(const std::string& f, const FileOptions& o, std::unique_ptr<FSWritableFile>* r,
                              IODebugContext* d) override {
    return wrap(target()->ReopenWritableFile(f, o, r, d), r);
  }
  IOStatus ReuseWritableFile(const std::string& f, const std::string& old, const FileOptions& o,
                             std::unique_ptr<FSWritableFile>* r, IODebugContext* d) override {
    return wrap(target()->ReuseWritableFile(f, old, o, r, d), r);
  }
  IOStatus NewDirectory(const std::string& name, const IOOptions& o, std::unique_ptr<FSDirectory>* r,
                        IODebugContext* d) override {
    IOStatus s = target()->NewDirectory(name, o, r, d);
    if (s.ok()) *r = std::make_unique<NoSyncDir>(std::move(*r));
    return s;
  }

 private:
  static IOStatus wrap(IOStatus s, std::unique_ptr<FSWritableFile>* r) {
    if (s.ok()) *r = std::make_unique<NoSyncFile>(std::move(*r));
    return s;
  }
};

Env* noSyncEnv() {
  static std::unique_ptr<Env> env = NewCompositeEnv(std::make_shared<NoSyncFS>());
  return env.get();
}

// ---------------------------------------------------------------- files

std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void writeFile(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
  if (!f) dieMsg("cannot write " + path);
}

// copyDir copies the regular files of src into a new directory dst.
void copyDir(const std::string& src, const std::string& dst) {
  std::error_code ec;
  fs::remove_all(dst, ec);
  fs::create_directories(dst);
  for (const auto& e : fs::directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    fs::copy_file(e.path(), fs::path(dst) / e.path().filename());
  }
}

// dirState maps each regular file's name to a hash of its contents.
std::map<std::string, uint64_t> dirState(const std::string& dir) {
  std::map<std::string, uint64_t> m;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    uint64_t h = 1469598103934665603ULL;  // FNV-1a
    for (unsigned char c : readFile(e.path().string())) h = (h ^ c) * 1099511628211ULL;
    m[e.path().filename().string()] = h;
  }
  return m;
}

// ---------------------------------------------------------------- dump

// The probes of each column family, from a probes file.
std::map<std::string, std::vector<std::string>> readProbes(const std::string& path) {
  std::map<std::string, std::vector<std::string>> m;
  std::ifstream f(path);
  if (!f) dieMsg("cannot read " + path);
  std::string line;
  while (std::getline(f, line)) {
    size_t tab = line.find('\t');
    if (tab == std::string::npos) dieMsg("bad probe line " + line);
    m[line.substr(0, tab)].push_back(unhex(line.substr(tab + 1)));
  }
  return m;
}

void viewSection(std::string* out, Iterator* it) {
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    *out += hex(it->key()) + "\t" + hex(it->value()) + "\n";
  }
  Status s = it->status();
  *out += s.ok() ? "!ok\n" : "!error " + oneLine(s) + "\n";
}

// mergedSection lists the keys rec merged since it was last cleared.
void mergedSection(std::string* out, const char* name, Recorder* rec) {
  *out += std::string("@") + name + "\n";
  for (const auto& k : rec->keys) *out += hex(k) + "\n";
  rec->keys.clear();
}

void getsSection(std::string* out, DB* db, ColumnFamilyHandle* h, const std::vector<std::string>& probes,
                 Recorder* rec, std::string* merged) {
  for (const auto& k : probes) {
    std::string v;
    Status s = db->Get(ReadOptions(), h, k, &v);
    if (s.ok()) {
      *out += hex(k) + "\t" + hex(v) + "\n";
    } else if (s.IsNotFound()) {
      *out += hex(k) + "\t-\n";
    } else {
      *out += hex(k) + "\t!error " + oneLine(s) + "\n";
    }
    if (rec != nullptr && !rec->keys.empty()) {
      *merged += hex(k) + "\n";
      rec->keys.clear();
    }
  }
}

struct Opened {
  DB* db = nullptr;
  std::vector<ColumnFamilyHandle*> handles;
  std::vector<std::string> names;
  std::vector<std::shared_ptr<Recorder>> recorders;  // by family; null without an operator
  ~Opened() {
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
    if (db != nullptr) db->Close();
    delete db;
  }
};

// openReadOnly opens dir read-only as a user would: default DBOptions
// (WAL recovery mode kPointInTimeRecovery), every column family with the
// merge operator its name implies, recorded.
Status openReadOnly(const std::string& dir, Opened* o) {
  Status s = DB::ListColumnFamilies(DBOptions(), dir, &o->names);
  if (!s.ok()) return s;
  std::vector<ColumnFamilyDescriptor> cfs;
  for (const auto& n : o->names) {
    ColumnFamilyOptions co;
    std::shared_ptr<Recorder> rec;
    if (auto op = mergeOperatorFor(n)) rec = std::make_shared<Recorder>(op);
    co.merge_operator = rec;
    o->recorders.push_back(rec);
    cfs.emplace_back(n, co);
  }
  return DB::OpenForReadOnly(DBOptions(), dir, cfs, &o->handles, &o->db);
}

// dumpDB writes what RocksDB's read-only open reads from a copy of dir.
void dumpDB(const std::string& dir, const std::map<std::string, std::vector<std::string>>& probes,
            const std::string& out) {
  std::string copy = out + ".copy";
  copyDir(dir, copy);
  auto before = dirState(copy);
  std::string text;
  {
    Opened o;
    Status s = openReadOnly(copy, &o);
    if (!s.ok()) {
      o.handles.clear();
      writeFile(out, "@open-error " + oneLine(s) + "\n");
      std::error_code ec;
      fs::remove_all(copy, ec);
      return;
    }
    text += "@lastseq " + std::to_string(o.db->GetLatestSequenceNumber()) + "\n";
    for (size_t i = 0; i < o.names.size(); i++) {
      const std::string& name = o.names[i];
      Recorder* rec = o.recorders[i].get();
      text += "@cf " + name + "\n@view\n";
      std::unique_ptr<Iterator> it(o.db->NewIterator(ReadOptions(), o.handles[i]));
      viewSection(&text, it.get());
      it.reset();
      if (rec != nullptr) mergedSection(&text, "merged-view", rec);
      text += "@gets\n";
      std::string merged;
      auto p = probes.find(name);
      if (p != probes.end()) getsSection(&text, o.db, o.handles[i], p->second, rec, &merged);
      if (rec != nullptr) text += "@merged-gets\n" + merged;
    }
  }
  auto after = dirState(copy);
  for (const auto& [name, h] : after) {
    auto b = before.find(name);
    if (b == before.end()) {
      text += "@touched " + name + " created\n";
    } else if (b->second != h) {
      text += "@touched " + name + " changed\n";
    }
  }
  for (const auto& [name, h] : before) {
    if (!after.count(name)) text += "@touched " + name + " removed\n";
  }
  writeFile(out, text);
  std::error_code ec;
  fs::remove_all(copy, ec);
}

// ---------------------------------------------------------------- the workload

std::string randomBytes(Rng& r, size_t len) {
  std::string k;
  for (size_t i = 0; i < len; i++) {
    uint32_t c = r.n(10);
    if (c == 0) {
      k.push_back('\0');
    } else if (c == 1) {
      k.push_back('\xff');
    } else if (c < 6) {
      k.push_back(static_cast<char>('a' + r.n(6)));
    } else {
      k.push_back(static_cast<char>(r.n(256)));
    }
  }
  return k;
}

// mixedKeys returns about n distinct keys, none beginning with 's' (the
// single-delete keys' first byte): the edge keys (the empty key, runs of
// 0x00 and 0xff), short binary keys, longer keys with shared prefixes.
std::vector<std::string> mixedKeys(Rng& r, size_t n) {
  std::set<std::string> ks = {
      std::string(),
      std::string(1, '\0'),
      std::string(2, '\0'),
      std::string("\0\xff", 2),
      std::string(1, '\x01'),
      std::string(1, '\xff'),
      std::string(2, '\xff'),
      std::string(9, '\xff'),
      std::string(8, '\xff') + std::string(1, '\0'),
      std::string(12, '\0'),
  };
  while (ks.size() < n) {
    uint32_t c = r.n(10);
    std::string k;
    if (c < 3) {
      k = randomBytes(r, 1 + r.n(6));
    } else if (c < 5) {
      k = randomBytes(r, 8 + r.n(24));
    } else {
      char buf[40];
      std::snprintf(buf, sizeof buf, "user%c%06u", 'a' + static_cast<int>(r.n(4)), r.n(1000000));
      k = buf;
      if (r.p(20)) k += randomBytes(r, 1 + r.n(8));
    }
    if (!k.empty() && k[0] == 's') continue;
    ks.insert(k);
  }
  return std::vector<std::string>(ks.begin(), ks.end());
}

struct Config {
  uint64_t seed = 0;
  bool small = false;
  int ops = 0;
  int fv = 5;
  ChecksumType checksum = kCRC32c;
  CompressionType comp[4] = {kSnappyCompression, kNoCompression, kZSTD, kLZ4Compression};
  bool defaultBlob = false, appendBlob = false;
  uint64_t minBlob = 64;
  CompressionType blobComp = kNoCompression;
  bool blobGC = false;
  int recycle = 0;
  bool atomicFlush = false;
  bool dynamicLevels = false;
  int drop = 0;    // 1: cf-recreated dropped and re-created; 2: dropped for good
  int ending = 0;  // 0: a last batch in default; 1: every family, one flushed between; 2: cf-wal-only
  bool entities = false;
};

const char* compName(CompressionType c) {
  switch (c) {
    case kNoCompression: return "none";
    case kSnappyCompression: return "snappy";
    case kZlibCompression: return "zlib";
    case kBZip2Compression: return "bzip2";
    case kLZ4Compression: return "lz4";
    case kLZ4HCCompression: return "lz4hc";
    case kZSTD: return "zstd";
    default: return "other";
  }
}

const char* checksumName(ChecksumType c) {
  switch (c) {
    case kNoChecksum: return "none";
    case kCRC32c: return "crc32c";
    case kxxHash: return "xxhash";
    case kxxHash64: return "xxhash64";
    case kXXH3: return "xxh3";
  }
  return "other";
}

Config configFor(uint64_t seed, bool small) {
  Config c;
  c.seed = seed;
  c.small = small;
  c.ops = small ? 1500 : 6000;
  static const int fvs[] = {5, 2, 4, 3, 5, 0, 4, 5};
  static const ChecksumType sums[] = {kXXH3, kCRC32c, kxxHash64, kxxHash, kCRC32c, kCRC32c, kXXH3, kxxHash64};
  static const CompressionType comps[] = {kSnappyCompression, kZSTD, kNoCompression, kLZ4Compression,
                                          kZlibCompression, kLZ4HCCompression, kBZip2Compression, kZSTD};
  static const CompressionType blobComps[] = {kNoCompression, kSnappyCompression, kZSTD, kLZ4Compression};
  static const uint64_t minBlobs[] = {64, 0, 200, 16, 1000};
  c.fv = fvs[seed % 8];
  c.checksum = sums[seed % 8];
  for (int i = 0; i < 4; i++) c.comp[i] = comps[(seed + 3 * i) % 8];
  c.defaultBlob = seed % 3 == 0;
  c.appendBlob = seed % 4 == 1;
  c.minBlob = minBlobs[seed % 5];
  c.blobComp = blobComps[seed % 4];
  c.blobGC = seed % 2 == 0;
  // RocksDB 7.8.3 recycles logs only in a database of one column family:
  // with more, its first flush crashes (SIGSEGV in
  // DBImpl::MarkLogsSynced, from SyncClosedLogs).
  c.recycle = seed % 4 == 2 ? 2 + static_cast<int>(seed % 3) : 0;
  c.atomicFlush = seed % 5 == 3;
  c.dynamicLevels = seed % 3 == 1;
  c.drop = c.recycle ? 0 : static_cast<int>(seed % 3);
  c.ending = c.recycle ? static_cast<int>(seed / 4 % 2) : static_cast<int>(seed % 3);
  c.entities = !c.defaultBlob && seed % 2 == 1;
  return c;
}

ColumnFamilyOptions cfOptions(const Config& c, const std::string& name) {
  ColumnFamilyOptions o;
  o.write_buffer_size = 64 << 10;
  o.target_file_size_base = 64 << 10;
  o.max_bytes_for_level_base = 256 << 10;
  o.level0_file_num_compaction_trigger = 3;
  o.level_compaction_dynamic_level_bytes = c.dynamicLevels;
  o.merge_operator = mergeOperatorFor(name);
  int idx = name == "default" ? 0 : name == "cf-with-append" ? 1 : name == "cf-with-add" ? 2 : 3;
  o.compression = c.comp[idx];
  BlockBasedTableOptions t;
  t.format_version = c.fv;
  t.checksum = c.checksum;
  t.block_size = 1024 << (c.seed % 3);
  if (c.seed % 4 != 3) t.filter_policy.reset(NewBloomFilterPolicy(10));
  o.table_factory.reset(NewBlockBasedTableFactory(t));
  bool blob = name == "cf-blob" || (name == "default" && c.defaultBlob) || (name == "cf-with-append" && c.appendBlob);
  if (blob) {
    o.enable_blob_files = true;
    o.min_blob_size = c.minBlob;
    o.blob_file_size = 64 << 10;
    o.blob_compression_type = c.blobComp;
    o.enable_blob_garbage_collection = c.blobGC;
    o.blob_garbage_collection_age_cutoff = 0.5;
  }
  return o;
}

DBOptions dbOptions(const Config& c) {
  DBOptions o;
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  o.env = noSyncEnv();
  o.avoid_flush_during_shutdown = true;
  o.recycle_log_file_num = c.recycle;
  // 7.8.3 turns recycling off unless the recovery mode is this one
  // (SanitizeOptions: the other modes could recover a hole).
  if (c.recycle) o.wal_recovery_mode = WALRecoveryMode::kSkipAnyCorruptedRecords;
  o.atomic_flush = c.atomicFlush;
  o.max_background_jobs = 2;
  o.stats_dump_period_sec = 0;
  o.stats_persist_period_sec = 0;
  return o;
}

// Family is a column family the workload writes, with its key pools.
struct Family {
  std::string name;
  ColumnFamilyHandle* h = nullptr;
  std::vector<std::string> keys;      // sorted; none begins with 's'
  std::vector<std::string> sd;        // single-delete keys
  std::map<std::string, bool> sdLive;  // put once, not yet single-deleted
  std::set<std::string> touched;      // for the probes
  bool alive = true;
};

struct Workload {
  Config c;
  Rng r;
  DB* db = nullptr;
  std::vector<Family> fams;  // default, cf-with-append, cf-with-add, cf-blob[, cf-recreated][, cf-wal-only]
  std::map<std::string, std::set<std::string>> probeKeys;  // every family's keys, dropped ones too
  std::vector<const Snapshot*> snaps;

  Workload(const Config& cfg) : c(cfg), r(cfg.seed * 0x9e3779b97f4a7c15ULL + 7) {}

  std::string value(bool bigOK) {
    size_t len;
    uint32_t x = r.n(1000);
    if (x < 80) {
      len = 0;
    } else if (x < 700) {
      len = 1 + r.n(100);
    } else if (x < (c.small ? 990u : 930u)) {
      len = 100 + r.n(c.small ? 300 : 1900);
    } else if (x < 995 || !bigOK || c.small) {
      len = 4097 + r.n(c.small ? 200 : 12000);
    } else {
      len = 65537 + r.n(40000);
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

  std::string fixed64(uint64_t x) {
    std::string v(8, '\0');
    for (int i = 0; i < 8; i++) v[i] = static_cast<char>(x >> (8 * i));
    return v;
  }

  // addValue is a value for cf-with-add: mostly fixed64, a few of
  // another size (which UInt64AddOperator counts as 0).
  std::string addValue(bool operand) {
    if (r.p(3)) return std::string(r.n(13) == 8 ? 9 : r.n(13), 'x');
    return fixed64(operand && r.p(80) ? r.n(1000) : r.next());
  }

  Family& fam(const std::string& name) {
    for (auto& f : fams)
      if (f.name == name && f.alive) return f;
    dieMsg("no family " + name);
  }

  void addFamily(const std::string& name, ColumnFamilyHandle* h) {
    Family f;
    f.name = name;
    f.h = h;
    f.keys = mixedKeys(r, c.small ? 80 : 400);
    for (size_t i = 0; i < f.keys.size() / 8; i++) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "s%05zu", i);
      f.sd.push_back(buf);
    }
    fams.push_back(f);
  }

  // op adds one random operation on family f to batch b.
  void op(Family& f, WriteBatch* b) {
    const std::string& n = f.name;
    uint32_t x = r.n(100);
    if (x < 10 && n != "cf-with-add") {
      const std::string& k = f.sd[r.n(f.sd.size())];
      f.touched.insert(k);
      bool& live = f.sdLive[k];
      if (!live) {
        check("put", b->Put(f.h, k, value(true)));
      } else {
        check("single delete", b->SingleDelete(f.h, k));
      }
      live = !live;
      return;
    }
    const std::string& k = f.keys[r.n(f.keys.size())];
    f.touched.insert(k);
    if (n == "cf-with-add") {
      if (x < 40) {
        check("put", b->Put(f.h, k, addValue(false)));
      } else if (x < 85) {
        check("merge", b->Merge(f.h, k, addValue(true)));
      } else if (x < 95) {
        check("delete", b->Delete(f.h, k));
      } else {
        rangeDelete(f, b);
      }
      return;
    }
    if (n == "cf-with-append" && x >= 50 && x < 80) {
      std::string v = value(false).substr(0, r.n(30));
      if (r.p(10)) v = ",";
      check("merge", b->Merge(f.h, k, v));
      return;
    }
    if (x < 65) {
      if (n == "default" && c.entities && r.p(10)) {
        WideColumns cols;
        std::vector<std::string> store;
        std::set<std::string> names;
        if (r.p(50)) names.insert("");  // the default column
        int cnt = 1 + r.n(3);
        while (names.size() < static_cast<size_t>(cnt)) names.insert(randomBytes(r, 1 + r.n(5)));
        store.reserve(2 * names.size());
        for (auto& nm : names) {
          store.push_back(nm);
          store.push_back(value(false).substr(0, 40));
        }
        for (size_t i = 0; i < store.size(); i += 2) cols.emplace_back(store[i], store[i + 1]);
        check("put entity", b->PutEntity(f.h, k, cols));
      } else {
        check("put", b->Put(f.h, k, value(true)));
      }
    } else if (x < 85) {
      check("delete", b->Delete(f.h, k));
    } else if (x < 90) {
      rangeDelete(f, b);
    } else {
      check("put", b->Put(f.h, k, value(true)));
    }
  }

  // rangeDelete deletes a range of f's keys on one side of the
  // single-delete keys (all of which begin with 's').
  void rangeDelete(Family& f, WriteBatch* b) {
    size_t a = r.n(f.keys.size());
    size_t e = std::min(f.keys.size() - 1, a + 1 + r.n(40));
    std::string start = f.keys[a], end = f.keys[e];
    if (r.p(30)) end += std::string(1, '\0');
    if ((start < "s") != (end < "s") || start >= end) return;
    f.touched.insert(start);
    f.touched.insert(end);
    check("delete range", b->DeleteRange(f.h, start, end));
  }

  void write(int n, const std::vector<std::string>& only = {}) {
    for (int i = 0; i < n;) {
      WriteBatch b;
      int m = r.p(70) ? 1 : 2 + r.n(12);
      for (int j = 0; j < m && i < n; j++, i++) {
        Family* f;
        do {
          f = &fams[r.n(fams.size())];
        } while (!f->alive || (!only.empty() && std::find(only.begin(), only.end(), f->name) == only.end()));
        op(*f, &b);
      }
      check("write", db->Write(WriteOptions(), &b));
    }
  }

  void maintenance() {
    Family& f = fams[r.n(fams.size())];
    if (!f.alive) return;
    uint32_t x = r.n(100);
    if (x < 35) {
      check("flush " + f.name, db->Flush(FlushOptions(), f.h));
    } else if (x < 70) {
      size_t a = r.n(f.keys.size()), e = std::min(f.keys.size() - 1, a + r.n(f.keys.size() / 2));
      Slice sa(f.keys[a]), se(f.keys[e]);
      CompactRangeOptions cro;
      if (r.p(20)) cro.bottommost_level_compaction = BottommostLevelCompaction::kForce;
      check("compact range " + f.name, db->CompactRange(cro, f.h, &sa, &se));
    } else if (x < 85) {
      if (snaps.size() < 3) snaps.push_back(db->GetSnapshot());
    } else if (!snaps.empty()) {
      db->ReleaseSnapshot(snaps.front());
      snaps.erase(snaps.begin());
    }
  }

  void drop() {
    Family& f = fam("cf-recreated");
    for (auto& k : f.touched) probeKeys[f.name].insert(k);
    check("drop", db->DropColumnFamily(f.h));
    check("destroy handle", db->DestroyColumnFamilyHandle(f.h));
    f.alive = false;
    f.h = nullptr;
    if (c.drop == 1) {
      ColumnFamilyHandle* h;
      check("re-create", db->CreateColumnFamily(cfOptions(c, "cf-recreated"), "cf-recreated", &h));
      // The same key pool, so that a dropped version coming back shows.
      Family nf = f;
      nf.h = h;
      nf.alive = true;
      nf.touched.clear();
      nf.sdLive.clear();
      fams.push_back(nf);
    }
  }
};

// levelsLine describes family h's tables per level and blob files, as the
// database reports them.
std::string levelsLine(DB* db, ColumnFamilyHandle* h) {
  ColumnFamilyMetaData md;
  db->GetColumnFamilyMetaData(h, &md);
  std::string s = "levels";
  for (const auto& l : md.levels) {
    if (!l.files.empty()) s += " L" + std::to_string(l.level) + "=" + std::to_string(l.files.size());
  }
  s += " blobs=" + std::to_string(md.blob_files.size());
  return s;
}

// waitIdle waits until no flush or compaction runs or is pending
// (7.8.3 has no DB::WaitForCompact).
void waitIdle(DB* db, const std::vector<Family>& fams) {
  for (;;) {
    uint64_t busy = 0, v = 0;
    if (db->GetIntProperty("rocksdb.num-running-compactions", &v)) busy += v;
    if (db->GetIntProperty("rocksdb.num-running-flushes", &v)) busy += v;
    for (const auto& f : fams) {
      if (!f.alive) continue;
      if (db->GetIntProperty(f.h, "rocksdb.compaction-pending", &v)) busy += v;
      if (db->GetIntProperty(f.h, "rocksdb.mem-table-flush-pending", &v)) busy += v;
    }
    if (busy == 0) return;
    usleep(2000);
  }
}

void runSeed(const std::string& outdir, uint64_t seed, bool small) {
  Config c = configFor(seed, small);
  std::string base = outdir + "/s" + std::to_string(seed);
  std::string dir = base + "/db";
  std::error_code ec;
  fs::remove_all(base, ec);
  fs::create_directories(base);

  Workload w(c);
  std::vector<std::string> names = {"default"};
  if (!c.recycle) names = {"default", "cf-with-append", "cf-with-add", "cf-blob"};
  if (c.drop) names.push_back("cf-recreated");
  std::vector<ColumnFamilyDescriptor> cfs;
  for (auto& n : names) cfs.emplace_back(n, cfOptions(c, n));
  std::vector<ColumnFamilyHandle*> handles;
  check("open " + dir, DB::Open(dbOptions(c), dir, cfs, &handles, &w.db));
  for (size_t i = 0; i < names.size(); i++) w.addFamily(names[i], handles[i]);

  // The body: writes in rounds, each followed by a flush, a partial
  // compaction or a snapshot change; the drop half way.
  int rounds = small ? 8 : 24;
  int per = c.ops / rounds;
  for (int round = 0; round < rounds; round++) {
    w.write(per);
    w.maintenance();
    if (c.drop && round == rounds / 2) {
      // Writes to the family left unflushed, so that the log holds
      // records of the dropped family's ID.
      w.write(per / 4, {"cf-recreated"});
      w.drop();
    }
  }
  if (small) {
    // The small databases: make sure of a deeper level in every family.
    for (auto& f : w.fams) {
      if (!f.alive) continue;
      check("flush", w.db->Flush(FlushOptions(), f.h));
      Slice a(f.keys[0]), e(f.keys[f.keys.size() / 2]);
      check("compact", w.db->CompactRange(CompactRangeOptions(), f.h, &a, &e));
    }
  }
  waitIdle(w.db, w.fams);
  for (auto* s : w.snaps) w.db->ReleaseSnapshot(s);
  w.snaps.clear();

  // The ending, left in the log.
  int tail = std::max(20, c.ops / 40);
  switch (c.ending) {
    case 0:
      w.write(tail, {"default"});
      break;
    case 1: {
      w.write(tail);
      // One family flushed: the log keeps records below its log number.
      Family& f = c.recycle ? w.fam("default") : w.fam("cf-with-append");
      check("flush " + f.name, w.db->Flush(FlushOptions(), f.h));
      w.write(tail);
      break;
    }
    case 2: {
      ColumnFamilyHandle* h;
      check("create cf-wal-only", w.db->CreateColumnFamily(cfOptions(c, "cf-wal-only"), "cf-wal-only", &h));
      w.addFamily("cf-wal-only", h);
      w.write(tail);
      w.write(tail / 2, {"cf-wal-only"});
      break;
    }
  }

  // What the writer reads just before it closes, and the info.
  std::string info, fin;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "config seed=%" PRIu64 " small=%d ops=%d fv=%d checksum=%s comp=%s,%s,%s,%s blob-default=%d "
                "blob-append=%d min-blob=%" PRIu64 " blob-comp=%s blob-gc=%d recycle=%d atomic-flush=%d "
                "dynamic-levels=%d drop=%d ending=%d entities=%d\n",
                seed, small ? 1 : 0, c.ops, c.fv, checksumName(c.checksum), compName(c.comp[0]),
                compName(c.comp[1]), compName(c.comp[2]), compName(c.comp[3]), c.defaultBlob ? 1 : 0,
                c.appendBlob ? 1 : 0, c.minBlob, compName(c.blobComp), c.blobGC ? 1 : 0, c.recycle,
                c.atomicFlush ? 1 : 0, c.dynamicLevels ? 1 : 0, c.drop, c.ending, c.entities ? 1 : 0);
  info += buf;
  info += "lastseq " + std::to_string(w.db->GetLatestSequenceNumber()) + "\n";
  for (auto& f : w.fams) {
    if (!f.alive) continue;
    info += "cf " + f.name + " " + levelsLine(w.db, f.h) + "\n";
    fin += "@cf " + f.name + "\n@view\n";
    std::unique_ptr<Iterator> it(w.db->NewIterator(ReadOptions(), f.h));
    viewSection(&fin, it.get());
  }
  for (auto& f : w.fams) {
    for (auto& k : f.touched) w.probeKeys[f.name].insert(k);
  }

  // The probes: every key written, its neighbours, keys never written.
  std::string probes;
  for (auto& [name, ks] : w.probeKeys) {
    std::set<std::string> all(ks.begin(), ks.end());
    for (auto& k : ks) {
      if (w.r.p(20)) all.insert(k + std::string(1, '\0'));
      if (!k.empty() && w.r.p(20)) all.insert(k.substr(0, k.size() - 1));
    }
    for (int i = 0; i < 20; i++) all.insert(randomBytes(w.r, w.r.n(12)));
    for (auto& k : all) probes += name + "\t" + hex(k) + "\n";
  }
  writeFile(base + "/probes", probes);
  writeFile(base + "/final", fin);

  auto listLogs = [&]() {
    for (const auto& e : fs::directory_iterator(dir)) {
      std::string n = e.path().filename().string();
      if (n.size() > 4 && n.substr(n.size() - 4) == ".log") {
        info += "wal " + n + " " + std::to_string(e.file_size()) + "\n";
      }
    }
  };
  if (c.recycle) {
    // A crash rather than a close: closing a log truncates it to what
    // it holds, so only a crash leaves a recycled log's stale tail (the
    // records of its former life after its live ones). Every write is
    // in the file already (no manual_wal_flush); let the background
    // work end first, so that the crash image is a quiet one.
    waitIdle(w.db, w.fams);
    listLogs();
    writeFile(base + "/info", info);
    std::fflush(nullptr);
    _exit(0);
  }
  for (auto& f : w.fams) {
    if (f.alive) check("destroy handle", w.db->DestroyColumnFamilyHandle(f.h));
  }
  check("close", w.db->Close());
  delete w.db;
  w.db = nullptr;
  listLogs();
  writeFile(base + "/info", info);
}

// genSeed writes seed's database in a process of its own (the workload
// may end in a crash), then dumps it.
void genSeed(const std::string& outdir, uint64_t seed, bool small) {
  std::string seedArg = std::to_string(seed);
  std::vector<const char*> args = {"dboracle", "write"};
  if (small) args.push_back("-small");
  args.push_back(outdir.c_str());
  args.push_back(seedArg.c_str());
  args.push_back(nullptr);
  pid_t pid;
  int err = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, const_cast<char* const*>(args.data()), environ);
  if (err != 0) dieMsg("posix_spawn: " + std::string(std::strerror(err)));
  int status;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    dieMsg("writing seed " + seedArg + " failed (status " + std::to_string(status) + ")");
  }
  std::string base = outdir + "/s" + seedArg;
  dumpDB(base + "/db", readProbes(base + "/probes"), base + "/want");
}

int gen(int argc, char** argv) {
  bool small = false;
  if (argc > 0 && std::strcmp(argv[0], "-small") == 0) {
    small = true;
    argc--;
    argv++;
  }
  if (argc < 2) dieMsg("usage: dboracle gen [-small] OUTDIR SEED...");
  for (int i = 1; i < argc; i++) genSeed(argv[0], std::strtoull(argv[i], nullptr, 10), small);
  return 0;
}

int write(int argc, char** argv) {
  bool small = false;
  if (argc > 0 && std::strcmp(argv[0], "-small") == 0) {
    small = true;
    argc--;
    argv++;
  }
  if (argc != 2) dieMsg("usage: dboracle write [-small] OUTDIR SEED");
  runSeed(argv[0], std::strtoull(argv[1], nullptr, 10), small);
  return 0;
}

int dump(int argc, char** argv) {
  if (argc < 3 || argc % 2 != 1) dieMsg("usage: dboracle dump PROBES DIR OUT [DIR OUT]...");
  auto probes = readProbes(argv[0]);
  for (int i = 1; i + 1 < argc; i += 2) dumpDB(argv[i], probes, argv[i + 1]);
  return 0;
}

int hold(int argc, char** argv) {
  if (argc != 1) dieMsg("usage: dboracle hold DIR");
  std::string dir = argv[0];
  std::vector<std::string> names;
  check("list column families", DB::ListColumnFamilies(DBOptions(), dir, &names));
  std::vector<ColumnFamilyDescriptor> cfs;
  for (auto& n : names) {
    ColumnFamilyOptions co;
    co.merge_operator = mergeOperatorFor(n);
    cfs.emplace_back(n, co);
  }
  DBOptions o;
  o.env = noSyncEnv();
  std::vector<ColumnFamilyHandle*> handles;
  DB* db;
  check("open " + dir, DB::Open(o, dir, cfs, &handles, &db));
  std::printf("locked\n");
  std::fflush(stdout);
  char buf[256];
  while (std::fread(buf, 1, sizeof buf, stdin) > 0) {
  }
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  check("close", db->Close());
  delete db;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2) {
    std::string mode = argv[1];
    if (mode == "gen") return gen(argc - 2, argv + 2);
    if (mode == "write") return write(argc - 2, argv + 2);
    if (mode == "dump") return dump(argc - 2, argv + 2);
    if (mode == "hold") return hold(argc - 2, argv + 2);
  }
  std::fprintf(stderr, "usage: dboracle gen [-small] OUTDIR SEED... | dump PROBES DIR OUT [DIR OUT]... | hold DIR\n");
  return 2;
}
