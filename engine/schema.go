package engine

import (
	"errors"
	"fmt"

	"github.com/enginelab/enginelab/heap"
)

// Schema errors: returned before anything is created or changed. Each
// message names the table, the column or index, and the offending value.
var (
	// ErrSchema is wrapped by every schema error below, so one errors.Is
	// check catches them all.
	ErrSchema = errors.New("engine: invalid schema")

	ErrUnknownColumn      = fmt.Errorf("%w: unknown column", ErrSchema)
	ErrDuplicateColumn    = fmt.Errorf("%w: duplicate column", ErrSchema)
	ErrDuplicateIndex     = fmt.Errorf("%w: duplicate index name", ErrSchema)
	ErrNullablePrimaryKey = fmt.Errorf("%w: primary key column may be NULL", ErrSchema)
	ErrNoPrimaryKey       = fmt.Errorf("%w: no primary key", ErrSchema)
	ErrBadColumn          = fmt.Errorf("%w: bad column definition", ErrSchema)

	// ErrBadFillFactor means a Table.FillFactor other than 0 (the
	// default) and MinFillFactor to DefaultFillFactor.
	ErrBadFillFactor = fmt.Errorf("%w: fill factor out of range", ErrSchema)
	// ErrFillFactorClustered means a fill factor other than the default
	// on a clustered table, where it has no meaning (see Table.FillFactor).
	ErrFillFactorClustered = fmt.Errorf("%w: fill factor on a clustered table", ErrSchema)
)

// Fill factor bounds (Table.FillFactor), PostgreSQL's for a heap:
// HEAP_MIN_FILLFACTOR and HEAP_DEFAULT_FILLFACTOR.
const (
	MinFillFactor     = heap.MinFillFactor
	DefaultFillFactor = heap.DefaultFillFactor
)

// Value errors: a row or key that does not fit its schema. Nothing is
// changed.
var (
	// ErrBadValue is wrapped by every value error below.
	ErrBadValue = errors.New("engine: invalid value")

	ErrWrongType    = fmt.Errorf("%w: wrong type", ErrBadValue)
	ErrValueTooLong = fmt.Errorf("%w: value too long", ErrBadValue)
	ErrNotNullable  = fmt.Errorf("%w: NULL in a NOT NULL column", ErrBadValue)
	ErrWrongArity   = fmt.Errorf("%w: wrong number of values", ErrBadValue)
)

// Org is a table organization: where rows live and what secondary index
// entries carry.
type Org uint8

// Table organizations.
const (
	// OrgDefault takes the database's default organization.
	OrgDefault Org = iota
	// Clustered keeps rows in the primary-key B+tree; a secondary index
	// entry is (secondary columns, primary-key columns). A lookup through
	// a secondary index goes secondary → primary tree. (InnoDB.)
	Clustered
	// HeapRowPointer keeps rows in a heap; the primary-key index and every
	// secondary index map their key to a row pointer. (PostgreSQL,
	// openGauss.)
	HeapRowPointer
	// HeapPrimaryKey keeps rows in a heap; the primary-key index maps to
	// the row pointer and secondaries carry the primary key (secondary →
	// primary index → heap).
	HeapPrimaryKey
)

var orgNames = [...]string{"default", "clustered", "heap-rowptr", "heap-pk"}

func (o Org) String() string {
	if int(o) < len(orgNames) {
		return orgNames[o]
	}
	return fmt.Sprintf("org(%d)", uint8(o))
}

// ParseOrg parses an organization name as String prints it.
func ParseOrg(s string) (Org, error) {
	for i, n := range orgNames {
		if n == s && i != 0 {
			return Org(i), nil
		}
	}
	return 0, fmt.Errorf("%w: organization %q: want clustered, heap-rowptr or heap-pk", ErrSchema, s)
}

// Column declares one column.
type Column struct {
	Name string
	Type Type
	// Length bounds TypeChar and TypeVarchar values, in bytes (1 to
	// MaxStringLength).
	Length int
	// Scale is the number of decimal places of a TypeDecimal (0 to 18).
	Scale int
	// Nullable allows NULL. Primary-key columns must not be nullable.
	Nullable bool
}

// MaxStringLength bounds a string column's declared length.
const MaxStringLength = 4096

// Index declares a secondary index.
type Index struct {
	Name    string
	Columns []string
	Unique  bool
}

// Table declares a table.
type Table struct {
	Name       string
	Columns    []Column
	PrimaryKey []string
	Indexes    []Index
	// Org is the table's organization; OrgDefault takes the database's.
	Org Org
	// FillFactor is the percentage of a heap page that inserts fill,
	// PostgreSQL's CREATE TABLE ... WITH (fillfactor = N): MinFillFactor
	// to DefaultFillFactor, 0 meaning DefaultFillFactor (pages filled).
	// The rest of each page is kept for the later versions of its rows:
	// an update whose new version fits on its row's page goes there,
	// reserve included (a HOT update when no indexed column changed, with
	// Options.HeapVersions), while an insert, and an update that must
	// leave its page, choose only a page with the row and the reserve
	// free (heap.Heap.SetFillFactor has the rule). The catalog keeps it,
	// so a reopened database fills pages as before.
	//
	// It applies to both heap organizations. A clustered table accepts
	// only 0 or DefaultFillFactor and refuses any other value with
	// ErrFillFactorClustered: InnoDB has no per-table fill factor for its
	// clustered index (innodb_fill_factor sets the fill of sorted index
	// builds only, which this engine does not do; its B+tree pages fill
	// as their splits leave them).
	FillFactor int `json:",omitempty"`
}

// validate checks the declaration and resolves column names to positions.
func (t *Table) validate() (*tableInfo, error) {
	if t.Name == "" {
		return nil, fmt.Errorf("%w: table has no name", ErrSchema)
	}
	if len(t.Columns) == 0 {
		return nil, fmt.Errorf("%w: table %s has no columns", ErrSchema, t.Name)
	}
	info := &tableInfo{def: t, colIndex: make(map[string]int, len(t.Columns))}
	for i, c := range t.Columns {
		if c.Name == "" {
			return nil, fmt.Errorf("%w: table %s: column %d has no name", ErrBadColumn, t.Name, i)
		}
		if _, dup := info.colIndex[c.Name]; dup {
			return nil, fmt.Errorf("%w: table %s: column %s declared twice", ErrDuplicateColumn, t.Name, c.Name)
		}
		switch c.Type {
		case TypeInt, TypeTimestamp:
		case TypeDecimal:
			if c.Scale < 0 || c.Scale > 18 {
				return nil, fmt.Errorf("%w: table %s: column %s: decimal scale %d, want 0 to 18", ErrBadColumn, t.Name, c.Name, c.Scale)
			}
		case TypeChar, TypeVarchar:
			if c.Length < 1 || c.Length > MaxStringLength {
				return nil, fmt.Errorf("%w: table %s: column %s: length %d, want 1 to %d", ErrBadColumn, t.Name, c.Name, c.Length, MaxStringLength)
			}
		default:
			return nil, fmt.Errorf("%w: table %s: column %s: unknown type %s", ErrBadColumn, t.Name, c.Name, c.Type)
		}
		info.colIndex[c.Name] = i
	}
	if len(t.PrimaryKey) == 0 {
		return nil, fmt.Errorf("%w: table %s", ErrNoPrimaryKey, t.Name)
	}
	if ff := t.FillFactor; ff != 0 && heap.CheckFillFactor(ff) != nil {
		return nil, fmt.Errorf("%w: table %s: fill factor %d, want %d to %d (0: %d)",
			ErrBadFillFactor, t.Name, ff, MinFillFactor, DefaultFillFactor, DefaultFillFactor)
	}
	var err error
	if info.pk, err = info.resolve("primary key", t.PrimaryKey); err != nil {
		return nil, err
	}
	for _, c := range info.pk {
		if col := t.Columns[c]; col.Nullable {
			return nil, fmt.Errorf("%w: table %s: column %s", ErrNullablePrimaryKey, t.Name, col.Name)
		}
	}
	seen := map[string]bool{"PRIMARY": true}
	for _, ix := range t.Indexes {
		if ix.Name == "" {
			return nil, fmt.Errorf("%w: table %s: an index has no name", ErrSchema, t.Name)
		}
		if seen[ix.Name] {
			return nil, fmt.Errorf("%w: table %s: index %s", ErrDuplicateIndex, t.Name, ix.Name)
		}
		seen[ix.Name] = true
		cols, err := info.resolve("index "+ix.Name, ix.Columns)
		if err != nil {
			return nil, err
		}
		if len(cols) == 0 {
			return nil, fmt.Errorf("%w: table %s: index %s has no columns", ErrSchema, t.Name, ix.Name)
		}
		info.secondary = append(info.secondary, indexInfo{def: ix, cols: cols})
	}
	return info, nil
}

// tableInfo is a validated table declaration with names resolved.
type tableInfo struct {
	def       *Table
	colIndex  map[string]int
	pk        []int
	secondary []indexInfo
}

type indexInfo struct {
	def  Index
	cols []int
}

func (t *tableInfo) resolve(what string, names []string) ([]int, error) {
	cols := make([]int, len(names))
	used := make(map[string]bool, len(names))
	for i, n := range names {
		c, ok := t.colIndex[n]
		if !ok {
			return nil, fmt.Errorf("%w: table %s: %s names column %q", ErrUnknownColumn, t.def.Name, what, n)
		}
		if used[n] {
			return nil, fmt.Errorf("%w: table %s: %s names column %s twice", ErrDuplicateColumn, t.def.Name, what, n)
		}
		used[n] = true
		cols[i] = c
	}
	return cols, nil
}

// checkValue verifies that v fits column c of table table.
func checkValue(table string, c *Column, v Value) error {
	if v.IsNull() {
		if !c.Nullable {
			return fmt.Errorf("%w: table %s: column %s", ErrNotNullable, table, c.Name)
		}
		return nil
	}
	if c.Type.isString() {
		if v.B == nil {
			return fmt.Errorf("%w: table %s: column %s is %s(%d), value is the integer %d (use Str(\"\") for an empty string)",
				ErrWrongType, table, c.Name, c.Type, c.Length, v.I)
		}
		if len(v.B) > c.Length {
			return fmt.Errorf("%w: table %s: column %s is %s(%d), value %q is %d bytes",
				ErrValueTooLong, table, c.Name, c.Type, c.Length, truncate(v.B), len(v.B))
		}
	} else if v.B != nil {
		return fmt.Errorf("%w: table %s: column %s is %s, value is the string %q",
			ErrWrongType, table, c.Name, c.Type, truncate(v.B))
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// checkRow verifies a whole row against the table.
func (t *tableInfo) checkRow(row Row) error {
	if len(row) != len(t.def.Columns) {
		return fmt.Errorf("%w: table %s has %d columns, row has %d values", ErrWrongArity, t.def.Name, len(t.def.Columns), len(row))
	}
	for i := range row {
		if err := checkValue(t.def.Name, &t.def.Columns[i], row[i]); err != nil {
			return err
		}
	}
	return nil
}
