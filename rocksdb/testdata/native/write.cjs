'use strict'
// Writes RocksDB databases through RocksDB 10.5.1 (npm rocksdb-native
// 3.18.1, a prebuilt binary) and prints what RocksDB itself reads from
// them, for rocksdb/native_test.go to compare with package rocksdb's
// reading of the same .sst files and of the whole database directory.
//
//   node write.cjs OUTDIR [-small] [CASE...]
//   node write.cjs -read WANT DIR OUT [DIR OUT...]
//
// For each case (all by default; names as in cases below) it writes
// OUTDIR/CASE/db, a database of three flushed memtables (three .sst files
// on L0; the -compacted cases then compact them into the last level), and
// beside it:
//   case.json  the options written, the binding's version and, under
//              logEntries, how many entries each column family's memtables
//              hold once RocksDB has replayed the logs (see db-want.txt)
//   view.txt   RocksDB's iterator over the default column family's tables
//              alone, before any log tail: HEXKEY<TAB>HEXVALUE
//   gets.txt   RocksDB's Get of present, deleted and absent keys at the
//              same point: HEXKEY<TAB>HEXVALUE, or HEXKEY<TAB>- when not
//              found
//   files.txt  the default column family's live tables in RocksDB's order
//              (L0 newest first, then L1, L2...): LEVEL NUMBER SIZE
//              SMALLESTSEQ LARGESTSEQ NAME
//   sst/       copies of those tables, taken while RocksDB still listed them
//   db-want.txt  the whole database as RocksDB reads it back: the database
//              is closed (avoid_flush_during_shutdown, so that nothing left
//              in the memtables is flushed), copied, and the copy opened
//              read-only (DB::OpenForReadOnly, which replays the logs into
//              memtables and writes no table). Per column family, in the
//              order they were created: "@cf NAME", "@view", its iterator's
//              lines, "!ok", "@gets", a Get per probed key (as gets.txt).
//              It must equal what the writer's own iterator and Gets showed
//              before closing, or this script fails.
// The -tail cases then write a log tail after the last flush: puts,
// overwrites, deletes, range deletions, the empty key, values of 5 KB to
// 70 KB (records over several of the log's 32 KiB blocks, records ending
// 0, 3 and 7 bytes before a block's end) that stay only in the
// write-ahead log. The -cfs case adds column families: one with its own
// table options, one written only in the log, one never written; half way
// through its tail it flushes one family alone, so that the log before
// that flush holds records that family's tables already have.
// -read prints RocksDB's reading of damaged copies of a database (see
// readCopies below).
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
// Log tails. The -defaults cases give the binding no table options but
// format_version 7 where named: its defaults are a Bloom filter of 10 bits
// per key and format_version 6.
cases.push({ name: 'fv6-defaults-tail', formatVersion: 6, filter: 'bloom', bits: 10, defaults: true, tail: true })
cases.push({ name: 'fv7-defaults-tail', formatVersion: 7, filter: 'bloom', bits: 10, defaults: true, tail: true })
cases.push({ name: 'fv7-ribbon10-compacted-tail', formatVersion: 7, filter: 'ribbon', bits: 10, compacted: true, tail: true })
cases.push({ name: 'fv6-cfs-tail', formatVersion: 6, filter: 'bloom', bits: 10, defaults: true, tail: true, cfs: true })

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

// The column families beside default, in the order they are created (so
// in RocksDB's ID order): the -cfs case's, or none.
function families(c) {
  if (!c.cfs) return []
  return [
    // Table options of its own: format_version 7, a Ribbon filter.
    new RocksDB.ColumnFamily('cf-fv7-ribbon', { tableFormatVersion: 7, filterPolicy: new RibbonFilterPolicy(10, -1) }),
    'cf-log-only', // written only after the last flush: in the log alone
    'cf-empty' // never written
  ]
}

const cfName = (f) => (typeof f === 'string' ? f : f.name)

// session returns the session of column family name ('default': db).
const session = (db, name) => (name === 'default' ? db : db.columnFamily(name))

// getLines returns a Get of each key through s: HEXKEY<TAB>HEXVALUE, or
// HEXKEY<TAB>- when not found.
async function getLines(s, keys) {
  if (keys.length === 0) return []
  const r = s.read({ capacity: keys.length })
  const got = keys.map((k) => r.get(k))
  await r.flush()
  r.destroy()
  const lines = []
  for (let i = 0; i < keys.length; i++) {
    const v = await got[i]
    lines.push(hex(keys[i]) + '\t' + (v === null ? '-' : hex(v)))
  }
  return lines
}

async function viewLines(s) {
  const view = []
  for await (const { key: k, value: v } of s.iterator({}, { capacity: 1024 })) {
    view.push(hex(k) + '\t' + hex(v))
  }
  return view
}

// dump prints every column family of db (names in creation order) as
// db-want.txt holds it.
async function dump(db, names, keys) {
  const out = []
  for (const name of names) {
    const s = session(db, name)
    out.push('@cf ' + name, '@view', ...(await viewLines(s)), '!ok', '@gets', ...(await getLines(s, keys)))
    if (s !== db) await s.close()
  }
  return out.join('\n') + '\n'
}

// memEntries returns how many entries column family name's memtables hold.
async function memEntries(db, name) {
  const s = session(db, name)
  let n = 0
  for (const p of ['rocksdb.num-entries-active-mem-table', 'rocksdb.num-entries-imm-mem-tables']) {
    n += Number(await s.getProperty(p))
  }
  if (s !== db) await s.close()
  return n
}

// closeDB closes db and fails if that takes long: a database still open
// when the directory is copied could be copied half written.
async function closeDB(db, what) {
  let timer
  const timeout = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: db.close() did not return within 10 s`)), 10000)
  })
  await Promise.race([db.close(), timeout])
  clearTimeout(timer)
}

// tailKey(i) is the i-th key written first in a log tail.
let tailBase = 0
const tailKey = (i) => key(tailBase + i)
const tailKeys = (n) => Math.max(10, Math.floor(n / 10))

// logEnd returns where the log writer (RocksDB's db/log_writer.cc, not
// recyclable) leaves a log of off bytes after a record of n payload bytes:
// fragments of 32 KiB blocks, each with a 7-byte header, and a block's
// last 1 to 6 bytes, too few for a header, zeroed.
function logEnd(off, n) {
  let left = n
  do {
    const rest = 32768 - (off % 32768)
    if (rest < 7) off += rest
    const frag = Math.min(left, 32768 - (off % 32768) - 7)
    off += 7 + frag
    left -= frag
  } while (left > 0)
  return off
}

// writeToBlockEnd puts k (an 11-byte key) in default with a value of at
// least min bytes, sized so that its log record ends with exactly leftover
// bytes left in a block, and checks that it did.
async function writeToBlockEnd(s, k, min, leftover, seed) {
  const start = (await s.currentWalFile()).size
  // A one-put batch: 12 bytes of header, the kind, the key's length,
  // the key, the value's length (varint), the value.
  const payload = (vlen) => 12 + 1 + 1 + k.length + (vlen < 128 ? 1 : vlen < 16384 ? 2 : 3) + vlen
  let vlen = min
  while ((32768 - (logEnd(start, payload(vlen)) % 32768)) % 32768 !== leftover) vlen++
  await write(s, [['put', k, filled(vlen, seed)]])
  const end = (await s.currentWalFile()).size
  if (end !== logEnd(start, payload(vlen))) {
    throw new Error(`a record of ${payload(vlen)} bytes at ${start} of the log ends at ${end}, not ${logEnd(start, payload(vlen))}`)
  }
}

// writeTail writes part 1 or 2 of a log tail through s, with values of
// generation gen; large adds the values of 5 KB and more.
async function writeTail(s, n, part, gen, large, small) {
  const t = tailKeys(n)
  const twoThirds = Math.floor((2 * n) / 3)
  if (part === 1) {
    let ops = []
    for (let i = 0; i < t; i++) ops.push(['put', tailKey(i), value(i, gen)]) // new keys
    for (let i = 2; i < n; i += 5) ops.push(['put', key(i), value(i, gen)]) // overwrites
    for (let i = 4; i < n; i += 9) ops.push(['del', key(i)])
    ops.push(['put', special.empty, Buffer.from('the empty key, first in the log')])
    ops.push(['del', special.bin8])
    await write(s, ops)
    if (large) {
      // Records of 5 KB one per batch; one that leaves exactly a
      // header's 7 bytes of its 32 KiB log block, so that the next
      // record's first fragment there is empty; that next one, over one
      // to three blocks (its middle and last fragments), leaving 3 bytes
      // of its last block (zeros the reader skips); and, but at -small,
      // one that ends on a block boundary.
      for (let i = 0; i < (small ? 2 : 16); i++) {
        await write(s, [['put', tailKey(t + i), filled(5000 + i * 97, 10 + i)]])
      }
      await writeToBlockEnd(s, key(8), 100, 7, 6)
      await writeToBlockEnd(s, key(7), small ? 1000 : 70000, 3, 5)
      if (!small) await writeToBlockEnd(s, key(9), 100, 0, 7)
    }
    ops = [['range', key(twoThirds), key(twoThirds + Math.max(5, Math.floor(n / 20)))]]
    ops.push(['put', key(twoThirds + 2), value(twoThirds + 2, gen)]) // after the range deletion
    ops.push(['range', tailKey(2), tailKey(5)]) // over keys only the log holds
    ops.push(['del', special.empty])
    await write(s, ops)
    return
  }
  const rdStart = Math.floor(n / 3) // flush 3's range deletion
  const ops = [['range', special.empty, B(0x00)]] // the empty key alone
  ops.push(['put', special.empty, Buffer.from('the empty key, from the log')])
  ops.push(['put', key(rdStart + 1), value(rdStart + 1, gen)]) // under a table's range deletion
  ops.push(['del', tailKey(0)])
  ops.push(['put', tailKey(3), Buffer.from('after the log range deletion')])
  ops.push(['del', special.ff2])
  ops.push(['put', special.zero, Buffer.from('zero from the log')]) // deleted in flush 2
  if (large) ops.push(['put', special.big, filled(9000, 6)])
  for (let i = 1; i < n; i += 31) ops.push(['put', key(i), Buffer.alloc(0)]) // empty values
  await write(s, ops)
}

async function runCase(c, outDir, n, small) {
  const dir = path.join(outDir, c.name)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  const dbDir = path.join(dir, 'db')
  // avoid_flush_during_shutdown: RocksDB flushes at close only what no log
  // holds (writes with the WAL disabled), but the log tail must stay in
  // the log whatever a version decides.
  const opts = { avoidFlushDuringShutdown: true }
  if (!c.defaults) {
    opts.filterPolicy = policy(c)
    opts.optimizeFiltersForMemory = !!c.optimizeFiltersForMemory
  }
  if (!c.defaults || c.formatVersion !== 6) opts.tableFormatVersion = c.formatVersion
  if (c.blockSize) opts.tableBlockSize = c.blockSize
  const fams = families(c)
  opts.columnFamilies = fams
  const names = ['default', ...fams.map(cfName)]
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
  tailBase = n + extra + 1000

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

  // The -cfs case's family with tables of its own: two flushes.
  if (c.cfs) {
    const s = db.columnFamily('cf-fv7-ribbon')
    ops = []
    for (let i = 0; i < half; i++) ops.push(['put', key(i), value(i, 7)])
    await write(s, ops)
    await s.flush()
    ops = [['range', key(Math.floor(n / 8)), key(Math.floor(n / 8) + 10)]]
    for (let i = 0; i < half; i += 3) ops.push(['del', key(i)])
    for (let i = 1; i < half; i += 4) ops.push(['put', key(i), value(i, 8)])
    await write(s, ops)
    await s.flush()
    await s.close()
  }

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
  const view = await viewLines(db)
  fs.writeFileSync(path.join(dir, 'view.txt'), view.join('\n') + '\n')

  // Gets: every key ever written (present, overwritten, deleted, range
  // deleted), the edge keys, and keys never written.
  const keys = []
  for (let i = 0; i < n + extra; i++) keys.push(key(i))
  for (let i = 0; i < tailKeys(n) + 20; i++) keys.push(tailKey(i))
  keys.push(...Object.values(special))
  keys.push(key(n + 100000), key(n + extra), Buffer.from('key'), Buffer.from('key0000000'),
    Buffer.concat([key(5), B(0)]), Buffer.from('a'), B(0x00, 0x01), B(0x00, 0x00, 0x00),
    Buffer.alloc(13, 0xff), B(0xfe), Buffer.from('bif'), Buffer.from('bih'))
  fs.writeFileSync(path.join(dir, 'gets.txt'), (await getLines(db, keys)).join('\n') + '\n')

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

  // The log tail, never flushed. In the -cfs case every family but
  // cf-empty has one, and cf-fv7-ribbon is flushed alone half way.
  if (c.tail) {
    const tails = names.filter((name) => name !== 'cf-empty')
    for (const [j, name] of tails.entries()) {
      const s = session(db, name)
      await writeTail(s, n, 1, 4 + j, name === 'default', small)
      if (s !== db) await s.close()
    }
    if (c.cfs) {
      const s = db.columnFamily('cf-fv7-ribbon')
      await s.flush()
      await s.close()
    }
    for (const [j, name] of tails.entries()) {
      const s = session(db, name)
      await writeTail(s, n, 2, 9 + j, name === 'default', small)
      if (s !== db) await s.close()
    }
  }
  const live = await dump(db, names, keys)
  if (guard !== null) await guard.close()
  await closeDB(db, c.name)

  // What RocksDB reads back from the closed database: a copy, opened
  // read-only, so that the directory stays as the writer left it.
  const copyDir = path.join(dir, 'copy')
  fs.cpSync(dbDir, copyDir, { recursive: true })
  const ro = new RocksDB(copyDir, { readOnly: true, columnFamilies: names.slice(1) })
  await ro.ready()
  const want = await dump(ro, names, keys)
  const logEntries = {}
  for (const name of names) logEntries[name] = await memEntries(ro, name)
  await closeDB(ro, c.name + ' (read-only copy)')
  fs.rmSync(copyDir, { recursive: true, force: true })
  if (want !== live) throw new Error(`${c.name}: the database read back differs from what its writer read before closing`)
  if (c.tail && !(logEntries.default > 0)) throw new Error(`${c.name}: nothing replayed from the log tail: ${JSON.stringify(logEntries)}`)
  if (!c.tail && Object.values(logEntries).some((v) => v !== 0)) throw new Error(`${c.name}: entries replayed from the logs without a tail: ${JSON.stringify(logEntries)}`)
  fs.writeFileSync(path.join(dir, 'db-want.txt'), want)

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
    keys: n,
    defaults: !!c.defaults,
    tail: !!c.tail,
    columnFamilies: names,
    logEntries
  }
  fs.writeFileSync(path.join(dir, 'case.json'), JSON.stringify(info, null, 2) + '\n')
  return view.length
}

// readCopies is the -read mode: for each DIR OUT pair, the database in
// DIR (a damaged copy the test made) as RocksDB's read-only open reads it,
// printed into OUT as db-want.txt is but without Gets, with the column
// families of WANT (the undamaged database's db-want.txt); or, when
// RocksDB refuses to open it, "@open-error MESSAGE". The open works on a
// copy of DIR, so that DIR stays as the test made it. A line "done OUT"
// on stdout follows each: RocksDB 10.5.1 spins forever opening some
// damaged logs (facebook/rocksdb#13333), and the test kills this process
// when none comes.
async function readCopies(want, pairs) {
  const names = []
  for (const line of fs.readFileSync(want, 'utf8').split('\n')) {
    if (line.startsWith('@cf ')) names.push(line.slice(4))
  }
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const [dir, out] = [pairs[i], pairs[i + 1]]
    const copyDir = out + '.copy'
    fs.rmSync(copyDir, { recursive: true, force: true })
    fs.cpSync(dir, copyDir, { recursive: true })
    let text
    let ro = null
    try {
      ro = new RocksDB(copyDir, { readOnly: true, createIfMissing: false, columnFamilies: names.slice(1) })
      await ro.ready()
      text = await dump(ro, names, [])
    } catch (err) {
      text = '@open-error ' + String(err.message).replace(/\s+/g, ' ') + '\n'
    }
    if (ro !== null) await closeDB(ro, dir).catch(() => {})
    fs.rmSync(copyDir, { recursive: true, force: true })
    fs.writeFileSync(out, text)
    process.stdout.write('done ' + out + '\n')
  }
}

async function main() {
  const args = process.argv.slice(2)
  if (args[0] === '-read') {
    await readCopies(args[1], args.slice(2))
    process.exit(0)
  }
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
    const entries = await runCase(c, outDir, n, small)
    console.log(`${c.name}: ${entries} keys in RocksDB's view, ${Date.now() - start} ms`)
  }
  process.exit(0)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
