// # Lifetimes
//
// The slices a Reader hands out live for different times:
//
//   - Iterator.Key: valid until the iterator's next move (First, Last,
//     Next, Prev, SeekGE, SeekLT, SeekPrefixGE) or Close. The bytes may then change into
//     another key, silently; copy a key you keep (bytes.Clone).
//   - Iterator.Value: valid until the next move or Close, like Key. It may
//     alias the read-only memory mapping or the reader's decoded blocks:
//     never write to it, and copy it to keep it. Reading it after the file
//     was truncated can fault the process; Get, which copies under
//     protection, cannot.
//   - Get: a new slice owned by the caller, valid for ever, even after
//     Close.
//   - GetAppend(dst, key): dst with the value appended, owned by the
//     caller like dst itself (a new array when dst lacks the capacity); it
//     refers to nothing of the reader's.
//   - Properties: a copy of the properties struct, whose SmallestKey and
//     LargestKey slices are heap memory owned by the reader and shared by
//     every call. They stay valid after Close; do not modify them (clone
//     them first). Both are whole: a key the properties block leaves out
//     (longer than format.MaxPropertiesKeyLen) is read from the first or
//     last data block when the reader is opened.
//
// A value stored as nil and one stored empty read back alike, as an empty,
// non-nil slice from Get and Iterator.Value (GetAppend appends nothing):
// the format does not tell them apart. Encode absence or deletion in the
// value itself, as a kind byte.
//
// The source of New is never closed by the Reader, and must stay readable
// until Close returns and every Iterator opened before Close is closed
// (see New).
package reader
