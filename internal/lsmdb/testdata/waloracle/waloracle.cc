// waloracle: RocksDB 7.8.3 (Debian's librocksdb-dev) as an oracle for
// package lsmdb's log reader and write batch decoder (wal_oracle_test.go
// compiles it at test time):
//
//   g++ -O1 -std=c++17 -o waloracle waloracle.cc -lrocksdb
//
// Modes:
//
//   gen DIR SEED MODE
//       creates a database in DIR by a seeded workload of write batches
//       holding every record kind a write batch takes through RocksDB's
//       API (puts, deletes, single deletes, merges, range deletions, empty
//       ones among them, entities, log data, and blob indexes written as
//       raw batches), binary keys with the empty key, empty and 40 KiB
//       values and one of 70000 bytes (records cut into fragments over
//       blocks). Every column family is flushed after a first phase; the
//       last phase stays in the live log (avoid_flush_during_shutdown).
//       MODE plain: three column families (default, one, two), plain
//       logs. The recycled modes (recycle_log_file_num=2, which RocksDB
//       7.8.3 honours only with kSkipAnyCorruptedRecords; the default
//       family only, as 7.8.3 crashes flushing several families with
//       recycled logs, in DBImpl::MarkLogsSynced) write the first phase's
//       log again as the last one's, which is shorter, so that its file
//       keeps the first life's records after its own: recycle-garbage
//       ends this life inside a first-life record, recycle-stale where a
//       first-life record begins (the first batches of both lives have
//       the same lengths), recycle-empty writes nothing in it. They end
//       without closing the database, as a crash does: a clean close
//       would trim the file. Prints "wal N" (the live log), "flushseq S"
//       (the sequence number after the flushes) and "lastseq L".
//   dump DIR [FROMSEQ [MODE]]
//       opens DIR with DB::OpenForReadOnly and default options (the WAL
//       recovery mode kPointInTimeRecovery), or with MODE skip, tolerate
//       or absolute (kSkipAnyCorruptedRecords,
//       kTolerateCorruptedTailRecords, kAbsoluteConsistency) or nomerge
//       (no merge operator), and prints "open ok" or "open error STATUS";
//       then "lastseq L"; for each column family "cf ID NAME" and every
//       internal entry RocksDB holds for it, in its tables and memtables
//       (GetAllKeyVersions, which leaves out the entries a newer range
//       deletion hides): "v HEXKEY SEQ TYPE HEXVALUE"; then, unless
//       FROMSEQ is -1, the write batches GetUpdatesSince(FROMSEQ) reads
//       from the logs: "batch SEQ HEXDATA" (or "updates error STATUS").
//   batch
//       reads write batches, one hex line each, from standard input, and
//       prints what WriteBatch::Iterate reports for each: one line per
//       record ("put CF HEXKEY HEXVALUE", "delete CF HEXKEY",
//       "singledelete", "deleterange", "merge", "blobindex", "entity",
//       "logdata HEXBLOB", "beginprepare UNPREPARE", "endprepare HEXXID",
//       "commit HEXXID", "committs HEXXID HEXTS", "rollback HEXXID",
//       "noop"), then "ok COUNT" or "error STATUS", then "end".
//   twopc DIR
//       writes a database through a TransactionDB (two-phase commit): a
//       committed prepared transaction, a rolled back one and one left
//       prepared, leaving them in the log.
#include <rocksdb/db.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/options.h>
#include <rocksdb/transaction_log.h>
#include <rocksdb/utilities/debug.h>
#include <rocksdb/utilities/transaction_db.h>
#include <rocksdb/wide_columns.h>
#include <rocksdb/write_batch.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <chrono>
#include <vector>

using namespace rocksdb;

static void check(const char* what, const Status& s) {
  if (!s.ok()) {
    fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    exit(1);
  }
}

static std::string hex(const Slice& s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    unsigned char c = s[i];
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

static std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) {
    out.push_back((char)std::stoi(h.substr(i, 2), nullptr, 16));
  }
  return out;
}

// Merges only need to be accepted: the oracle prints operands, not
// merged values.
class Append : public AssociativeMergeOperator {
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
  const char* Name() const override { return "waloracle.Append"; }
};

static const std::vector<std::string> kFamilies = {"default", "one", "two"};

static std::vector<ColumnFamilyDescriptor> families(const ColumnFamilyOptions& cfo, size_t n) {
  std::vector<ColumnFamilyDescriptor> out;
  for (size_t i = 0; i < n; i++) out.emplace_back(kFamilies[i], cfo);
  return out;
}

static void putVarint32(std::string* dst, uint32_t v) {
  while (v >= 128) {
    dst->push_back((char)(v | 128));
    v >>= 7;
  }
  dst->push_back((char)v);
}

static void putLengthPrefixed(std::string* dst, const std::string& s) {
  putVarint32(dst, (uint32_t)s.size());
  dst->append(s);
}

struct Workload {
  std::mt19937_64 r;
  explicit Workload(uint64_t seed) : r(seed) {}
  uint64_t n(uint64_t k) { return r() % k; }

  std::string key() {
    // A small key space so keys repeat; binary bytes and the empty key.
    uint64_t i = n(40);
    if (i == 0) return std::string();
    std::string k = "k" + std::to_string(i);
    if (i % 7 == 0) k.push_back('\0');
    if (i % 11 == 0) k.push_back((char)0xff);
    return k;
  }
  std::string value() {
    uint64_t c = n(20);
    if (c == 0) return std::string();
    size_t len = c == 1 ? 40000 + n(3000) : 1 + n(60);
    std::string v(len, 'a');
    for (auto& ch : v) ch = (char)('a' + n(26));
    return v;
  }
};

// batchOps adds 1 to 6 random records to b, across the families.
static void batchOps(Workload& w, WriteBatch& b, const std::vector<ColumnFamilyHandle*>& h,
                     std::string* raw) {
  int ops = 1 + (int)w.n(6);
  for (int i = 0; i < ops; i++) {
    ColumnFamilyHandle* cf = h[w.n(h.size())];
    uint64_t c = w.n(100);
    if (c < 35) {
      check("put", b.Put(cf, w.key(), w.value()));
    } else if (c < 45) {
      check("delete", b.Delete(cf, w.key()));
    } else if (c < 52) {
      // Keys of their own: RocksDB's flush refuses a single delete that
      // meets a delete or a merge of its key.
      std::string k = "s" + std::to_string(w.n(8));
      if (w.n(2) == 0) {
        check("singledelete put", b.Put(cf, k, w.value()));
      } else {
        check("singledelete", b.SingleDelete(cf, k));
      }
    } else if (c < 65) {
      check("merge", b.Merge(cf, w.key(), w.value().substr(0, 20)));
    } else if (c < 75) {
      std::string a = w.key(), z = w.key();
      if (w.n(4) == 0) z = a;  // empty: RocksDB skips it, without a sequence number
      if (z < a) std::swap(a, z);
      check("deleterange", b.DeleteRange(cf, a, z));
    } else if (c < 85) {
      WideColumns cols;
      std::string v1 = w.value(), v2 = w.value().substr(0, 10);
      if (w.n(2) == 0) cols.emplace_back(kDefaultWideColumnName, v1);
      cols.emplace_back("col", v2);
      // Keys of their own, kept apart from merges.
      check("putentity", b.PutEntity(cf, "e" + std::to_string(w.n(8)), cols));
    } else if (c < 92) {
      check("logdata", b.PutLogData(w.value().substr(0, 30)));
    } else {
      // A blob index, which no public API writes: the record is kept aside
      // and the caller writes it as a batch of its own.
      if (raw != nullptr && raw->empty()) {
        uint32_t id = cf->GetID();
        std::string rec;
        if (id == 0) {
          rec.push_back((char)0x11);
        } else {
          rec.push_back((char)0x10);
          putVarint32(&rec, id);
        }
        // Keys of their own: a flush asserts merging onto a blob index.
        putLengthPrefixed(&rec, "b" + std::to_string(w.n(8)));
        // A well-formed index (flushes decode it): kBlob, file number,
        // offset, size, compression; no blob file is ever read.
        std::string index(1, (char)1);
        putVarint32(&index, 7 + (uint32_t)w.n(100));
        putVarint32(&index, (uint32_t)w.n(100000));
        putVarint32(&index, 1 + (uint32_t)w.n(1000));
        index.push_back((char)0);
        putLengthPrefixed(&rec, index);
        *raw = rec;
      }
    }
  }
}

// alignedBatch fills b with template i's records: kinds and lengths fixed
// by i, bytes by fill, so that a later life writing the same templates
// with another fill writes log records of exactly the same lengths.
static void alignedBatch(WriteBatch& b, int i, char fill) {
  std::mt19937_64 t(1000 + i);
  int ops = 1 + (int)(t() % 4);
  for (int j = 0; j < ops; j++) {
    std::string k = "t" + std::to_string(100 + t() % 900);
    size_t vlen = i == 3 && j == 0 ? 70000 : (size_t)(t() % 80);
    std::string v(vlen, fill);
    switch (t() % 5) {
      case 0:
        check("aligned put", b.Put(k, v));
        break;
      case 1:
        check("aligned delete", b.Delete(k));
        break;
      case 2:
        check("aligned merge", b.Merge(k, v.substr(0, 20)));
        break;
      case 3:
        check("aligned deleterange", b.DeleteRange(k, k + "~"));
        break;
      default:
        check("aligned logdata", b.PutLogData(v.substr(0, 10)));
        break;
    }
  }
}

// gen's modes: plain logs with three column families, or recycled logs
// (the default family only) whose last life is random batches (its end
// falls inside a record of the first life), the first life's first
// batches again with other bytes (it ends where a first-life record
// starts), or empty.
enum GenMode { kPlain, kRecycleGarbage, kRecycleStale, kRecycleEmpty };

static int gen(const std::string& dir, uint64_t seed, GenMode mode) {
  const bool recycle = mode != kPlain;
  Options o;
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  o.avoid_flush_during_shutdown = true;
  o.write_buffer_size = 64 << 20;
  o.merge_operator.reset(new Append);
  if (recycle) {
    o.recycle_log_file_num = 2;
    // RocksDB 7.8.3 silently turns recycling off in every other mode.
    o.wal_recovery_mode = WALRecoveryMode::kSkipAnyCorruptedRecords;
  }
  std::vector<ColumnFamilyHandle*> h;
  DB* db;
  check("open", DB::Open(DBOptions(o), dir,
                          families(ColumnFamilyOptions(o), recycle ? 1 : kFamilies.size()), &h,
                          &db));
  Workload w(seed);
  WriteOptions wo;
  const int kAligned = 12;
  auto aligned = [&](int n, char fill) {
    for (int i = 0; i < n; i++) {
      WriteBatch b;
      alignedBatch(b, i, fill);
      check("write aligned", db->Write(wo, &b));
    }
  };
  auto phase = [&](int batches) {
    for (int i = 0; i < batches; i++) {
      WriteBatch b;
      std::string raw;
      batchOps(w, b, h, &raw);
      check("write", db->Write(wo, &b));
      if (!raw.empty()) {
        std::string rep(12, '\0');
        rep[8] = 1;  // count 1; the sequence number is RocksDB's to set
        rep += raw;
        WriteBatch rb(rep);
        check("write blob index", db->Write(wo, &rb));
      }
      if (w.n(10) == 0) {
        check("single put", db->Put(wo, h[w.n(h.size())], w.key(), w.value()));
      }
    }
  };
  auto flushAll = [&]() {
    FlushOptions fo;
    fo.wait = true;
    check("flush", db->Flush(fo, h));
  };
  if (recycle) aligned(kAligned, 'x');
  phase(120);
  flushAll();
  if (recycle) {
    phase(3);
    flushAll();
    // The first phase's log becomes obsolete after the flushes: wait for
    // its purge to put it on the recycle list before the next switch.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  SequenceNumber flushseq = db->GetLatestSequenceNumber();
  switch (mode) {
    case kRecycleStale:
      aligned(kAligned / 2 + 1, 'y');
      break;
    case kRecycleEmpty:
      break;
    default:
      // At least one record cut into fragments over three blocks.
      check("big put", db->Put(wo, h.back(), "big", std::string(70000, 'z')));
      phase(20);
  }
  std::unique_ptr<LogFile> cur;
  check("current wal", db->GetCurrentWalFile(&cur));
  printf("wal %llu\nflushseq %llu\nlastseq %llu\n", (unsigned long long)cur->LogNumber(),
         (unsigned long long)flushseq, (unsigned long long)db->GetLatestSequenceNumber());
  fflush(stdout);
  if (recycle) {
    // A clean close trims the log to what this life wrote: end as a crash
    // does, the log synced, so the first life's records stay after it.
    check("sync wal", db->SyncWAL());
    _exit(0);
  }
  for (auto* c : h) check("destroy handle", db->DestroyColumnFamilyHandle(c));
  check("close", db->Close());
  delete db;
  return 0;
}

static int dump(const std::string& dir, long long fromseq, const std::string& mode) {
  Options o;
  if (mode == "skip") o.wal_recovery_mode = WALRecoveryMode::kSkipAnyCorruptedRecords;
  if (mode == "tolerate") o.wal_recovery_mode = WALRecoveryMode::kTolerateCorruptedTailRecords;
  if (mode == "absolute") o.wal_recovery_mode = WALRecoveryMode::kAbsoluteConsistency;
  if (mode != "nomerge") o.merge_operator.reset(new Append);
  std::vector<std::string> names;
  Status s = DB::ListColumnFamilies(DBOptions(o), dir, &names);
  if (!s.ok()) {
    printf("open error %s\n", s.ToString().c_str());
    return 0;
  }
  std::vector<ColumnFamilyDescriptor> cfs;
  for (auto& n : names) cfs.emplace_back(n, ColumnFamilyOptions(o));
  std::vector<ColumnFamilyHandle*> h;
  DB* db;
  s = DB::OpenForReadOnly(DBOptions(o), dir, cfs, &h, &db);
  if (!s.ok()) {
    printf("open error %s\n", s.ToString().c_str());
    return 0;
  }
  printf("open ok\nlastseq %llu\n", (unsigned long long)db->GetLatestSequenceNumber());
  for (auto* c : h) {
    printf("cf %u %s\n", c->GetID(), c->GetName().c_str());
    std::vector<KeyVersion> kv;
    check("GetAllKeyVersions", GetAllKeyVersions(db, c, Slice(), Slice(), 1 << 30, &kv));
    for (auto& v : kv) {
      printf("v %s %llu %d %s\n", hex(v.user_key).c_str(), (unsigned long long)v.sequence, v.type,
             hex(v.value).c_str());
    }
  }
  if (fromseq >= 0) {
    std::unique_ptr<TransactionLogIterator> it;
    s = db->GetUpdatesSince((SequenceNumber)fromseq, &it);
    if (!s.ok()) {
      printf("updates error %s\n", s.ToString().c_str());
    } else {
      for (; it->Valid(); it->Next()) {
        BatchResult br = it->GetBatch();
        printf("batch %llu %s\n", (unsigned long long)br.sequence,
               hex(br.writeBatchPtr->Data()).c_str());
      }
      if (!it->status().ok()) printf("updates error %s\n", it->status().ToString().c_str());
    }
  }
  for (auto* c : h) db->DestroyColumnFamilyHandle(c);
  delete db;
  return 0;
}

// Printer prints what WriteBatch::Iterate reports.
class Printer : public WriteBatch::Handler {
 public:
  Status PutCF(uint32_t cf, const Slice& k, const Slice& v) override {
    printf("put %u %s %s\n", cf, hex(k).c_str(), hex(v).c_str());
    return Status::OK();
  }
  Status PutEntityCF(uint32_t cf, const Slice& k, const Slice& v) override {
    printf("entity %u %s %s\n", cf, hex(k).c_str(), hex(v).c_str());
    return Status::OK();
  }
  Status DeleteCF(uint32_t cf, const Slice& k) override {
    printf("delete %u %s\n", cf, hex(k).c_str());
    return Status::OK();
  }
  Status SingleDeleteCF(uint32_t cf, const Slice& k) override {
    printf("singledelete %u %s\n", cf, hex(k).c_str());
    return Status::OK();
  }
  Status DeleteRangeCF(uint32_t cf, const Slice& a, const Slice& z) override {
    printf("deleterange %u %s %s\n", cf, hex(a).c_str(), hex(z).c_str());
    return Status::OK();
  }
  Status MergeCF(uint32_t cf, const Slice& k, const Slice& v) override {
    printf("merge %u %s %s\n", cf, hex(k).c_str(), hex(v).c_str());
    return Status::OK();
  }
  Status PutBlobIndexCF(uint32_t cf, const Slice& k, const Slice& v) override {
    printf("blobindex %u %s %s\n", cf, hex(k).c_str(), hex(v).c_str());
    return Status::OK();
  }
  void LogData(const Slice& blob) override { printf("logdata %s\n", hex(blob).c_str()); }
  Status MarkBeginPrepare(bool unprepare) override {
    printf("beginprepare %d\n", unprepare ? 1 : 0);
    return Status::OK();
  }
  Status MarkEndPrepare(const Slice& xid) override {
    printf("endprepare %s\n", hex(xid).c_str());
    return Status::OK();
  }
  Status MarkNoop(bool) override {
    printf("noop\n");
    return Status::OK();
  }
  Status MarkRollback(const Slice& xid) override {
    printf("rollback %s\n", hex(xid).c_str());
    return Status::OK();
  }
  Status MarkCommit(const Slice& xid) override {
    printf("commit %s\n", hex(xid).c_str());
    return Status::OK();
  }
  Status MarkCommitWithTimestamp(const Slice& xid, const Slice& ts) override {
    printf("committs %s %s\n", hex(xid).c_str(), hex(ts).c_str());
    return Status::OK();
  }
};

static int batch() {
  std::string line;
  while (std::getline(std::cin, line)) {
    WriteBatch b(unhex(line));
    Printer p;
    Status s = b.Iterate(&p);
    if (s.ok()) {
      printf("ok %u\n", b.Count());
    } else {
      printf("error %s\n", s.ToString().c_str());
    }
    printf("end\n");
    fflush(stdout);
  }
  return 0;
}

static int twopc(const std::string& dir) {
  Options o;
  o.create_if_missing = true;
  o.avoid_flush_during_shutdown = true;
  TransactionDBOptions to;
  TransactionDB* db;
  check("open", TransactionDB::Open(o, to, dir, &db));
  WriteOptions wo;
  check("put", db->Put(wo, "plain", "1"));
  auto txn = [&](const char* name, const char* key, int end) {
    Transaction* t = db->BeginTransaction(wo);
    check("name", t->SetName(name));
    check("txn put", t->Put(key, "v"));
    check("txn delete", t->Delete("plain"));
    check("prepare", t->Prepare());
    if (end == 1) check("commit", t->Commit());
    if (end == 2) check("rollback", t->Rollback());
    // A transaction left prepared stays so at close.
    if (end != 0) delete t;
  };
  txn("committed", "c", 1);
  txn("rolledback", "r", 2);
  txn("prepared", "p", 0);
  check("put", db->Put(wo, "after", "2"));
  check("close", db->Close());
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 5 && std::string(argv[1]) == "gen") {
    std::string m = argv[4];
    GenMode mode = m == "recycle-garbage" ? kRecycleGarbage
                   : m == "recycle-stale" ? kRecycleStale
                   : m == "recycle-empty" ? kRecycleEmpty
                                          : kPlain;
    return gen(argv[2], std::stoull(argv[3]), mode);
  }
  if (argc >= 3 && std::string(argv[1]) == "dump") {
    return dump(argv[2], argc >= 4 ? std::stoll(argv[3]) : -1, argc >= 5 ? argv[4] : "");
  }
  if (argc >= 2 && std::string(argv[1]) == "batch") {
    return batch();
  }
  if (argc >= 3 && std::string(argv[1]) == "twopc") {
    return twopc(argv[2]);
  }
  fprintf(stderr, "usage: waloracle gen DIR SEED plain|recycle-garbage|recycle-stale|recycle-empty | dump DIR [FROMSEQ] | batch | twopc DIR\n");
  return 2;
}
