// filteroracle: RocksDB's own answers about its filters, for the tests of
// package rocksfilter. Built at test time against Debian's librocksdb-dev
// (RocksDB 7.8.3): g++ -O1 -o filteroracle filteroracle.cc -lrocksdb.
//
// Keys and probes are read from standard input, one hex string a line (an
// empty line is the empty key).
//
//   filteroracle hash SEED...
//       per key: Hash64(key) (RocksDB's GetSliceHash64), Hash64(key, SEED)
//       for each SEED (decimal), and the legacy BloomHash(key), in hex.
//   filteroracle write OUT.sst FV POLICY BPK PREFIX WKF PART MBS
//       writes the keys (sorted, distinct) with SstFileWriter, value "v";
//       with no keys, a table holding only a range deletion.
//       FV format_version, POLICY bloom|ribbon, BPK bits per key,
//       PREFIX none|fixed:N|capped:N, WKF whole_key_filtering 0|1,
//       PART 1 for partitioned filters (two-level index), MBS
//       metadata_block_size.
//   filteroracle reader FILTER
//       loads FILTER (a filter block's contents) into RocksDB's own
//       filter reader (FilterPolicy::GetFilterBitsReader) and prints, per
//       probe, 1 if it may match, else 0.
//   filteroracle get SST DBDIR FV POLICY BPK PREFIX WKF PART MBS
//       ingests SST into a new database at DBDIR opened with the same
//       table options and statistics, then Gets each probe and prints
//       the changes of the tickers BLOOM_FILTER_USEFUL,
//       BLOOM_FILTER_FULL_POSITIVE, BLOOM_FILTER_PREFIX_CHECKED,
//       BLOOM_FILTER_PREFIX_USEFUL around that Get, then y if found
//       else n: "U P C X y".

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>

namespace rocksdb {
// Exported by librocksdb (util/hash.h), not in its public headers.
uint64_t Hash64(const char* data, size_t n, uint64_t seed);
uint64_t Hash64(const char* data, size_t n);
uint32_t Hash(const char* data, size_t n, uint32_t seed);

// The interface FilterPolicy::GetFilterBitsReader returns, declared in
// RocksDB's table/block_based/filter_policy_internal.h (not installed):
// only its virtual functions, in their order, are used here.
class FilterBitsReader {
 public:
  virtual ~FilterBitsReader() {}
  virtual bool MayMatch(const Slice& entry) = 0;
  virtual void MayMatch(int num_keys, Slice** keys, bool* may_match) = 0;
};
}  // namespace rocksdb

using namespace rocksdb;

static void die(const std::string& msg) {
  fprintf(stderr, "filteroracle: %s\n", msg.c_str());
  exit(1);
}

static void check(const Status& s, const char* what) {
  if (!s.ok()) die(std::string(what) + ": " + s.ToString());
}

static std::string unhex(const std::string& h) {
  if (h.size() % 2) die("odd hex length: " + h);
  std::string out;
  for (size_t i = 0; i < h.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  }
  return out;
}

static std::vector<std::string> readKeys() {
  std::vector<std::string> keys;
  std::string line;
  while (std::getline(std::cin, line)) keys.push_back(unhex(line));
  return keys;
}

static const SliceTransform* prefixExtractor(const std::string& spec) {
  if (spec == "none") return nullptr;
  size_t colon = spec.find(':');
  if (colon == std::string::npos) die("bad prefix spec " + spec);
  size_t n = std::stoul(spec.substr(colon + 1));
  std::string kind = spec.substr(0, colon);
  if (kind == "fixed") return NewFixedPrefixTransform(n);
  if (kind == "capped") return NewCappedPrefixTransform(n);
  die("bad prefix spec " + spec);
  return nullptr;
}

// options builds the table options shared by write and get from
// argv[0..6] = FV POLICY BPK PREFIX WKF PART MBS.
static Options options(char** a) {
  Options o;
  BlockBasedTableOptions t;
  t.format_version = static_cast<uint32_t>(atoi(a[0]));
  std::string policy = a[1];
  double bpk = atof(a[2]);
  if (policy == "bloom") {
    t.filter_policy.reset(NewBloomFilterPolicy(bpk));
  } else if (policy == "ribbon") {
    t.filter_policy.reset(NewRibbonFilterPolicy(bpk));
  } else {
    die("bad policy " + policy);
  }
  const SliceTransform* pe = prefixExtractor(a[3]);
  if (pe != nullptr) o.prefix_extractor.reset(pe);
  t.whole_key_filtering = atoi(a[4]) != 0;
  if (atoi(a[5]) != 0) {
    t.partition_filters = true;
    t.index_type = BlockBasedTableOptions::kTwoLevelIndexSearch;
  }
  t.metadata_block_size = static_cast<uint64_t>(atoll(a[6]));
  o.table_factory.reset(NewBlockBasedTableFactory(t));
  return o;
}

static int cmdHash(int argc, char** argv) {
  std::vector<uint64_t> seeds;
  for (int i = 0; i < argc; i++) seeds.push_back(strtoull(argv[i], nullptr, 10));
  for (const std::string& k : readKeys()) {
    printf("%016llx", (unsigned long long)Hash64(k.data(), k.size()));
    for (uint64_t s : seeds) {
      printf(" %016llx", (unsigned long long)Hash64(k.data(), k.size(), s));
    }
    printf(" %08x\n", Hash(k.data(), k.size(), 0xbc9f1d34));
  }
  return 0;
}

static int cmdWrite(int argc, char** argv) {
  if (argc != 8) die("usage: write OUT FV POLICY BPK PREFIX WKF PART MBS");
  Options o = options(argv + 1);
  SstFileWriter w(EnvOptions(), o);
  check(w.Open(argv[0]), "open");
  std::vector<std::string> keys = readKeys();
  if (keys.empty()) {
    check(w.DeleteRange("a", "b"), "delete range");
  }
  for (const std::string& k : keys) check(w.Put(k, "v"), "put");
  check(w.Finish(), "finish");
  return 0;
}

static int cmdReader(int argc, char** argv) {
  if (argc != 1) die("usage: reader FILTER");
  std::ifstream in(argv[0], std::ios::binary);
  if (!in) die(std::string("cannot read ") + argv[0]);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string contents = ss.str();
  // Any built-in policy reads every built-in filter format.
  std::unique_ptr<const FilterPolicy> policy(NewBloomFilterPolicy(10));
  std::unique_ptr<FilterBitsReader> r(
      policy->GetFilterBitsReader(Slice(contents)));
  std::string out;
  for (const std::string& k : readKeys()) out.push_back(r->MayMatch(k) ? '1' : '0');
  printf("%s\n", out.c_str());
  return 0;
}

static int cmdGet(int argc, char** argv) {
  if (argc != 9) die("usage: get SST DBDIR FV POLICY BPK PREFIX WKF PART MBS");
  Options o = options(argv + 2);
  o.create_if_missing = true;
  o.statistics = CreateDBStatistics();
  DB* raw;
  check(DB::Open(o, argv[1], &raw), "open db");
  std::unique_ptr<DB> db(raw);
  IngestExternalFileOptions ifo;
  ifo.move_files = false;
  check(db->IngestExternalFile({argv[0]}, ifo), "ingest");
  Statistics* st = o.statistics.get();
  const uint32_t tickers[4] = {BLOOM_FILTER_USEFUL, BLOOM_FILTER_FULL_POSITIVE,
                               BLOOM_FILTER_PREFIX_CHECKED,
                               BLOOM_FILTER_PREFIX_USEFUL};
  for (const std::string& k : readKeys()) {
    uint64_t before[4];
    for (int i = 0; i < 4; i++) before[i] = st->getTickerCount(tickers[i]);
    std::string v;
    Status s = db->Get(ReadOptions(), k, &v);
    if (!s.ok() && !s.IsNotFound()) check(s, "get");
    for (int i = 0; i < 4; i++) {
      printf("%llu ", (unsigned long long)(st->getTickerCount(tickers[i]) - before[i]));
    }
    printf("%c\n", s.ok() ? 'y' : 'n');
  }
  check(db->Close(), "close");
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) die("usage: filteroracle hash|write|reader|get ...");
  std::string cmd = argv[1];
  if (cmd == "hash") return cmdHash(argc - 2, argv + 2);
  if (cmd == "write") return cmdWrite(argc - 2, argv + 2);
  if (cmd == "reader") return cmdReader(argc - 2, argv + 2);
  if (cmd == "get") return cmdGet(argc - 2, argv + 2);
  die("unknown command " + cmd);
  return 1;
}
