// # Lifetimes
//
// The slices a Reader hands out live for different times:
//
//   - Iterator.Key: valid until the iterator's next move (First, Last,
//     Next, Prev, SeekGE, SeekLT, SeekPrefixGE, SeekPrefixLT), SetBounds
//     or Close. The bytes may then change into another key, silently;
//     copy a key you keep (bytes.Clone).
//   - Iterator.Value: valid until the next move or Close, like Key. It may
//     alias the read-only memory mapping or the reader's decoded blocks:
//     never write to it, and copy it to keep it. Reading it after the file
//     was truncated can fault the process; Get, which copies under
//     protection, cannot.
//   - The key and value a range over Reader.All or Iterator.All yields:
//     valid only until the loop's next iteration, like Key and Value.
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
//
// # Errors
//
// Every error a Reader returns, from Open or New on, names its table,
// so that a store with many tables need not wrap each call: the path
// given to Open, or Options.Name for New (without a name, the messages
// are as below without the "NAME: "). That holds for Get, GetAppend,
// Has, Verify, an Iterator's Err and Close, and the errors of calls
// after Close:
//
//   - damage is a *format.CorruptError with File set to the name, read
//     as "NAME: sstable: corrupt SECTION at offset N: what"; errors.Is(err,
//     format.ErrCorrupt) and errors.As(err, &ce) hold;
//   - a failed read of New's source, and ErrClosed, are wrapped as
//     "NAME: ...": errors.Is sees the cause;
//   - ErrNotFound alone is the bare sentinel: a miss names nothing and
//     allocates nothing.
//
// MayContain and MayContainPrefix return no error: damage they meet
// answers true, and the lookup that follows reports it.
package reader
