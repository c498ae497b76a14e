package engine

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/enginelab/enginelab/heap"
)

// ORDER BY: a metered sort, modeled on MariaDB's filesort (sql/filesort.cc,
// sql/filesort_utils.cc, sql/sql_sort.h, mysys/mf_qsort.c, mf_radix.c,
// queues.c), as in MariaDB 10.5 to 10.11: the versions with packed sort
// keys (MDEV-21580) and before 11.0's cost-based choice of the sort
// (Sort_costs::compute_sort_costs), whose rule for the priority queue this
// models instead (check_if_pq_applicable).
//
// Tx.Sort runs the whole scan (find_all_keys), then returns a cursor over
// the sorted rows. The choices, in the order filesort makes them:
//
//  1. sortlength: each key part's fixed length (strnxfrmlen of the
//     column's bytes, at most max_sort_length) and its packed maximum;
//     packing is refused for a collation that is not one-to-one on a
//     column longer than max_sort_length (check_if_packing_possible).
//  2. get_addon_fields (filesort_use_addons): the selected columns go
//     into the sort record when their maximum lengths plus the key's are
//     under max_length_for_sort_data; otherwise the record carries a row
//     reference (the primary key, or a heap row pointer) and the rows are
//     fetched again after the sort (the re-fetch is where the table
//     organizations differ).
//  3. check_if_pq_applicable: with a LIMIT whose rows fit in the sort
//     buffer, a bounded priority queue of LIMIT+1 records keeps the
//     smallest keys, never with packed keys.
//  4. Otherwise try_to_pack_sortkeys (packed keys when they save at least
//     128 bytes over the fixed ones, for an empty value of every packable
//     part) and try_to_pack_addons (when the packable addon columns are
//     at least 12 bytes), then a buffer of sort_buffer_size: records are
//     added until it is full, then sorted (radix sort for short fixed keys
//     of 1,000 to 99,999 records, else MariaDB's quicksort) and written to
//     a temporary file as a run.
//  5. If any run was written, the runs are merged MERGEBUFF (7) at a time
//     while there are at least MERGEBUFF2 (15)+1 of them (merge_many_buff),
//     then in one last pass (merge_index) that writes only the result part
//     of each record (its addon columns or its row reference).
//
// Every step is counted in the transaction's Meter (SortCounts) and in the
// sort's own SortStats.

// KeyFormat chooses the format of the sort keys.
type KeyFormat uint8

// Key formats.
const (
	// KeyFormatAuto is MariaDB's choice: packed keys when they would save
	// at least 128 bytes (try_to_pack_sortkeys), never in a priority queue.
	KeyFormatAuto KeyFormat = iota
	// KeyFormatFixed never packs: every key is its fixed-length weights,
	// compared with memcmp (filesort before MDEV-21580).
	KeyFormatFixed
	// KeyFormatPacked packs whenever MariaDB may (a packable part, no
	// priority queue, no unsafe truncation), whatever it saves: the
	// 128-byte heuristic is skipped.
	KeyFormatPacked
)

var keyFormatNames = [...]string{"auto", "fixed", "packed"}

func (f KeyFormat) String() string {
	if int(f) < len(keyFormatNames) {
		return keyFormatNames[f]
	}
	return fmt.Sprintf("keyformat(%d)", uint8(f))
}

// ParseKeyFormat parses a key format name as String prints it.
func ParseKeyFormat(s string) (KeyFormat, error) {
	for i, n := range keyFormatNames {
		if n == s {
			return KeyFormat(i), nil
		}
	}
	return 0, fmt.Errorf("engine: %w: key format %q: want auto, fixed or packed", ErrInvalidOptions, s)
}

// SortKey is one key of an ORDER BY.
type SortKey struct {
	Column string
	Desc   bool
	// Collation orders a char or varchar column (Collations lists them;
	// "" is binary, the order of the engine's indexes). It must be empty
	// for other types.
	Collation string
}

// Sort defaults and bounds, MariaDB's.
const (
	// DefaultSortBufferSize is sort_buffer_size's default, 2 MiB.
	DefaultSortBufferSize = 2 << 20
	// MinSortBufferSize is MIN_SORT_MEMORY, the least sort buffer.
	MinSortBufferSize = 16 << 10
	// DefaultMaxSortLength is max_sort_length's default: a key part uses
	// at most this many bytes.
	DefaultMaxSortLength = 1024
	// DefaultMaxLengthForSortData is max_length_for_sort_data's default.
	DefaultMaxLengthForSortData = 1024

	mergeBuff  = 7  // MERGEBUFF: runs merged at a time
	mergeBuff2 = 15 // MERGEBUFF2: merge_many_buff runs while more than this
	// packedKeySaving is try_to_pack_sortkeys' heuristic: pack only if it
	// saves at least this many bytes.
	packedKeySaving = 128
	// keyLenField and addonLenField are the length prefixes of a packed
	// key (Sort_keys::size_of_length_field) and of packed addon columns
	// (Addon_fields::size_of_length_field).
	keyLenField   = 4
	addonLenField = 2
	// pointerSize is a record pointer in the sort buffer (sizeof(char*)).
	pointerSize = 8
	// tempBlock is the temporary files' write cache (DISK_BUFFER_SIZE).
	tempBlock = 64 << 10
	// maxSortSetting bounds max_sort_length and max_length_for_sort_data
	// (MariaDB's 8M).
	maxSortSetting = 8 << 20
	// minSortSetting is their least value (MariaDB's 4).
	minSortSetting = 4
	// pqSlowness is check_if_pq_applicable's PQ_slowness: a priority
	// queue is about three times slower than quicksort a row.
	pqSlowness = 3.0
	// noLimit is HA_POS_ERROR: no LIMIT, or an unknown row count.
	noLimit = math.MaxInt64
)

// SortOptions describe an ORDER BY over a scan.
type SortOptions struct {
	// ScanOptions are the scan that feeds the sort: its index, bounds,
	// direction and the columns selected (nil: all). Its Limit must be 0:
	// the sort's Limit is below.
	ScanOptions
	// OrderBy lists the keys, most significant first.
	OrderBy []SortKey
	// Limit returns only the first Limit rows (0: all).
	Limit int
	// SortBufferSize is sort_buffer_size in bytes (0: 2 MiB; at least
	// MinSortBufferSize).
	SortBufferSize int64
	// MaxSortLength is max_sort_length (0: 1024; 4 to 8 MiB).
	MaxSortLength int
	// MaxLengthForSortData is max_length_for_sort_data (0: 1024; 4 to
	// 8 MiB): addon columns are used when their length and the key's are
	// under it.
	MaxLengthForSortData int
	// KeyFormat chooses fixed or packed keys (default: MariaDB's choice).
	KeyFormat KeyFormat
	// RowsEstimate is the optimizer's estimate of the rows the scan
	// returns, an upper bound (the handler's estimate_rows_upper_bound);
	// 0 means unknown. It sizes the sort buffer and decides the priority
	// queue as MariaDB does.
	RowsEstimate int64
}

// SortMode says what a sort record carries besides its key.
type SortMode uint8

// Sort modes.
const (
	// SortAddonFields: the selected columns, so the rows come back from
	// the sort itself.
	SortAddonFields SortMode = iota + 1
	// SortRowRefs: a row reference (the primary key, or a heap row
	// pointer in HeapRowPointer tables); each row is fetched again.
	SortRowRefs
)

func (m SortMode) String() string {
	switch m {
	case SortAddonFields:
		return "addon-fields"
	case SortRowRefs:
		return "row-refs"
	}
	return "none"
}

// SortStats describe one sort: the choices made and what it did (the
// fields of ANALYZE FORMAT=JSON's filesort, and more).
type SortStats struct {
	// Avoided: the scan's index gave the order, and no sort ran.
	Avoided bool `json:"avoided"`
	// Mode: addon fields or row references.
	Mode SortMode `json:"-"`
	// ModeName is Mode's name, for JSON.
	ModeName      string `json:"mode"`
	PackedKeys    bool   `json:"packed_keys"`
	PackedAddons  bool   `json:"packed_addons"`
	PriorityQueue bool   `json:"priority_queue"`
	// Radix: a buffer was radix-sorted rather than compared.
	Radix bool `json:"radix"`
	// SortLength is the key's length (its maximum when packed), the row
	// reference included when the record carries one; ResLength the
	// addon columns' or the reference's; RecLength both.
	SortLength int `json:"sort_length"`
	ResLength  int `json:"res_length"`
	RecLength  int `json:"rec_length"`
	// BufferBytes is the sort buffer allocated; KeysPerBuffer the
	// records it was sized for (max_keys_per_buffer).
	BufferBytes   int64 `json:"buffer_bytes"`
	KeysPerBuffer int   `json:"keys_per_buffer"`
	// Runs written to the temporary file; merge passes over the data
	// (merge_many_buff's rounds and the last merge); merge_buffers calls
	// (MariaDB's Sort_merge_passes counts these).
	Runs        int `json:"runs"`
	MergePasses int `json:"merge_passes"`
	MergeCalls  int `json:"merge_calls"`
	// RowsExamined by the scan, RowsSorted into the buffer or queue, and
	// RowsReturned by the sort.
	RowsExamined int64 `json:"rows_examined"`
	RowsSorted   int64 `json:"rows_sorted"`
	RowsReturned int64 `json:"rows_returned"`
}

// sortField is one key part (MariaDB's SORT_FIELD_ATTR).
type sortField struct {
	col      int
	typ      Type
	coll     Collation
	desc     bool
	nullable bool
	variable bool // VARIABLE_SIZE: a string, packable
	// length is the fixed key's bytes for the part (its NULL marker not
	// included); original is the most bytes a packed value takes (the
	// column's, at most max_sort_length); suffix the binary collation's
	// length suffix; lengthBytes the packed length prefix.
	length, original, suffix, lengthBytes int
}

// addonField is one addon column (SORT_ADDON_FIELD).
type addonField struct {
	col      int
	typ      Type
	maxLen   int // max_packed_col_length: the value's bytes at most
	lenBytes int // a string's length prefix: 1, or 2 over 255 bytes
	nullable bool
	nullBit  int // its bit among the addon NULL bits (nullable only)
	offset   int // its place in a fixed addon record, after the NULL bits
}

// sortParam is a sort's plan (MariaDB's Sort_param).
type sortParam struct {
	t      *TableHandle
	fields []sortField
	// The fixed key's length with NULL markers (sort_length before the
	// reference), the packed key's longest (with original values), and
	// the packable parts' length prefixes.
	fixedKeyLen, packedKeyLen, packableBytes int
	allowPacking                             bool
	addon                                    []addonField
	addonNullBytes                           int
	addonLen                                 int // fixed addon record: NULL bits + every column's maxLen
	addonPackable                            int
	refLen                                   int
	useAddons, packedKeys, packedAddons      bool
	usingPQ                                  bool
	// sortLength is the compared length (the key, and the reference
	// when there is one); resLength the result part; recLength both.
	sortLength, resLength, recLength int
	limit                            int64
	maxKeysPerBuffer                 int
	bufferBytes                      int64
	memory                           int64
	maxLengthForSortData             int
	want                             []int // the columns the scan reads
	selected                         []bool
	// sel and wantCol are planSort's scratch; row and cursorWant the
	// SortCursor's row and columns, kept with the plan for reuse.
	sel        []int
	wantCol    []bool
	row        Row
	cursorWant []int
}

// fieldMaxLen is a column's max_packed_col_length: a string's bytes and
// its length prefix, an integer's eight bytes (a BIGINT).
func fieldMaxLen(c *Column) (int, int) {
	if c.Type.isString() {
		lb := 1
		if c.Length > 255 {
			lb = 2
		}
		return c.Length + lb, lb
	}
	return 8, 0
}

// lengthBytesFor is number_storage_requirement: the bytes that hold n.
func lengthBytesFor(n int) int {
	switch {
	case n < 1<<8:
		return 1
	case n < 1<<16:
		return 2
	case n < 1<<24:
		return 3
	}
	return 4
}

// maxRefLen is the row reference's length: a heap row pointer, or the
// primary key's longest encoding (a string escaped byte for byte), which
// the records of a fixed format all reserve.
func (t *TableHandle) maxRefLen() int {
	if t.org == HeapRowPointer {
		return heap.RowPtrSize
	}
	n := 0
	for _, c := range t.info.pk {
		col := &t.info.def.Columns[c]
		if col.Type.isString() {
			n += 1 + 2*col.Length + 2
		} else {
			n += 1 + keyIntLen
		}
	}
	return n
}

// planSort validates o and makes the plan: sortlength, get_addon_fields,
// check_if_pq_applicable, try_to_pack_sortkeys, try_to_pack_addons and the
// buffer's size, as filesort() does before it reads a row.
//
// p, if not nil, is a plan of an earlier sort whose slices are reused
// (a transaction keeps one: see SortCursor.Close).
func planSort(t *TableHandle, o *SortOptions, p *sortParam) (*sortParam, error) {
	name := t.info.def.Name
	if p == nil {
		p = &sortParam{}
	}
	*p = sortParam{t: t, memory: o.SortBufferSize, maxLengthForSortData: o.MaxLengthForSortData, limit: noLimit,
		fields: p.fields[:0], addon: p.addon[:0], want: p.want[:0], selected: p.selected[:0], sel: p.sel[:0], wantCol: p.wantCol[:0],
		row: p.row, cursorWant: p.cursorWant[:0]}
	if p.memory == 0 {
		p.memory = DefaultSortBufferSize
	}
	msl := o.MaxSortLength
	if msl == 0 {
		msl = DefaultMaxSortLength
	}
	if p.maxLengthForSortData == 0 {
		p.maxLengthForSortData = DefaultMaxLengthForSortData
	}
	switch {
	case len(o.OrderBy) == 0:
		return nil, fmt.Errorf("engine: %w: table %s: ORDER BY names no column", ErrInvalidOptions, name)
	case p.memory < MinSortBufferSize:
		return nil, fmt.Errorf("engine: %w: table %s: sort_buffer_size %d: want at least %d bytes", ErrInvalidOptions, name, p.memory, MinSortBufferSize)
	case p.memory > 1<<40:
		return nil, fmt.Errorf("engine: %w: table %s: sort_buffer_size %d: want at most 1 TiB", ErrInvalidOptions, name, p.memory)
	case msl < minSortSetting || msl > maxSortSetting:
		return nil, fmt.Errorf("engine: %w: table %s: max_sort_length %d: want %d to %d", ErrInvalidOptions, name, msl, minSortSetting, maxSortSetting)
	case p.maxLengthForSortData < minSortSetting || p.maxLengthForSortData > maxSortSetting:
		return nil, fmt.Errorf("engine: %w: table %s: max_length_for_sort_data %d: want %d to %d", ErrInvalidOptions, name, p.maxLengthForSortData, minSortSetting, maxSortSetting)
	case o.Limit < 0:
		return nil, fmt.Errorf("engine: %w: table %s: sort limit %d is negative", ErrInvalidOptions, name, o.Limit)
	case o.ScanOptions.Limit != 0:
		return nil, fmt.Errorf("engine: %w: table %s: the sort's scan has a limit (%d); give the sort's Limit", ErrInvalidOptions, name, o.ScanOptions.Limit)
	case o.KeyFormat > KeyFormatPacked:
		return nil, fmt.Errorf("engine: %w: table %s: key format %d", ErrInvalidOptions, name, o.KeyFormat)
	case o.RowsEstimate < 0:
		return nil, fmt.Errorf("engine: %w: table %s: rows estimate %d is negative", ErrInvalidOptions, name, o.RowsEstimate)
	}
	if o.Limit > 0 {
		p.limit = int64(o.Limit)
	}
	cols := t.info.def.Columns
	// 1. sortlength.
	p.allowPacking = true
	nullable := 0
	for _, k := range o.OrderBy {
		c, ok := t.info.colIndex[k.Column]
		if !ok {
			return nil, fmt.Errorf("%w: table %s: ORDER BY names column %q", ErrUnknownColumn, name, strings.Clone(k.Column))
		}
		col := &cols[c]
		coll, err := LookupCollation(k.Collation)
		if err != nil {
			return nil, fmt.Errorf("engine: table %s: ORDER BY %s: %w", name, col.Name, err)
		}
		if k.Collation != "" && !col.Type.isString() {
			return nil, fmt.Errorf("engine: %w: table %s: ORDER BY %s: a collation (%s) for a %s column", ErrInvalidOptions, name, col.Name, coll, col.Type)
		}
		f := sortField{col: c, typ: col.Type, coll: coll, desc: k.Desc, nullable: col.Nullable}
		if col.Type.isString() {
			// set_length_and_original_length, then strnxfrmlen; the
			// binary collation appends the value's length.
			f.variable = true
			f.original = col.Length
			f.length = coll.keyLen(min(col.Length, msl))
			if coll.info().binary {
				f.suffix = lengthBytesFor(col.Length)
				f.length = min(col.Length, msl) + f.suffix
				f.original += f.suffix
			}
			if f.original > msl && coll.info().nonOneToOne {
				p.allowPacking = false // check_if_packing_possible
			}
			f.lengthBytes = lengthBytesFor(min(f.original, msl))
			f.length = min(f.length, msl)
			f.original = min(f.original, msl)
			p.packableBytes += f.lengthBytes
		} else {
			f.length, f.original = 8, 8
		}
		if f.nullable {
			nullable++
		}
		p.fixedKeyLen += f.length
		p.packedKeyLen += f.original
		p.fields = append(p.fields, f)
	}
	p.fixedKeyLen += nullable
	p.packedKeyLen += nullable
	// The columns the rows come back with.
	p.selected = slices.Grow(p.selected, len(cols))[:len(cols)]
	clear(p.selected)
	sel := p.sel
	if o.Columns == nil {
		for i := range cols {
			sel = append(sel, i)
		}
	} else {
		var err error
		if sel, err = t.info.resolveInto(sel, "sort", o.Columns); err != nil {
			return nil, err
		}
		slices.Sort(sel)
	}
	p.sel = sel
	for _, c := range sel {
		p.selected[c] = true
	}
	// 2. get_addon_fields (filesort_use_addons): the selected columns,
	// in table order, if they and the fixed key fit under
	// max_length_for_sort_data.
	length, nulls := 0, 0
	for _, c := range sel {
		col := &cols[c]
		ml, lb := fieldMaxLen(col)
		f := addonField{col: c, typ: col.Type, maxLen: ml, lenBytes: lb, nullable: col.Nullable}
		if col.Nullable {
			f.nullBit = nulls
			nulls++
		}
		if col.Nullable || col.Type.isString() {
			p.addonPackable += ml
		}
		length += ml
		p.addon = append(p.addon, f)
	}
	p.addonNullBytes = (nulls + 7) / 8
	length += p.addonNullBytes
	off := p.addonNullBytes
	for i := range p.addon {
		p.addon[i].offset = off
		off += p.addon[i].maxLen
	}
	p.useAddons = len(sel) > 0 && length+p.fixedKeyLen < p.maxLengthForSortData
	p.refLen = t.maxRefLen()
	// init_for_filesort: the record's lengths.
	p.sortLength = p.fixedKeyLen
	if p.useAddons {
		p.addonLen = length
		p.resLength = length
	} else {
		p.addon = p.addon[:0]
		p.resLength = p.refLen
		p.sortLength += p.refLen // the reference is compared last
	}
	p.recLength = p.sortLength + p.addonLen
	// 3. check_if_pq_applicable.
	rows := int64(noLimit)
	if o.RowsEstimate > 0 {
		rows = o.RowsEstimate
	}
	if p.checkPQ(rows) {
		p.usingPQ = true
		p.maxKeysPerBuffer = int(p.limit) + 1
		p.bufferBytes = alignSize(int64(p.maxKeysPerBuffer) * int64(p.recLength+pointerSize))
	} else {
		// 4. try_to_pack_sortkeys, try_to_pack_addons.
		if p.allowPacking && p.packableBytes > 0 && o.KeyFormat != KeyFormatFixed {
			if o.KeyFormat == KeyFormatPacked || p.packedKeyLen >= packedKeySaving+keyLenField+p.packableBytes {
				p.packedKeys = true
				p.sortLength = p.packedKeyLen + keyLenField + p.packableBytes
				if !p.useAddons {
					p.sortLength += p.resLength
				}
				p.recLength = p.sortLength + p.addonLen
			}
		}
		if p.useAddons && p.resLength <= 0xFFFF && p.addonPackable >= 10+addonLenField {
			p.packedAddons = true
			p.addonLen += addonLenField
			p.resLength += addonLenField
			p.recLength += addonLenField
			for i := range p.addon {
				p.addon[i].offset += addonLenField
			}
		}
		// The buffer: as many records as sort_buffer_size holds, at
		// least MERGEBUFF2, at most the rows expected.
		keys := p.memory / int64(p.recLength+pointerSize)
		n := min(rows, keys)
		n = max(n, mergeBuff2)
		p.maxKeysPerBuffer = int(n)
		p.bufferBytes = alignSize(n * int64(p.recLength+pointerSize))
	}
	// The scan reads the key columns and the addon columns, or the
	// primary key for the reference.
	want := slices.Grow(p.wantCol, len(cols))[:len(cols)]
	clear(want)
	p.wantCol = want
	for _, f := range p.fields {
		want[f.col] = true
	}
	if p.useAddons {
		for _, c := range sel {
			want[c] = true
		}
	} else {
		for _, c := range t.info.pk {
			want[c] = true
		}
	}
	for c, w := range want {
		if w {
			p.want = append(p.want, c)
		}
	}
	return p, nil
}

// checkPQ is check_if_pq_applicable: a LIMIT whose records (and one
// more) fit in the buffer, when the rows are not known to be few enough
// for quicksort to be cheaper. (Its last case, dropping the addon columns
// so that the queue fits with row references, weighs merge sort against
// the queue's random reads with the handler's scan_time; it is not
// modeled: the sort merges instead.)
func (p *sortParam) checkPQ(rows int64) bool {
	if p.limit == noLimit || p.limit+2 >= math.MaxUint32 {
		return false
	}
	available := p.memory / int64(p.recLength+pointerSize)
	keys := p.limit + 1
	if rows < available {
		// The whole input fits: the queue only pays when LIMIT is under
		// a third of it.
		return float64(p.limit) < float64(rows)/pqSlowness
	}
	return keys < available
}

// alignSize is ALIGN_SIZE: n rounded up to 8 bytes.
func alignSize(n int64) int64 { return (n + 7) &^ 7 }
