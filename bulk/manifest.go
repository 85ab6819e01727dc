package bulk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
)

// ManifestVersion is the version of the manifest format written by this
// package.
const ManifestVersion = 1

// Manifest lists the tables of one bulk build: the contents of
// manifest.json.
type Manifest struct {
	// Version is ManifestVersion.
	Version int `json:"version"`
	// Builder records the options every table was built with.
	Builder BuilderOptions `json:"builder"`
	// Entries and Size are the totals over Tables: entries, and bytes of
	// table files.
	Entries int64 `json:"entries"`
	Size    int64 `json:"size"`
	// Tables are the tables in key order; they never overlap. Keys are
	// base64 in the JSON; each Path is the table's name relative to the
	// manifest's directory in the file (an object key relative to the
	// bucket in a manifest written by the beam module), and ReadManifest
	// joins it with that directory.
	Tables []TableInfo `json:"tables"`
}

// BuilderOptions is the record of a builder.Options kept in a manifest:
// sizes in bytes, compression, filter and splitter by name. Zero fields
// mean the builder's defaults.
type BuilderOptions struct {
	BlockSize          int     `json:"block_size,omitempty"`
	RestartInterval    int     `json:"restart_interval,omitempty"`
	Compression        string  `json:"compression"`                 // "snappy", "zstd" or "none"
	CompressionLevel   string  `json:"compression_level,omitempty"` // zstd only
	Filter             string  `json:"filter"`                      // the policy's name
	BitsPerKey         float64 `json:"bits_per_key,omitempty"`
	Splitter           string  `json:"splitter,omitempty"`
	FormatVersion      uint32  `json:"format_version"` // the format version asked for: 4 by default; an older table past the partition threshold is version 3
	HashIndex          bool    `json:"hash_index,omitempty"`
	PartitionThreshold int     `json:"partition_threshold,omitempty"`
	PartitionSize      int     `json:"partition_size,omitempty"`
}

// RecordOptions returns the manifest's record of o (nil: the defaults).
func RecordOptions(o *builder.Options) BuilderOptions {
	var b BuilderOptions
	if o == nil {
		o = &builder.Options{}
	}
	b.BlockSize = o.BlockSize
	b.RestartInterval = o.RestartInterval
	b.Compression = o.Compression.String()
	if o.Compression == 0 { // the default
		b.Compression = "snappy"
	}
	if b.Compression == "zstd" {
		b.CompressionLevel = o.CompressionLevel.String()
	}
	f := o.Filter
	if f == nil {
		f = filterblock.Bloom(builder.DefaultBitsPerKey)
	}
	b.Filter = f.Name()
	if s, ok := f.(filterblock.Sized); ok {
		b.BitsPerKey = s.BitsPerKey()
	}
	if o.Splitter != nil {
		b.Splitter = o.Splitter.Name()
	}
	b.FormatVersion = o.FormatVersion
	switch {
	case o.FormatVersion != 0:
	case o.HashIndex:
		b.FormatVersion = format.Version2 // version 3 for tables past the partition threshold
	default:
		b.FormatVersion = format.Version4
	}
	b.HashIndex = o.HashIndex
	b.PartitionThreshold = o.PartitionThreshold
	b.PartitionSize = o.PartitionSize
	return b
}

// NewManifest returns the manifest of tables built with opts, with the
// totals filled in. It returns an error if the tables are not in key order
// or overlap, or if a table has no entries or a Smallest key above its
// Largest.
func NewManifest(opts *builder.Options, tables []TableInfo) (*Manifest, error) {
	m := &Manifest{Version: ManifestVersion, Builder: RecordOptions(opts), Tables: tables}
	if m.Tables == nil {
		m.Tables = []TableInfo{}
	}
	for _, t := range tables {
		m.Entries += t.Entries
		m.Size += t.Size
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Manifest) check() error {
	if m.Version != ManifestVersion {
		return fmt.Errorf("bulk: manifest version %d, want %d", m.Version, ManifestVersion)
	}
	for i, t := range m.Tables {
		switch {
		case t.Path == "":
			return fmt.Errorf("bulk: manifest table %d has no path", i)
		case t.Entries <= 0 && t.Spans <= 0:
			return fmt.Errorf("bulk: manifest table %s has %d entries", t.Path, t.Entries)
		case t.Size <= 0:
			return fmt.Errorf("bulk: manifest table %s has size %d", t.Path, t.Size)
		case bytes.Compare(t.Smallest, t.Largest) > 0:
			return fmt.Errorf("bulk: manifest table %s: smallest key %s above largest %s", t.Path, QuoteKey(t.Smallest), QuoteKey(t.Largest))
		case i > 0 && bytes.Compare(m.Tables[i-1].Largest, t.Smallest) >= 0:
			return fmt.Errorf("bulk: manifest tables %s and %s overlap or are out of key order", m.Tables[i-1].Path, t.Path)
		}
	}
	return nil
}

// ParseManifest decodes a manifest from its JSON, leaving table paths as
// stored, and checks it as NewManifest does. Unknown fields are ignored.
func ParseManifest(data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("bulk: manifest: %w", err)
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	return &m, nil
}

// Marshal returns the manifest's JSON, indented, ending in a newline.
func (m *Manifest) Marshal() ([]byte, error) {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("bulk: manifest: %w", err)
	}
	return append(data, '\n'), nil
}

// ReadManifest reads the manifest at path (dir/manifest.json of a bulk
// build). Its Tables are in key order, each Path joined with the
// manifest's directory. It returns the file's error, or an error for JSON
// that is not a manifest, an unknown version, or tables that overlap or
// are out of order.
func ReadManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bulk: %w", err)
	}
	m, err := ParseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	dir := filepath.Dir(path)
	for i := range m.Tables {
		if !filepath.IsLocal(m.Tables[i].Path) {
			return nil, fmt.Errorf("bulk: manifest %s: table path %q outside its directory", path, m.Tables[i].Path)
		}
		m.Tables[i].Path = filepath.Join(dir, m.Tables[i].Path)
	}
	return m, nil
}

// writeManifest writes dir/manifest.json for tables (paths under dir),
// through a temporary file renamed into place after an fsync. Its mode is
// the tables' (builder.Create): 0644 less the umask.
func writeManifest(dir string, opts *builder.Options, tables []TableInfo) error {
	rel := make([]TableInfo, len(tables))
	for i, t := range tables {
		t.Path = filepath.Base(t.Path)
		rel[i] = t
	}
	m, err := NewManifest(opts, rel)
	if err != nil {
		return err
	}
	data, err := m.Marshal()
	if err != nil {
		return err
	}
	f, err := createTemp(dir, ".manifest-", ".json-tmp")
	if err != nil {
		return fmt.Errorf("bulk: writing manifest: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, ManifestName))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("bulk: writing manifest: %w", err)
	}
	return nil
}

// createTemp creates a new file in dir named prefix + random digits +
// suffix, as os.CreateTemp does, but with mode 0644 less the umask rather
// than 0600.
func createTemp(dir, prefix, suffix string) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if os.IsExist(err) && try < 10000 {
			continue
		}
		return f, err
	}
}
