// Package crosscheck tests this module's compatibility claims against the
// real implementations, in a separate module so the main module never
// depends on them: filterblock.LevelDBBloom against goleveldb's bloom
// filter byte for byte, and the reader's handling of a genuine LevelDB
// table.
package crosscheck
