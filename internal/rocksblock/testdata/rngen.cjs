// rngen: RocksDB 10.5.1 (npm's rocksdb-native 3.18.1, found through
// NODE_PATH) writes one table per format_version 2 to 7 for package
// rocksblock's tests: a database per version, 100 entries put, flushed,
// closed; its one .sst file copied to OUTDIR/fvN-native.sst. Prints, per
// table, the manifest line rbgen.cc prints ("table NAME FV CHECKSUM
// COMPRESSION DICT NKEYS BLOCKSIZE"), the checksum and compression read
// from the OPTIONS file RocksDB wrote. Entry i is the one rbgen.cc writes:
// key "key%06d", value "v%06d:" then "rocksblock-" repeated 1 + i%5 times.
'use strict'
const fs = require('fs')
const path = require('path')
const RocksDB = require('rocksdb-native')

const checksums = { kNoChecksum: 'none', kCRC32c: 'crc32c', kxxHash: 'xxhash', kxxHash64: 'xxhash64', kXXH3: 'xxh3' }
const compressions = {
  kNoCompression: 0, kSnappyCompression: 1, kZlibCompression: 2, kBZip2Compression: 3,
  kLZ4Compression: 4, kLZ4HCCompression: 5, kXpressCompression: 6, kZSTD: 7
}
const pad = (i) => String(i).padStart(6, '0')
const NKEYS = 100
const BLOCK = 256

async function write (out, fv) {
  const dir = path.join(out, 'db' + fv)
  const db = new RocksDB(dir, { tableFormatVersion: fv, tableBlockSize: BLOCK })
  await db.ready()
  const w = db.write()
  for (let i = 0; i < NKEYS; i++) w.put('key' + pad(i), 'v' + pad(i) + ':' + 'rocksblock-'.repeat(1 + i % 5))
  await w.flush()
  // An undestroyed batch holds a reference that keeps db.close() waiting.
  w.destroy()
  await db.flush()
  // The table is complete after the flush; close can still wait on a
  // reference the binding holds, so do not wait for it long.
  await Promise.race([db.close(), new Promise((resolve) => setTimeout(resolve, 2000).unref())])
  const ssts = fs.readdirSync(dir).filter((f) => f.endsWith('.sst'))
  if (ssts.length !== 1) throw new Error(dir + ': ' + ssts.length + ' tables, want 1')
  const name = 'fv' + fv + '-native.sst'
  fs.copyFileSync(path.join(dir, ssts[0]), path.join(out, name))
  const opts = fs.readFileSync(path.join(dir, fs.readdirSync(dir).filter((f) => f.startsWith('OPTIONS-')).sort().pop()), 'utf8')
  // The default column family's table options come first.
  const ck = /^\s*checksum=(\w+)/m.exec(opts)[1]
  const comp = /^\s*compression=(\w+)/m.exec(opts)[1]
  if (!(ck in checksums) || !(comp in compressions)) throw new Error('unknown checksum ' + ck + ' or compression ' + comp)
  console.log(['table', name, fv, checksums[ck], compressions[comp], '-', NKEYS, BLOCK].join(' '))
}

async function main () {
  const out = process.argv[2]
  for (let fv = 2; fv <= 7; fv++) await write(out, fv)
}

main().catch((e) => { console.error(e); process.exit(1) })
