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
//     them first).
package reader
