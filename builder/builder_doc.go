// # Lifetimes
//
// Add copies what it keeps of key and value before it returns: the
// caller may reuse or overwrite both at once, as a loop filling one buffer
// does.
//
// Properties returns a copy of the properties struct, but its SmallestKey
// and LargestKey slices are the builder's own, shared by every call: read
// them, or clone them (bytes.Clone) before modifying.
//
// # Temporary files
//
// A Builder from Create writes ".NAME.*.sst-tmp" beside the target and
// renames it into place in Finish. A Builder dropped without Finish or
// Abort leaves that file behind; defer b.Abort() right after Create (it
// returns nil once Finish has succeeded). Finish replaces an existing
// table at the path atomically.
package builder
