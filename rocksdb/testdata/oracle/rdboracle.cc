// rdboracle writes RocksDB block-based tables over the matrix of issue 47
// with RocksDB itself (Debian's librocksdb-dev 7.8.3) and records, for
// each, what RocksDB reads from it, for package rocksdb's oracle tests
// (rocksdb/oracle_test.go) to compare with.
//
//   rdboracle [-small] OUTDIR [SUBSTRING]
//
// writes into OUTDIR (which must exist), for every case whose name
// contains SUBSTRING (all when absent), at full size or (-small, for the
// golden corpus) with about a tenth of the entries and short values:
//
//   NAME.sst    the table
//   NAME.dump   `sst_dump --file=NAME.sst --command=scan --output_hex
//               --show_properties`, run in this process through
//               rocksdb::SSTDumpTool: the internal entries
//               ('HEXKEY' seq:N, type:T => HEXVALUE) and the properties
//   NAME.frag   for a table with range deletions: the "Range deletions"
//               section of `sst_dump --command=raw`, the table's range
//               deletions as RocksDB fragments them on open (one
//               "HEX    START: END" line per fragment and covering
//               tombstone; no sequence numbers)
//   STACK.views the user-visible view RocksDB reads from a stack of
//               tables (one table, or the tables of a database, newest
//               first): "@max" and "@SEQ" sections (at a snapshot) of
//               "hexkey<TAB>hexvalue" lines, the last line of a section
//               "!ok" or "!error MESSAGE"
//   STACK.gets  the same sections with a line per probed key:
//               "hexkey<TAB>hexvalue", or "hexkey<TAB>-" when RocksDB
//               finds nothing
//   manifest.txt one line per table ("table NAME key=value ...", the
//               options it was written with) and per stack ("stack NAME
//               src=sstreader|db tables=NEWEST,...,OLDEST snaps=S1,...")
//
// A stack's views come from rocksdb::SstFileReader for tables written by
// SstFileWriter (every entry at one sequence number, so the reader's
// neglect of range deletions changes nothing there) and from the database
// itself (DB iterators and DB::Get at snapshots it held) for tables a
// database flushed or compacted. Merges are resolved with this program's
// own string-append operator ("sstkit.oracle.append": operands joined to
// the base with ','), which the Go side models.
//
// Deterministic: the same build of RocksDB writes the same entries and
// views (file contents differ in the identities and times RocksDB puts
// into the properties).

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <rocksdb/comparator.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/sst_dump_tool.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/wide_columns.h>

using namespace rocksdb;

namespace {

// kMaxSeq is RocksDB's largest sequence number (2^56-1), which marks
// the latest view in the output (db/dbformat.h, not a public header).
const SequenceNumber kMaxSeq = (1ULL << 56) - 1;

std::string outDir;
size_t scaleDiv = 1;  // -small: about a tenth of the entries, for the golden corpus
std::FILE* manifest;
int tablesWritten, stacksWritten;

[[noreturn]] void die(const std::string& what, const Status& s) {
  std::fprintf(stderr, "rdboracle: %s: %s\n", what.c_str(), s.ToString().c_str());
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

uint64_t seedOf(const std::string& name) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ULL;
  return h;
}

// StringAppend joins a key's operands to its base value with ','.
class StringAppend : public AssociativeMergeOperator {
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
  const char* Name() const override { return "sstkit.oracle.append"; }
};

// ---------------------------------------------------------------- keys

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

// mixedKeys returns about n distinct keys: the edge keys (the empty key,
// runs of 0x00 and 0xff), short binary keys, and longer structured keys
// with shared prefixes.
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
    if (c < 3) {
      ks.insert(randomBytes(r, 1 + r.n(6)));
    } else if (c < 5) {
      ks.insert(randomBytes(r, 8 + r.n(24)));
    } else {
      char buf[40];
      std::snprintf(buf, sizeof buf, "user%c%08u", 'a' + static_cast<int>(r.n(4)), r.n(1000000));
      std::string k = buf;
      if (r.p(20)) k += randomBytes(r, 1 + r.n(8));
      ks.insert(k);
    }
  }
  return std::vector<std::string>(ks.begin(), ks.end());
}

// prefixKeys returns about n distinct keys under a few 4-byte prefixes,
// plus keys shorter than 4 bytes (outside a fixed 4-byte prefix's domain).
std::vector<std::string> prefixKeys(Rng& r, size_t n) {
  std::vector<std::string> prefixes;
  for (int i = 0; i < 12; i++) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "p%c%02d", 'a' + i % 3, i);
    prefixes.push_back(buf);
  }
  prefixes.push_back(std::string("\0\0\0\0", 4));
  prefixes.push_back(std::string("\xff\xff\xff\xff", 4));
  std::set<std::string> ks = {std::string(), "a", "pb", "pb0"};
  while (ks.size() < n) {
    std::string k = prefixes[r.n(prefixes.size())];
    if (r.p(5)) {
      k = k.substr(0, r.n(4));
    } else {
      k += randomBytes(r, r.n(12));
    }
    ks.insert(k);
  }
  return std::vector<std::string>(ks.begin(), ks.end());
}

std::string valueOfLen(Rng& r, size_t len) {
  std::string v;
  v.reserve(len);
  bool compressible = r.p(70);
  while (v.size() < len) {
    if (compressible && r.p(60)) {
      v.append(std::min<size_t>(len - v.size(), 1 + r.n(24)), static_cast<char>('A' + r.n(6)));
    } else {
      v.push_back(static_cast<char>(r.n(256)));
    }
  }
  return v;
}

std::string makeValue(Rng& r) {
  size_t len;
  uint32_t c = r.n(100);
  if (scaleDiv > 1) {
    // The golden corpus: short values (Spec::big adds one over 4 KiB).
    return valueOfLen(r, c < 6 ? 0 : c < 85 ? 1 + r.n(40) : 40 + r.n(120));
  }
  if (c < 6) {
    len = 0;
  } else if (c < 80) {
    len = 1 + r.n(60);
  } else if (c < 98) {
    len = 60 + r.n(240);
  } else {
    len = 4097 + r.n(3000);  // over 4 KiB: a block of its own
  }
  return valueOfLen(r, len);
}

// ---------------------------------------------------------------- sst_dump

// sstDump runs sst_dump's main in this process with the arguments given,
// its standard output into outPath.
int sstDump(const std::vector<std::string>& args, const std::string& outPath) {
  std::fflush(stdout);
  std::cout.flush();
  int saved = dup(1);
  int fd = open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (saved < 0 || fd < 0) {
    std::perror("rdboracle: redirecting sst_dump");
    std::exit(1);
  }
  dup2(fd, 1);
  close(fd);
  std::vector<const char*> argv = {"sst_dump"};
  for (auto& a : args) argv.push_back(a.c_str());
  int rc = SSTDumpTool().Run(static_cast<int>(argv.size()), argv.data());
  std::fflush(stdout);
  std::cout.flush();
  dup2(saved, 1);
  close(saved);
  return rc;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// dumpTable writes NAME.dump and, when the table has range deletions,
// NAME.frag.
void dumpTable(const std::string& name, bool rangeDels) {
  std::string sst = outDir + "/" + name + ".sst";
  int rc = sstDump({"--file=" + sst, "--command=scan", "--output_hex", "--show_properties"},
                   outDir + "/" + name + ".dump");
  if (rc != 0) {
    std::fprintf(stderr, "rdboracle: sst_dump scan of %s exited %d\n", name.c_str(), rc);
    std::exit(1);
  }
  if (!rangeDels) return;
  rc = sstDump({"--file=" + sst, "--command=raw"}, "/dev/null");
  std::string raw = outDir + "/" + name + "_dump.txt";
  if (rc != 0) {
    std::fprintf(stderr, "rdboracle: sst_dump raw of %s exited %d\n", name.c_str(), rc);
    std::exit(1);
  }
  std::istringstream in(readFile(raw));
  std::remove(raw.c_str());
  std::string line, out;
  bool inSection = false, found = false;
  while (std::getline(in, line)) {
    if (line == "Range deletions:") {
      inSection = found = true;
      continue;
    }
    if (!inSection) continue;
    if (line.rfind("Data Block #", 0) == 0 || line.rfind("Data Block Summary", 0) == 0) break;
    if (line.rfind("  HEX    ", 0) == 0) out += line.substr(9) + "\n";
  }
  if (!found) {
    std::fprintf(stderr, "rdboracle: no range deletions in sst_dump's raw dump of %s\n", name.c_str());
    std::exit(1);
  }
  std::ofstream(outDir + "/" + name + ".frag") << out;
}

// ---------------------------------------------------------------- views

// Section collects one "@..." section of a .views or .gets file.
struct Sections {
  std::string text;
  void begin(SequenceNumber at) {
    if (at == kMaxSeq) {
      text += "@max\n";
    } else {
      text += "@" + std::to_string(at) + "\n";
    }
  }
  void write(const std::string& path) { std::ofstream(path, std::ios::binary) << text; }
};

void viewSection(Sections& v, Iterator* it) {
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    v.text += hex(it->key()) + "\t" + hex(it->value()) + "\n";
  }
  if (it->status().ok()) {
    v.text += "!ok\n";
  } else {
    v.text += "!error " + it->status().ToString() + "\n";
  }
}

// probes returns the keys to Get: every key the stack holds, the bounds
// of its range deletions, neighbours of some of them and random keys.
// For the golden corpus (-small), about half the held keys, to keep it
// small.
std::vector<std::string> probes(Rng& r, const std::set<std::string>& held) {
  std::set<std::string> ps;
  for (const auto& k : held) {
    if (scaleDiv == 1 || r.p(50)) ps.insert(k);
    if (r.p(15)) ps.insert(k + std::string(1, '\0'));
    if (r.p(15) && !k.empty()) ps.insert(k.substr(0, k.size() - 1));
    if (r.p(5)) ps.insert(k + "\xff");
  }
  for (int i = 0; i < (scaleDiv == 1 ? 50 : 15); i++) ps.insert(randomBytes(r, r.n(12)));
  return std::vector<std::string>(ps.begin(), ps.end());
}

void writeStack(const std::string& name, const std::string& src,
                const std::vector<std::string>& tables, const std::vector<SequenceNumber>& snaps,
                Sections& views, Sections& gets) {
  views.write(outDir + "/" + name + ".views");
  gets.write(outDir + "/" + name + ".gets");
  std::string ts, ss;
  for (auto& t : tables) ts += (ts.empty() ? "" : ",") + t;
  for (auto s : snaps) ss += (ss.empty() ? "" : ",") + std::to_string(s);
  std::fprintf(manifest, "stack %s src=%s tables=%s snaps=%s\n", name.c_str(), src.c_str(), ts.c_str(),
               ss.empty() ? "-" : ss.c_str());
  stacksWritten++;
}

// ---------------------------------------------------------------- SstFileWriter tables

enum FilterKind { kNoFilter, kBloom, kRibbon };

// Spec is one SstFileWriter table of the matrix.
struct Spec {
  std::string name;
  int fv = 5;
  ChecksumType checksum = kXXH3;
  CompressionType comp = kSnappyCompression;
  uint32_t dictBytes = 0, trainBytes = 0;
  BlockBasedTableOptions::IndexType index = BlockBasedTableOptions::kBinarySearch;
  int indexRestart = 1;
  int blockRestart = 16;
  size_t blockSize = 256;
  uint64_t metadataBlockSize = 256;
  bool dataHash = false;
  FilterKind filter = kBloom;
  double bits = 10;
  bool partitionFilters = false;
  bool wholeKey = true;
  std::string prefix;  // "", "fixed:4", "capped:3"
  bool reverse = false;
  bool kinds = true;       // deletes, merges and range deletions beside puts
  bool unsortedDels = false;  // range deletions added out of order
  size_t n = 600;
  bool prefixStyle = false;
  bool big = false;  // one value over 4 KiB, whatever the scale
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
    case kZSTDNotFinalCompression: return "zstd-notfinal";
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

const char* indexName(BlockBasedTableOptions::IndexType t) {
  switch (t) {
    case BlockBasedTableOptions::kBinarySearch: return "binary-search";
    case BlockBasedTableOptions::kHashSearch: return "hash-search";
    case BlockBasedTableOptions::kTwoLevelIndexSearch: return "two-level";
    case BlockBasedTableOptions::kBinarySearchWithFirstKey: return "binary-search-with-first-key";
  }
  return "other";
}

std::string filterName(FilterKind f, double bits) {
  char buf[32];
  switch (f) {
    case kNoFilter: return "none";
    case kBloom: std::snprintf(buf, sizeof buf, "bloom:%g", bits); return buf;
    case kRibbon: std::snprintf(buf, sizeof buf, "ribbon:%g", bits); return buf;
  }
  return "other";
}

std::shared_ptr<const SliceTransform> prefixExtractor(const std::string& p) {
  if (p.rfind("fixed:", 0) == 0) {
    return std::shared_ptr<const SliceTransform>(NewFixedPrefixTransform(std::atoi(p.c_str() + 6)));
  }
  if (p.rfind("capped:", 0) == 0) {
    return std::shared_ptr<const SliceTransform>(NewCappedPrefixTransform(std::atoi(p.c_str() + 7)));
  }
  return nullptr;
}

Options specOptions(const Spec& s) {
  Options o;
  BlockBasedTableOptions t;
  t.format_version = s.fv;
  t.checksum = s.checksum;
  t.index_type = s.index;
  t.index_block_restart_interval = s.indexRestart;
  t.block_restart_interval = s.blockRestart;
  t.block_size = s.blockSize;
  t.metadata_block_size = s.metadataBlockSize;
  t.partition_filters = s.partitionFilters;
  t.whole_key_filtering = s.wholeKey;
  if (s.dataHash) t.data_block_index_type = BlockBasedTableOptions::kDataBlockBinaryAndHash;
  if (s.filter == kBloom) t.filter_policy.reset(NewBloomFilterPolicy(s.bits));
  if (s.filter == kRibbon) t.filter_policy.reset(NewRibbonFilterPolicy(s.bits));
  o.table_factory.reset(NewBlockBasedTableFactory(t));
  o.compression = s.comp;
  o.compression_opts.max_dict_bytes = s.dictBytes;
  o.compression_opts.zstd_max_train_bytes = s.trainBytes;
  o.prefix_extractor = prefixExtractor(s.prefix);
  o.merge_operator.reset(new StringAppend);
  if (s.reverse) o.comparator = ReverseBytewiseComparator();
  return o;
}

void writeSpec(const Spec& s) {
  Rng r(seedOf(s.name));
  Options o = specOptions(s);
  const Comparator* cmp = o.comparator;
  size_t n = std::max<size_t>(40, s.n / scaleDiv);
  std::vector<std::string> keys = s.prefixStyle ? prefixKeys(r, n) : mixedKeys(r, n);
  // RocksDB's hash index takes the prefix of every key it indexes or
  // seeks without asking whether the key is in the extractor's domain
  // (an assertion fails in 7.8.3): keep such a table's keys, and the
  // probes, in the domain.
  auto inDomain = [&o, &s](const std::string& k) {
    return s.index != BlockBasedTableOptions::kHashSearch || o.prefix_extractor->InDomain(k);
  };
  keys.erase(std::remove_if(keys.begin(), keys.end(), [&](const std::string& k) { return !inDomain(k); }),
             keys.end());
  std::sort(keys.begin(), keys.end(),
            [cmp](const std::string& a, const std::string& b) { return cmp->Compare(a, b) < 0; });

  // Range deletions: spans between keys of the table (or past them),
  // some overlapping; added in order of their start keys unless the case
  // says otherwise.
  std::vector<std::pair<std::string, std::string>> dels;
  if (s.kinds) {
    size_t nd = 2 + keys.size() / 150;
    for (size_t i = 0; i < nd; i++) {
      size_t a = r.n(keys.size());
      size_t b = a + 1 + r.n(std::min<size_t>(40, keys.size()));
      std::string start = keys[a];
      std::string end = b < keys.size() ? keys[b] : keys.back() + "\x01";
      if (s.reverse && b >= keys.size()) end = std::string();  // nothing sorts after "" in reverse
      if (r.p(30)) end += std::string(1, '\0');  // an end that no key holds
      if (cmp->Compare(start, end) >= 0) continue;
      dels.emplace_back(start, end);
    }
    if (!s.unsortedDels) {
      std::sort(dels.begin(), dels.end(), [cmp](const auto& x, const auto& y) {
        int c = cmp->Compare(x.first, y.first);
        return c != 0 ? c < 0 : cmp->Compare(x.second, y.second) < 0;
      });
    }
  }

  std::string path = outDir + "/" + s.name + ".sst";
  SstFileWriter w(EnvOptions(), o);
  check(s.name + ": open", w.Open(path));
  std::set<std::string> held;
  size_t puts = 0, deletes = 0, merges = 0;
  for (size_t i = 0; i < keys.size(); i++) {
    const std::string& k = keys[i];
    held.insert(k);
    uint32_t c = s.kinds ? r.n(100) : 0;
    if (s.big && i == keys.size() / 3) {
      check(s.name + ": put", w.Put(k, valueOfLen(r, 4097 + r.n(1000))));
      puts++;
    } else if (c < 78) {
      check(s.name + ": put", w.Put(k, makeValue(r)));
      puts++;
    } else if (c < 90) {
      check(s.name + ": delete", w.Delete(k));
      deletes++;
    } else {
      check(s.name + ": merge", w.Merge(k, makeValue(r).substr(0, 40)));
      merges++;
    }
    // Interleave the range deletions with the points: SstFileWriter
    // takes them at any time.
    if (!dels.empty() && i == keys.size() / 2) {
      for (auto& d : dels) check(s.name + ": delete range", w.DeleteRange(d.first, d.second));
    }
  }
  if (!dels.empty() && keys.size() < 2) {
    for (auto& d : dels) check(s.name + ": delete range", w.DeleteRange(d.first, d.second));
  }
  for (auto& d : dels) {
    held.insert(d.first);
    held.insert(d.second);
  }
  check(s.name + ": finish", w.Finish());

  std::fprintf(manifest,
               "table %s src=sstwriter fv=%d checksum=%s compression=%s dict=%u train=%u index=%s "
               "index_restart=%d block_restart=%d block_size=%zu metadata_block_size=%" PRIu64
               " data_hash=%d filter=%s partition_filters=%d whole_key=%d prefix=%s comparator=%s "
               "puts=%zu deletes=%zu merges=%zu range_dels=%zu unsorted_dels=%d\n",
               s.name.c_str(), s.fv, checksumName(s.checksum), compName(s.comp), s.dictBytes, s.trainBytes,
               indexName(s.index), s.indexRestart, s.blockRestart, s.blockSize, s.metadataBlockSize,
               s.dataHash ? 1 : 0, filterName(s.filter, s.bits).c_str(), s.partitionFilters ? 1 : 0,
               s.wholeKey ? 1 : 0, s.prefix.empty() ? "-" : s.prefix.c_str(), cmp->Name(), puts, deletes,
               merges, dels.size(), s.unsortedDels ? 1 : 0);
  std::fflush(manifest);
  tablesWritten++;
  dumpTable(s.name, !dels.empty());

  // RocksDB's view through SstFileReader, and a Get of each probe by a
  // Seek (the prefix-aware one RocksDB does by default) landing on it.
  SstFileReader reader(o);
  check(s.name + ": SstFileReader open", reader.Open(path));
  check(s.name + ": SstFileReader verify", reader.VerifyChecksum());
  Sections views, gets;
  {
    ReadOptions ro;
    ro.total_order_seek = true;
    std::unique_ptr<Iterator> it(reader.NewIterator(ro));
    views.begin(kMaxSeq);
    viewSection(views, it.get());
  }
  {
    std::unique_ptr<Iterator> it(reader.NewIterator(ReadOptions()));
    gets.begin(kMaxSeq);
    for (const auto& k : probes(r, held)) {
      if (!inDomain(k)) continue;
      it->Seek(k);
      if (it->Valid() && it->key() == Slice(k)) {
        gets.text += hex(k) + "\t" + hex(it->value()) + "\n";
      } else {
        check(s.name + ": seek " + hex(k), it->status());
        gets.text += hex(k) + "\t-\n";
      }
    }
  }
  writeStack(s.name, "sstreader", {s.name}, {}, views, gets);
}

std::vector<Spec> matrix() {
  std::vector<Spec> m;
  auto add = [&m](const std::string& name, std::function<void(Spec&)> f) {
    Spec s;
    s.name = name;
    f(s);
    m.push_back(s);
  };
  // Footers and checksums. format_version 0 keeps LevelDB's magic only
  // with CRC32c: 7.8.3 silently writes format_version 1 for any other
  // checksum.
  add("fv0-crc32c-none", [](Spec& s) {
    s.fv = 0; s.checksum = kCRC32c; s.comp = kNoCompression; s.filter = kNoFilter; s.big = true;
  });
  add("fv0-crc32c-snappy", [](Spec& s) { s.fv = 0; s.checksum = kCRC32c; });
  add("fv0-xxh3-becomes-fv1", [](Spec& s) { s.fv = 0; s.checksum = kXXH3; s.kinds = false; s.n = 200; });
  for (ChecksumType c : {kCRC32c, kxxHash, kxxHash64}) {
    add(std::string("fv1-") + checksumName(c), [c](Spec& s) { s.fv = 1; s.checksum = c; });
  }
  for (int fv : {2, 3, 4, 5}) {
    for (ChecksumType c : {kNoChecksum, kCRC32c, kxxHash, kxxHash64, kXXH3}) {
      if (fv != 2 && fv != 5 && (c == kNoChecksum || c == kxxHash)) continue;
      add("fv" + std::to_string(fv) + "-" + checksumName(c), [fv, c](Spec& s) {
        s.fv = fv;
        s.checksum = c;
        s.n = 300;
      });
    }
  }
  // Compression, at format_version 5 (and 1, before the size prefix;
  // and 2, the first with it).
  for (CompressionType c : GetSupportedCompressions()) {
    add(std::string("comp-") + compName(c), [c](Spec& s) { s.comp = c; s.big = true; });
    if (c != kNoCompression && c != kSnappyCompression && c != kZSTDNotFinalCompression) {
      add(std::string("comp-fv1-") + compName(c), [c](Spec& s) { s.comp = c; s.fv = 1; s.checksum = kCRC32c; });
      add(std::string("comp-fv2-") + compName(c), [c](Spec& s) { s.comp = c; s.fv = 2; s.n = 300; });
    }
  }
  add("dict-zstd-raw", [](Spec& s) { s.comp = kZSTD; s.dictBytes = 4096; s.n = 1500; });
  add("dict-zstd-trained", [](Spec& s) { s.comp = kZSTD; s.dictBytes = 4096; s.trainBytes = 65536; s.n = 1500; });
  add("dict-zstd-fv2", [](Spec& s) { s.comp = kZSTD; s.dictBytes = 2048; s.fv = 2; s.checksum = kCRC32c; });
  add("dict-lz4", [](Spec& s) { s.comp = kLZ4Compression; s.dictBytes = 4096; s.n = 1500; });
  add("dict-lz4hc", [](Spec& s) { s.comp = kLZ4HCCompression; s.dictBytes = 1024; });
  // Indexes.
  for (int fv : {2, 3, 5}) {
    add("index-hash-fv" + std::to_string(fv), [fv](Spec& s) {
      s.fv = fv; s.index = BlockBasedTableOptions::kHashSearch; s.prefix = fv == 2 ? "capped:3" : "fixed:4";
      s.prefixStyle = true;
    });
    add("index-two-level-fv" + std::to_string(fv), [fv](Spec& s) {
      s.fv = fv; s.index = BlockBasedTableOptions::kTwoLevelIndexSearch; s.partitionFilters = true; s.n = 1500;
    });
    add("index-first-key-fv" + std::to_string(fv), [fv](Spec& s) {
      s.fv = fv; s.index = BlockBasedTableOptions::kBinarySearchWithFirstKey;
    });
  }
  add("index-two-level-nofilter", [](Spec& s) {
    s.index = BlockBasedTableOptions::kTwoLevelIndexSearch; s.filter = kNoFilter; s.metadataBlockSize = 128;
    s.n = 1200;
  });
  add("index-two-level-unpartitioned-filter", [](Spec& s) {
    s.index = BlockBasedTableOptions::kTwoLevelIndexSearch; s.filter = kRibbon; s.n = 1000;
  });
  for (int ir : {4, 16}) {
    add("index-restart" + std::to_string(ir), [ir](Spec& s) { s.indexRestart = ir; s.n = 1200; });
    add("index-restart" + std::to_string(ir) + "-fv3", [ir](Spec& s) { s.indexRestart = ir; s.fv = 3; });
  }
  add("index-restart4-two-level", [](Spec& s) {
    s.indexRestart = 4; s.index = BlockBasedTableOptions::kTwoLevelIndexSearch; s.partitionFilters = true;
    s.n = 1200;
  });
  add("index-restart4-first-key", [](Spec& s) {
    s.indexRestart = 4; s.index = BlockBasedTableOptions::kBinarySearchWithFirstKey;
  });
  // Data blocks.
  add("data-restart1", [](Spec& s) { s.blockRestart = 1; });
  add("data-restart4-fv2", [](Spec& s) { s.blockRestart = 4; s.fv = 2; });
  add("data-hash", [](Spec& s) { s.dataHash = true; s.blockSize = 1024; s.n = 1200; });
  add("data-hash-restart1", [](Spec& s) { s.dataHash = true; s.blockRestart = 1; s.comp = kNoCompression; });
  add("data-hash-fv2", [](Spec& s) { s.dataHash = true; s.fv = 2; s.blockSize = 4096; s.n = 1000; });
  add("block-4k", [](Spec& s) { s.blockSize = 4096; s.n = 2000; });
  add("block-64", [](Spec& s) { s.blockSize = 64; s.comp = kNoCompression; s.big = true; });
  // Filters.
  add("filter-none", [](Spec& s) { s.filter = kNoFilter; });
  add("filter-bloom-frac", [](Spec& s) { s.bits = 7.5; s.n = 1000; });
  add("filter-bloom-1", [](Spec& s) { s.bits = 1; });
  add("filter-bloom-fv4-legacy", [](Spec& s) { s.fv = 4; s.n = 1000; });
  add("filter-bloom-fv2-frac", [](Spec& s) { s.fv = 2; s.bits = 13.7; });
  add("filter-ribbon", [](Spec& s) { s.filter = kRibbon; s.n = 1500; });
  add("filter-ribbon-frac", [](Spec& s) { s.filter = kRibbon; s.bits = 6.3; });
  add("filter-ribbon-fv4", [](Spec& s) { s.filter = kRibbon; s.fv = 4; });
  add("filter-prefix-fixed-whole", [](Spec& s) { s.prefix = "fixed:4"; s.prefixStyle = true; });
  add("filter-prefix-fixed-only", [](Spec& s) { s.prefix = "fixed:4"; s.prefixStyle = true; s.wholeKey = false; });
  add("filter-prefix-capped-whole", [](Spec& s) { s.prefix = "capped:3"; s.prefixStyle = true; s.filter = kRibbon; });
  add("filter-prefix-capped-only", [](Spec& s) {
    s.prefix = "capped:3"; s.prefixStyle = true; s.wholeKey = false; s.fv = 3;
  });
  add("filter-prefix-partitioned", [](Spec& s) {
    s.prefix = "fixed:4"; s.prefixStyle = true; s.index = BlockBasedTableOptions::kTwoLevelIndexSearch;
    s.partitionFilters = true; s.n = 1500;
  });
  add("filter-prefix-partitioned-only", [](Spec& s) {
    s.prefix = "capped:3"; s.prefixStyle = true; s.wholeKey = false; s.filter = kRibbon;
    s.index = BlockBasedTableOptions::kTwoLevelIndexSearch; s.partitionFilters = true; s.n = 1500;
  });
  // Comparator, kinds.
  add("reverse", [](Spec& s) { s.reverse = true; });
  add("reverse-two-level", [](Spec& s) {
    s.reverse = true; s.index = BlockBasedTableOptions::kTwoLevelIndexSearch; s.partitionFilters = true;
    s.n = 1200;
  });
  add("reverse-prefix-fv3", [](Spec& s) { s.reverse = true; s.prefix = "fixed:4"; s.prefixStyle = true; s.fv = 3; });
  add("puts-only", [](Spec& s) { s.kinds = false; s.n = 2000; s.blockSize = 1024; });
  add("range-dels-unsorted", [](Spec& s) { s.unsortedDels = true; });
  return m;
}

// ---------------------------------------------------------------- databases

// DBCase is a workload through a database, the tables it leaves copied
// out as NAME-tI.
struct DBCase {
  std::string name;
  int fv = 5;
  ChecksumType checksum = kXXH3;
  CompressionType comp = kLZ4Compression;
  BlockBasedTableOptions::IndexType index = BlockBasedTableOptions::kBinarySearch;
  FilterKind filter = kBloom;
  std::string prefix;
  bool reverse = false;
  int phases = 4;
  bool snapshots = true;       // held across the flushes, views at each
  bool flushEachPhase = false;  // one table per phase, else one flush at the end
  int compact = 0;             // 1: CompactRange at the end, snapshots released; 2: one kept
  bool blob = false;
  bool entity = false;
  bool merges = true;
  bool ingest = false;
  size_t keys = 500;
  int opsPerPhase = 400;
};

std::string dbDir(const std::string& name) { return outDir + "/" + name + ".db"; }

Options dbOptions(const DBCase& c) {
  Options o;
  o.create_if_missing = true;
  o.error_if_exists = true;
  o.merge_operator.reset(new StringAppend);
  o.disable_auto_compactions = true;
  o.write_buffer_size = 64 << 20;
  o.compression = c.comp;
  o.prefix_extractor = prefixExtractor(c.prefix);
  if (c.reverse) o.comparator = ReverseBytewiseComparator();
  BlockBasedTableOptions t;
  t.format_version = c.fv;
  t.checksum = c.checksum;
  t.index_type = c.index;
  t.block_size = 256;
  t.metadata_block_size = 256;
  if (c.index == BlockBasedTableOptions::kTwoLevelIndexSearch) t.partition_filters = c.filter != kNoFilter;
  if (c.filter == kBloom) t.filter_policy.reset(NewBloomFilterPolicy(10));
  if (c.filter == kRibbon) t.filter_policy.reset(NewRibbonFilterPolicy(10, -1));
  o.table_factory.reset(NewBlockBasedTableFactory(t));
  if (c.blob) {
    o.enable_blob_files = true;
    o.min_blob_size = 64;
  }
  return o;
}

// KeyState tracks a single-delete key, so that the workload stays out
// of RocksDB's undefined behaviour: SingleDelete only a key put once
// since its last single delete, and no other kind on such keys.
struct KeyState {
  bool live = false;  // put once, not yet single-deleted
};

void runDB(const DBCase& c) {
  Rng r(seedOf(c.name));
  Options o = dbOptions(c);
  std::string dir = dbDir(c.name);
  DestroyDB(dir, o);
  DB* raw = nullptr;
  check(c.name + ": open", DB::Open(o, dir, &raw));
  std::unique_ptr<DB> db(raw);
  const Comparator* cmp = o.comparator;
  WriteOptions wo;
  wo.disableWAL = true;

  // Keys: single-delete keys all begin with 's' and no other key does,
  // so that range deletions (bounded by other keys on one side of 's')
  // never meet a single delete.
  size_t nkeys = std::max<size_t>(60, c.keys / scaleDiv);
  int ops = std::max<int>(50, c.opsPerPhase / static_cast<int>(scaleDiv));
  std::vector<std::string> keys = mixedKeys(r, nkeys);
  std::vector<std::string> other, sd;
  for (auto& k : keys) {
    if (k.empty() || k[0] != 's') other.push_back(k);
  }
  for (size_t i = 0; i < nkeys / 8; i++) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "s%05zu", i);
    sd.push_back(buf);
  }
  std::map<std::string, KeyState> state;
  auto less = [cmp](const std::string& a, const std::string& b) { return cmp->Compare(a, b) < 0; };
  std::sort(other.begin(), other.end(), less);
  std::set<std::string> held;

  std::vector<const Snapshot*> snaps;
  auto put = [&](const std::string& k, bool entityOK) {
    std::string v = makeValue(r);
    if (entityOK && c.entity && r.p(40)) {
      WideColumns cols;
      std::vector<std::string> store;
      int n = 1 + r.n(3);
      std::set<std::string> names;
      if (r.p(50)) names.insert("");  // the default column
      while (names.size() < static_cast<size_t>(n)) names.insert(randomBytes(r, 1 + r.n(5)));
      store.reserve(2 * names.size());
      for (auto& nm : names) {
        store.push_back(nm);
        store.push_back(makeValue(r).substr(0, 30));
      }
      for (size_t i = 0; i < store.size(); i += 2) cols.emplace_back(store[i], store[i + 1]);
      check(c.name + ": put entity", db->PutEntity(wo, db->DefaultColumnFamily(), k, cols));
    } else {
      check(c.name + ": put", db->Put(wo, k, v));
    }
  };
  for (int phase = 0; phase < c.phases; phase++) {
    for (int i = 0; i < ops; i++) {
      uint32_t op = r.n(100);
      if (op < 10) {
        // Single delete keys: put once, then single delete.
        const std::string& k = sd[r.n(sd.size())];
        held.insert(k);
        KeyState& st = state[k];
        if (!st.live) {
          put(k, false);
          st.live = true;
        } else {
          check(c.name + ": single delete", db->SingleDelete(wo, k));
          st.live = false;
        }
        continue;
      }
      const std::string& k = other[r.n(other.size())];
      held.insert(k);
      if (op < 60) {
        put(k, true);
      } else if (op < 72) {
        check(c.name + ": delete", db->Delete(wo, k));
      } else if (op < 90 && c.merges) {
        check(c.name + ": merge", db->Merge(wo, k, makeValue(r).substr(0, 30)));
      } else if (op < 93) {
        // A range deletion over other keys on one side of the 's' keys.
        size_t a = r.n(other.size());
        size_t b = std::min(other.size() - 1, a + 1 + r.n(30));
        std::string start = other[a], end = other[b];
        if (r.p(30)) end += std::string(1, '\0');
        bool aLow = cmp->Compare(start, "s") < 0, bLow = cmp->Compare(end, "s") < 0;
        if (aLow != bLow || cmp->Compare(start, end) >= 0) continue;
        check(c.name + ": delete range", db->DeleteRange(wo, db->DefaultColumnFamily(), start, end));
        held.insert(start);
        held.insert(end);
      } else {
        put(k, true);
      }
    }
    if (c.snapshots) snaps.push_back(db->GetSnapshot());
    if (c.flushEachPhase) check(c.name + ": flush", db->Flush(FlushOptions()));
  }

  SequenceNumber ingestSeq = 0;
  if (c.ingest) {
    // Writes left in the memtable, then a file ingested over them: the
    // ingestion flushes the memtable and gives the file the next
    // sequence number, written into it (write_global_seqno).
    for (int i = 0; i < ops / 4; i++) put(other[r.n(other.size())], true);
    std::string ext = outDir + "/" + c.name + "-external.in.sst";
    SstFileWriter w(EnvOptions(), o);
    check(c.name + ": external open", w.Open(ext));
    std::vector<std::string> ks;
    for (auto& k : other)
      if (r.p(30)) ks.push_back(k);
    for (size_t i = 0; i < ks.size(); i++) {
      held.insert(ks[i]);
      uint32_t op = r.n(100);
      if (op < 70) {
        check(c.name + ": external put", w.Put(ks[i], makeValue(r)));
      } else if (op < 85) {
        check(c.name + ": external delete", w.Delete(ks[i]));
      } else {
        check(c.name + ": external merge", w.Merge(ks[i], makeValue(r).substr(0, 20)));
      }
    }
    for (int i = 0; i < 3; i++) {
      size_t a = r.n(other.size()), b = std::min(other.size() - 1, a + 1 + r.n(25));
      if (cmp->Compare(other[a], other[b]) < 0) {
        check(c.name + ": external delete range", w.DeleteRange(other[a], other[b]));
        held.insert(other[a]);
        held.insert(other[b]);
      }
    }
    check(c.name + ": external finish", w.Finish());
    IngestExternalFileOptions io;
    io.write_global_seqno = true;
    io.move_files = false;
    check(c.name + ": ingest", db->IngestExternalFile({ext}, io));
    std::remove(ext.c_str());
    ingestSeq = db->GetLatestSequenceNumber();
    if (c.snapshots) snaps.push_back(db->GetSnapshot());
  }

  if (!c.flushEachPhase) check(c.name + ": flush", db->Flush(FlushOptions()));
  if (c.compact) {
    while (snaps.size() > static_cast<size_t>(c.compact == 2 ? 1 : 0)) {
      db->ReleaseSnapshot(snaps.back());
      snaps.pop_back();
    }
    CompactRangeOptions cro;
    cro.bottommost_level_compaction = BottommostLevelCompaction::kForce;
    check(c.name + ": compact", db->CompactRange(cro, nullptr, nullptr));
  }

  // The tables, newest first (by largest sequence number: an ingested
  // file's number is older than the flush it causes).
  std::vector<LiveFileMetaData> md;
  db->GetLiveFilesMetaData(&md);
  std::sort(md.begin(), md.end(), [](const LiveFileMetaData& a, const LiveFileMetaData& b) {
    return a.largest_seqno > b.largest_seqno;
  });
  std::vector<std::string> names;
  int ti = static_cast<int>(md.size());
  for (auto& f : md) {
    std::string name = c.name + "-t" + std::to_string(ti--);
    std::string data = readFile(f.db_path + f.name);
    std::ofstream(outDir + "/" + name + ".sst", std::ios::binary) << data;
    std::fprintf(manifest,
                 "table %s src=db fv=%d checksum=%s compression=%s index=%s filter=%s prefix=%s comparator=%s "
                 "level=%d seqnos=%" PRIu64 "-%" PRIu64 " blob=%d entity=%d ingested=%d file=%s\n",
                 name.c_str(), c.fv, checksumName(c.checksum), compName(c.comp), indexName(c.index),
                 filterName(c.filter, 10).c_str(), c.prefix.empty() ? "-" : c.prefix.c_str(), cmp->Name(),
                 f.level, f.smallest_seqno, f.largest_seqno, c.blob ? 1 : 0, c.entity ? 1 : 0,
                 ingestSeq > 0 && f.smallest_seqno == ingestSeq && f.largest_seqno == ingestSeq ? 1 : 0,
                 f.name.c_str());
    std::fflush(manifest);
    tablesWritten++;
    // Whether it has range deletions: sst_dump's properties say; ask
    // the table itself through SstFileReader.
    SstFileReader tr(o);
    check(name + ": SstFileReader open", tr.Open(outDir + "/" + name + ".sst"));
    dumpTable(name, tr.GetTableProperties()->num_range_deletions > 0);
    names.push_back(name);
  }

  // Views and Gets at each snapshot still held and at the latest.
  std::vector<SequenceNumber> at;
  std::vector<const Snapshot*> from;
  for (auto* s : snaps) {
    at.push_back(s->GetSequenceNumber());
    from.push_back(s);
  }
  at.push_back(kMaxSeq);
  from.push_back(nullptr);
  Sections views, gets;
  std::vector<std::string> ps = probes(r, held);
  for (size_t i = 0; i < at.size(); i++) {
    ReadOptions ro;
    ro.snapshot = from[i];
    ro.total_order_seek = true;
    views.begin(at[i]);
    std::unique_ptr<Iterator> it(db->NewIterator(ro));
    viewSection(views, it.get());
    gets.begin(at[i]);
    ReadOptions go;
    go.snapshot = from[i];
    for (const auto& k : ps) {
      std::string v;
      Status s = db->Get(go, k, &v);
      if (s.ok()) {
        gets.text += hex(k) + "\t" + hex(v) + "\n";
      } else if (s.IsNotFound()) {
        gets.text += hex(k) + "\t-\n";
      } else {
        die(c.name + ": get " + hex(k), s);
      }
    }
  }
  std::vector<SequenceNumber> snapSeqs(at.begin(), at.end() - 1);
  writeStack(c.name, "db", names, snapSeqs, views, gets);
  for (auto* s : snaps) db->ReleaseSnapshot(s);
  check(c.name + ": close", db->Close());
  db.reset();
  DestroyDB(dir, o);
}

std::vector<DBCase> dbCases() {
  std::vector<DBCase> m;
  auto add = [&m](const std::string& name, std::function<void(DBCase&)> f) {
    DBCase c;
    c.name = name;
    f(c);
    m.push_back(c);
  };
  add("db-snapshots", [](DBCase&) {});
  add("db-no-snapshots", [](DBCase& c) {
    c.snapshots = false; c.fv = 3; c.checksum = kCRC32c; c.comp = kZSTD; c.filter = kRibbon;
    c.index = BlockBasedTableOptions::kTwoLevelIndexSearch;
  });
  add("db-flushes", [](DBCase& c) { c.flushEachPhase = true; c.fv = 4; c.checksum = kxxHash64; c.comp = kSnappyCompression; });
  add("db-compact", [](DBCase& c) { c.flushEachPhase = true; c.compact = 1; });
  add("db-compact-snapshot", [](DBCase& c) { c.flushEachPhase = true; c.compact = 2; c.comp = kZlibCompression; });
  add("db-blob", [](DBCase& c) { c.blob = true; c.merges = false; c.flushEachPhase = true; c.phases = 2; });
  add("db-entity", [](DBCase& c) { c.entity = true; c.merges = false; c.phases = 2; });
  add("db-ingest", [](DBCase& c) { c.ingest = true; c.phases = 2; c.flushEachPhase = true; });
  add("db-reverse", [](DBCase& c) { c.reverse = true; c.phases = 3; });
  add("db-prefix-hash", [](DBCase& c) {
    c.prefix = "capped:4"; c.index = BlockBasedTableOptions::kHashSearch; c.fv = 2; c.phases = 2;
  });
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "-small") == 0) {
    scaleDiv = 10;
    argc--;
    argv++;
  }
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: rdboracle [-small] OUTDIR [SUBSTRING]\n");
    return 2;
  }
  outDir = argv[1];
  std::string only = argc == 3 ? argv[2] : "";
  manifest = std::fopen((outDir + "/manifest.txt").c_str(), "w");
  if (manifest == nullptr) {
    std::perror("rdboracle: manifest.txt");
    return 1;
  }
  for (const Spec& s : matrix()) {
    if (s.name.find(only) != std::string::npos) writeSpec(s);
  }
  for (const DBCase& c : dbCases()) {
    if (c.name.find(only) != std::string::npos) runDB(c);
  }
  std::fclose(manifest);
  std::printf("rdboracle: RocksDB %d.%d.%d wrote %d tables, %d stacks\n", ROCKSDB_MAJOR, ROCKSDB_MINOR,
              ROCKSDB_PATCH, tablesWritten, stacksWritten);
  return 0;
}
