'use strict'
// Writes RocksDB databases through RocksDB 10.5.1 (npm rocksdb-native
// 3.18.1, a prebuilt binary) and prints what RocksDB itself reads from
// them, for rocksdb/native_test.go to compare with package rocksdb's
// reading of the same .sst files.
//
//   node write.cjs OUTDIR [-small] [CASE...]
//
// For each case (all by default; names as in cases below) it writes
// OUTDIR/CASE/db, a database of three flushed memtables (three .sst files
// on L0, nothing left in the memtable or WAL; the -compacted cases then
// compact them into the last level), and beside it:
//   case.json  the options written and the binding's version
//   view.txt   RocksDB's iterator over the whole database: HEXKEY<TAB>HEXVALUE
//   gets.txt   RocksDB's Get of present, deleted and absent keys:
//              HEXKEY<TAB>HEXVALUE, or HEXKEY<TAB>- when not found
//   files.txt  the live tables in RocksDB's order (L0 newest first, then
//              L1, L2...): LEVEL NUMBER SIZE SMALLESTSEQ LARGESTSEQ NAME
//   sst/       copies of those tables, taken while RocksDB still listed them
// -small writes a tenth of the keys, with shorter values (the golden
// tables, under 20 KB each). Below 1024 Ribbon slots RocksDB builds a
// Bloom filter instead when that is smaller, under the same policy name:
// at -small only the first flush's table (310 keys) keeps a Ribbon filter.
//
// The module is found through NODE_PATH or node_modules beside this file.

const fs = require('fs')
const path = require('path')
const RocksDB = require('rocksdb-native')
const { BloomFilterPolicy, RibbonFilterPolicy } = RocksDB

// The binding exposes only these table options: format_version, the
// filter policy (Bloom bits per key; Ribbon's Bloom-equivalent bits and
// bloom_before_level), block_size and optimize_filters_for_memory.
// Checksums are RocksDB's default (XXH3), the index binary search, and the
// prebuilt library has no compression compiled in. Ribbon needs
// bloom_before_level -1: at RocksDB's default 0 a flush writes Bloom.
const cases = []
for (let fv = 2; fv <= 7; fv++) {
  cases.push({ name: `fv${fv}-bloom10`, formatVersion: fv, filter: 'bloom', bits: 10 })
  cases.push({ name: `fv${fv}-ribbon10`, formatVersion: fv, filter: 'ribbon', bits: 10 })
}
cases.push({ name: 'fv7-bloom10-bs256', formatVersion: 7, filter: 'bloom', bits: 10, blockSize: 256 })
cases.push({ name: 'fv6-ribbon10-bs1024', formatVersion: 6, filter: 'ribbon', bits: 10, blockSize: 1024 })
cases.push({ name: 'fv5-bloom10-bs65536', formatVersion: 5, filter: 'bloom', bits: 10, blockSize: 65536 })
cases.push({ name: 'fv6-bloom7-optmem', formatVersion: 6, filter: 'bloom', bits: 7, optimizeFiltersForMemory: true })
cases.push({ name: 'fv7-ribbon20-optmem', formatVersion: 7, filter: 'ribbon', bits: 20, optimizeFiltersForMemory: true })
cases.push({ name: 'fv7-ribbon10-bloombefore0', formatVersion: 7, filter: 'ribbon', bits: 10, bloomBeforeLevel: 0 })
cases.push({ name: 'fv6-bloom10-compacted', formatVersion: 6, filter: 'bloom', bits: 10, compacted: true })
cases.push({ name: 'fv7-ribbon10-compacted', formatVersion: 7, filter: 'ribbon', bits: 10, compacted: true })
cases.push({ name: 'fv7-nofilter', formatVersion: 7, filter: 'none' })
cases.push({ name: 'fv3-bloom1', formatVersion: 3, filter: 'bloom', bits: 1 })

const hex = (b) => Buffer.from(b).toString('hex')
const B = (...bytes) => Buffer.from(bytes)

// key(i) is 11 bytes: "key" and i in 8 decimal digits.
const key = (i) => Buffer.from('key' + String(i).padStart(8, '0'))

// value(i, gen) is deterministic: its length (0 to valueMod-1 bytes, zero
// for some keys) and bytes from i and the write generation.
let valueMod = 120
function value(i, gen) {
  const n = (i * 37 + gen * 11) % valueMod
  const v = Buffer.alloc(n)
  let x = (i * 2654435761 + gen * 40503 + 1) >>> 0
  for (let j = 0; j < n; j++) {
    x = (x ^ (x << 13)) >>> 0
    x = (x ^ (x >>> 17)) >>> 0
    x = (x ^ (x << 5)) >>> 0
    v[j] = x & 0xff
  }
  return v
}

function filled(n, seed) {
  const v = Buffer.alloc(n)
  for (let j = 0; j < n; j++) v[j] = (j * 131 + seed * 7 + (j >> 8)) & 0xff
  return v
}

// Keys at the edges of the byte order.
const special = {
  empty: Buffer.alloc(0),
  zero: B(0x00),
  zero2: B(0x00, 0x00),
  zeroff: B(0x00, 0xff),
  ff: B(0xff),
  ff2: B(0xff, 0xff),
  ff12: Buffer.alloc(12, 0xff),
  bin8: B(0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08),
  big: Buffer.from('big'),
  huge: Buffer.from('huge')
}

function policy(c) {
  if (c.filter === 'bloom') return new BloomFilterPolicy(c.bits)
  if (c.filter === 'ribbon') return new RibbonFilterPolicy(c.bits, c.bloomBeforeLevel ?? -1)
  return null
}

async function write(db, ops) {
  const w = db.write({ capacity: Math.max(8, ops.length) })
  for (const [op, a, b] of ops) {
    if (op === 'put') w.tryPut(a, b)
    else if (op === 'del') w.tryDelete(a)
    else w.tryDeleteRange(a, b)
  }
  await w.flush()
  // An undestroyed batch holds a reference that keeps db.close() waiting.
  w.destroy()
}

async function runCase(c, outDir, n) {
  const dir = path.join(outDir, c.name)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  const dbDir = path.join(dir, 'db')
  const opts = {
    tableFormatVersion: c.formatVersion,
    filterPolicy: policy(c),
    optimizeFiltersForMemory: !!c.optimizeFiltersForMemory
  }
  if (c.blockSize) opts.tableBlockSize = c.blockSize
  const db = new RocksDB(dbDir, opts)
  await db.ready()
  // A snapshot at sequence number 0, held until the tables are copied:
  // without it RocksDB may rewrite the oldest L0 table in the background
  // with its sequence numbers zeroed (a "BottommostFiles" compaction),
  // deleting the table it lists.
  const guard = c.compacted ? null : db.snapshot()

  const third = Math.floor(n / 3)
  const half = Math.floor(n / 2)
  const extra = Math.floor(n / 6)
  const probes = [] // keys to Get beyond the ones written

  // Flush 1: every key, and the edge keys.
  let ops = []
  for (let i = 0; i < n; i++) ops.push(['put', key(i), value(i, 0)])
  ops.push(['put', special.empty, Buffer.from('the empty key')])
  ops.push(['put', special.zero, Buffer.alloc(0)])
  ops.push(['put', special.zero2, B(0)])
  ops.push(['put', special.zeroff, B(0xff, 0)])
  ops.push(['put', special.ff, Buffer.from('ff')])
  ops.push(['put', special.ff2, Buffer.alloc(0)])
  ops.push(['put', special.ff12, Buffer.from('twelve ff')])
  ops.push(['put', special.bin8, filled(300, 1)])
  ops.push(['put', special.big, filled(5000, 2)]) // over 4 KiB
  if (n >= 1000) ops.push(['put', special.huge, filled(20000, 3)]) // over the block size
  await write(db, ops)
  await db.flush()

  // Flush 2: overwrites, deletes, new keys.
  ops = []
  for (let i = 0; i < n; i += 7) ops.push(['put', key(i), value(i, 1)])
  for (let i = 0; i < n; i += 11) ops.push(['del', key(i)])
  for (let i = n; i < n + extra; i++) ops.push(['put', key(i), value(i, 1)])
  ops.push(['del', special.zero])
  ops.push(['del', special.ff])
  ops.push(['put', special.big, filled(6000, 4)])
  ops.push(['del', key(n + 100000)]) // a deletion of a key never written
  await write(db, ops)
  await db.flush()

  // Flush 3: range deletions over older tables' keys, keys written again,
  // and, under a snapshot, versions the flush must keep side by side.
  const rdStart = third
  const rdEnd = third + Math.max(5, Math.floor(n / 15))
  ops = [['range', key(rdStart), key(rdEnd)]]
  ops.push(['put', key(rdStart + 3), value(rdStart + 3, 2)]) // newer than the range deletion
  for (let i = 1; i < n; i += 13) ops.push(['del', key(i)])
  for (let i = 0; i < n; i += 22) ops.push(['put', key(i), value(i, 2)]) // deleted in flush 2
  ops.push(['put', special.ff, Buffer.from('ff again')])
  ops.push(['range', special.empty, special.zero2]) // from the empty key: '' and 00
  await write(db, ops)
  const snap = db.snapshot()
  ops = []
  for (let i = 3; i < n; i += 17) ops.push(['put', key(i), value(i, 3)])
  for (let i = 4; i < n; i += 19) ops.push(['del', key(i)])
  ops.push(['put', special.empty, Buffer.from('the empty key, again')])
  ops.push(['put', key(half + 1), Buffer.from('hidden by a range deletion of its own table')])
  await write(db, ops)
  await write(db, [['range', key(half), key(half + 10)]])
  await db.flush()
  await snap.close()
  if (c.compacted) {
    // One bottommost table: older versions and tombstones dropped,
    // sequence numbers zeroed.
    await db.compactRange({ bottommostLevelCompaction: RocksDB.constants.bottommostLevelCompaction.FORCE })
  }

  // Everything is in the tables: nothing in the memtables (or the WAL).
  for (const p of ['rocksdb.num-entries-active-mem-table', 'rocksdb.num-entries-imm-mem-tables', 'rocksdb.num-deletes-active-mem-table']) {
    const v = await db.getProperty(p)
    if (String(v) !== '0') throw new Error(`${c.name}: ${p} is ${v} after the flush`)
  }

  // The view through RocksDB's own iterator.
  const view = []
  for await (const { key: k, value: v } of db.iterator({}, { capacity: 1024 })) {
    view.push(hex(k) + '\t' + hex(v))
  }
  fs.writeFileSync(path.join(dir, 'view.txt'), view.join('\n') + '\n')

  // Gets: every key ever written (present, overwritten, deleted, range
  // deleted), the edge keys, and keys never written.
  const keys = []
  for (let i = 0; i < n + extra; i++) keys.push(key(i))
  keys.push(...Object.values(special))
  probes.push(key(n + 100000), key(n + extra), Buffer.from('key'), Buffer.from('key0000000'),
    Buffer.concat([key(5), B(0)]), Buffer.from('a'), B(0x00, 0x01), B(0x00, 0x00, 0x00),
    Buffer.alloc(13, 0xff), B(0xfe), Buffer.from('bif'), Buffer.from('bih'))
  keys.push(...probes)
  const r = db.read({ capacity: keys.length })
  const got = keys.map((k) => r.get(k))
  await r.flush()
  r.destroy()
  const lines = []
  for (let i = 0; i < keys.length; i++) {
    const v = await got[i]
    lines.push(hex(keys[i]) + '\t' + (v === null ? '-' : hex(v)))
  }
  fs.writeFileSync(path.join(dir, 'gets.txt'), lines.join('\n') + '\n')

  // The live tables by level, from RocksDB's own account.
  const files = []
  let level = -1
  for (const line of String(await db.getProperty('rocksdb.sstables')).split('\n')) {
    let m = /^--- level (\d+) /.exec(line)
    if (m) {
      level = Number(m[1])
      continue
    }
    m = /^\s*(\d+):(\d+)\[(\d+) \.\. (\d+)\]/.exec(line)
    if (m) files.push({ line: `${level} ${m[1]} ${m[2]} ${m[3]} ${m[4]} ${m[1].padStart(6, '0')}.sst`, name: `${m[1].padStart(6, '0')}.sst`, size: Number(m[2]) })
  }
  if (files.length === 0) throw new Error(`${c.name}: no tables listed by rocksdb.sstables`)
  fs.writeFileSync(path.join(dir, 'files.txt'), files.map((f) => f.line).join('\n') + '\n')
  // The tables as listed, copied before anything may compact them.
  fs.mkdirSync(path.join(dir, 'sst'))
  for (const f of files) {
    fs.copyFileSync(path.join(dbDir, f.name), path.join(dir, 'sst', f.name))
    const size = fs.statSync(path.join(dir, 'sst', f.name)).size
    if (size !== f.size) throw new Error(`${c.name}: ${f.name} is ${size} bytes, RocksDB lists ${f.size}`)
  }
  if (guard !== null) await guard.close()

  const info = {
    rocksdb: '10.5.1',
    binding: 'rocksdb-native@' + require('rocksdb-native/package').version,
    formatVersion: c.formatVersion,
    filter: c.filter,
    bitsPerKey: c.bits ?? 0,
    bloomBeforeLevel: c.filter === 'ribbon' ? (c.bloomBeforeLevel ?? -1) : undefined,
    blockSize: c.blockSize ?? 8192,
    optimizeFiltersForMemory: !!c.optimizeFiltersForMemory,
    checksum: 'xxh3',
    compression: 'none',
    compacted: !!c.compacted,
    keys: n
  }
  fs.writeFileSync(path.join(dir, 'case.json'), JSON.stringify(info, null, 2) + '\n')

  // db.close() can wait forever on a reference the binding still holds;
  // the tables are complete after the flush, so do not wait long.
  await Promise.race([db.close(), new Promise((resolve) => setTimeout(resolve, 2000).unref())])
  return view.length
}

async function main() {
  const args = process.argv.slice(2)
  const small = args.includes('-small')
  const rest = args.filter((a) => a !== '-small')
  if (rest.length < 1) {
    console.error('usage: node write.cjs OUTDIR [-small] [CASE...]')
    process.exit(2)
  }
  const outDir = rest[0]
  const want = rest.slice(1)
  for (const w of want) {
    if (!cases.some((c) => c.name === w)) throw new Error('unknown case ' + w)
  }
  const n = small ? 300 : 3000
  if (small) valueMod = 24
  for (const c of cases) {
    if (want.length > 0 && !want.includes(c.name)) continue
    const start = Date.now()
    const entries = await runCase(c, outDir, n)
    console.log(`${c.name}: ${entries} keys in RocksDB's view, ${Date.now() - start} ms`)
  }
  process.exit(0)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
