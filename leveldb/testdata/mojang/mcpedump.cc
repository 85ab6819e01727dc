// mcpedump: Mojang's LevelDB (leveldb-mcpe) as a reference reader.
//   dump DIR            live view: hexkey\thexvalue
//   dumptable FILE      internal entries: hexuser\tseq\tkind\thexvalue
//   gen DIR zlib|raw N  writes N keys with the given compressor
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/filter_policy.h>
#include <leveldb/options.h>
#include <leveldb/table.h>
#include <leveldb/iterator.h>
#include <leveldb/write_batch.h>
#include <leveldb/zlib_compressor.h>
#include <leveldb/decompress_allocator.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>

static void hex(std::string* o, const leveldb::Slice& s) {
  static const char d[] = "0123456789abcdef";
  for (size_t i = 0; i < s.size(); i++) { unsigned char c = s[i]; o->push_back(d[c >> 4]); o->push_back(d[c & 15]); }
}
static void die(const char* w, const leveldb::Status& s) { fprintf(stderr, "%s: %s\n", w, s.ToString().c_str()); exit(1); }

int main(int argc, char** argv) {
  leveldb::Options o;
  o.compressors[0] = new leveldb::ZlibCompressorRaw(-1);
  o.compressors[1] = new leveldb::ZlibCompressor();
  std::string mode = argc > 1 ? argv[1] : "";
  std::string out;
  if (mode == "dump" && argc == 3) {
    leveldb::DB* db;
    leveldb::Status s = leveldb::DB::Open(o, argv[2], &db);
    if (!s.ok()) die("open", s);
    leveldb::ReadOptions ro; ro.verify_checksums = true;
    leveldb::Iterator* it = db->NewIterator(ro);
    for (it->SeekToFirst(); it->Valid(); it->Next()) { hex(&out, it->key()); out += "\t"; hex(&out, it->value()); out += "\n"; }
    if (!it->status().ok()) die("iterate", it->status());
    delete it; delete db;
  } else if (mode == "dumptable" && argc == 3) {
    leveldb::RandomAccessFile* f; uint64_t size;
    leveldb::Status s = leveldb::Env::Default()->NewRandomAccessFile(argv[2], &f);
    if (!s.ok()) die("open", s);
    leveldb::Env::Default()->GetFileSize(argv[2], &size);
    leveldb::Table* t;
    s = leveldb::Table::Open(o, f, size, &t);
    if (!s.ok()) die("table", s);
    leveldb::ReadOptions ro; ro.verify_checksums = true;
    leveldb::Iterator* it = t->NewIterator(ro);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      leveldb::Slice k = it->key();
      uint64_t tr = 0;
      for (int j = 7; j >= 0; j--) tr = (tr << 8) | (unsigned char)k[k.size() - 8 + j];
      hex(&out, leveldb::Slice(k.data(), k.size() - 8));
      out += "\t" + std::to_string(tr >> 8) + "\t" + std::to_string(tr & 0xff) + "\t";
      hex(&out, it->value()); out += "\n";
    }
    if (!it->status().ok()) die("iterate", it->status());
    delete it; delete t; delete f;
  } else if (mode == "gen" && argc == 5) {
    bool wrapped = strcmp(argv[3], "zlib") == 0;
    if (wrapped) { o.compressors[0] = new leveldb::ZlibCompressor(); o.compressors[1] = new leveldb::ZlibCompressorRaw(-1); }
    o.create_if_missing = true; o.error_if_exists = true;
    o.filter_policy = leveldb::NewBloomFilterPolicy(10);
    o.block_size = 1024;
    o.write_buffer_size = 64 << 10;
    leveldb::DB* db;
    leveldb::Status s = leveldb::DB::Open(o, argv[2], &db);
    if (!s.ok()) die("open", s);
    int n = atoi(argv[4]);
    uint64_t r = 88172645463325252ULL;
    auto rnd = [&]() { r ^= r << 13; r ^= r >> 7; r ^= r << 17; return r; };
    leveldb::WriteOptions wo;
    for (int i = 0; i < n; i++) {
      // Bedrock-like keys: chunk x, z (int32 LE), a tag byte, a sub-chunk index.
      std::string k;
      int32_t x = (int32_t)(rnd() % 9) - 4, z = (int32_t)(rnd() % 9) - 4;
      k.append((const char*)&x, 4); k.append((const char*)&z, 4);
      k.push_back((char)(rnd() % 2 ? 0x2f : 0x2c));
      if (k.back() == 0x2f) k.push_back((char)(rnd() % 16));
      if (rnd() % 10 == 0) k = std::string("~local_player") + std::to_string(rnd() % 3);
      if (rnd() % 7 == 0) { s = db->Delete(wo, k); } else {
        std::string v(rnd() % 100, 'a');
        for (size_t j = 0; j < v.size(); j += 1 + rnd() % 8) v[j] = (char)rnd();
        s = db->Put(wo, k, v);
      }
      if (!s.ok()) die("write", s);
      if (i == n / 2) db->CompactRange(nullptr, nullptr);
    }
    delete db;
  } else {
    fprintf(stderr, "usage\n"); return 2;
  }
  fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}
