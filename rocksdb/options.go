package rocksdb

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// readOptions reads the newest OPTIONS-NNNNNN file of dir, RocksDB's
// record of the options each column family was opened with (an INI file:
// sections such as [CFOptions "name"], lines name=value): the options of
// each column family by name. A directory without one gives nil.
func readOptions(dir string, names []string) map[string]map[string]string {
	var best string
	bestNum := uint64(0)
	for _, n := range names {
		num, ok := strings.CutPrefix(n, "OPTIONS-")
		if !ok {
			continue
		}
		if v, err := strconv.ParseUint(num, 10, 64); err == nil && (best == "" || v > bestNum) {
			best, bestNum = n, v
		}
	}
	if best == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, best))
	if err != nil {
		return nil
	}
	out := map[string]map[string]string{}
	var cur map[string]string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			cur = nil
			if rest, ok := strings.CutPrefix(line, "[CFOptions \""); ok {
				if name, ok := strings.CutSuffix(rest, "\"]"); ok {
					cur = map[string]string{}
					out[name] = cur
				}
			}
			continue
		}
		if cur == nil || line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			cur[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

// builtinOperator returns the built-in merge operator an OPTIONS file's
// merge_operator value names ("StringAppendOperator", as 7.x writes it,
// or "{id=StringAppendOperator;delimiter=,}", as later releases do;
// "UInt64AddOperator"), or nil for none or another. The string append
// operator's delimiter defaults to ",", RocksDB's default.
func builtinOperator(v string) MergeOperator {
	id, delim := v, ","
	if inner, ok := strings.CutPrefix(v, "{"); ok {
		inner = strings.TrimSuffix(inner, "}")
		id = ""
		for _, field := range strings.Split(inner, ";") {
			k, val, _ := strings.Cut(field, "=")
			switch strings.TrimSpace(k) {
			case "id":
				id = strings.TrimSpace(val)
			case "delimiter":
				delim = val
			}
		}
	}
	op, err := MergeOperatorByName(id, delim)
	if err != nil {
		return nil
	}
	return op
}

// ColumnFamilyOptions returns column family cf's options as the
// directory's newest OPTIONS file records them (name to value, such as
// "merge_operator" or "comparator"), or nil when it has none.
func (db *DB) ColumnFamilyOptions(cf string) map[string]string {
	f, ok := db.byName[cf]
	if !ok || f.options == nil {
		return nil
	}
	out := make(map[string]string, len(f.options))
	for k, v := range f.options {
		out[k] = v
	}
	return out
}

// MergeOperator returns the operator column family cf's merge operands
// read through (DBOptions.MergeOperators', or the built-in one its
// OPTIONS file names, with OptionsMergeOperators), or nil for none.
func (db *DB) MergeOperator(cf string) MergeOperator {
	if f, ok := db.byName[cf]; ok {
		return f.op
	}
	return nil
}
