package engine

import (
	"fmt"
	"strconv"
	"time"
)

// Type is a column's type.
type Type uint8

// Column types.
const (
	// TypeInt is a 64-bit signed integer.
	TypeInt Type = iota + 1
	// TypeDecimal is a fixed-point decimal: a 64-bit integer count of
	// units of 10^-Scale (Column.Scale). TPC-C money is Scale 2, rates
	// Scale 4.
	TypeDecimal
	// TypeChar is a string of at most Column.Length bytes, stored without
	// padding (the declared length is a bound, as in most engines' CHAR
	// handling of trailing spaces, not a fill).
	TypeChar
	// TypeVarchar is a string of at most Column.Length bytes.
	TypeVarchar
	// TypeTimestamp is a point in time, microseconds since the Unix epoch,
	// UTC.
	TypeTimestamp
)

var typeNames = map[Type]string{
	TypeInt: "int", TypeDecimal: "decimal", TypeChar: "char",
	TypeVarchar: "varchar", TypeTimestamp: "timestamp",
}

func (t Type) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return "type(" + strconv.Itoa(int(t)) + ")"
}

// isString reports whether values of t are byte strings.
func (t Type) isString() bool { return t == TypeChar || t == TypeVarchar }

// Value is one column value: a NULL, an integer (TypeInt, TypeDecimal in
// units of its scale, TypeTimestamp in microseconds) or a byte string
// (TypeChar, TypeVarchar). The zero Value is NULL.
//
// A Value does not carry its type: the column it is stored in gives it.
// Strings are held as []byte and not copied on the way in; a row returned by
// the engine owns its bytes until the call that returned it is repeated
// (see each method).
type Value struct {
	I       int64
	B       []byte
	NotNull bool
}

// Null is the NULL value.
var Null = Value{}

// Int returns an integer value.
func Int(v int64) Value { return Value{I: v, NotNull: true} }

// Dec returns a decimal value of units units of the column's scale: with
// scale 2, Dec(1234) is 12.34.
func Dec(units int64) Value { return Value{I: units, NotNull: true} }

// Str returns a string value.
func Str(s string) Value { return Value{B: []byte(s), NotNull: true} }

// Bytes returns a string value that shares b.
func Bytes(b []byte) Value { return Value{B: b, NotNull: true} }

// Time returns a timestamp value (microsecond precision, UTC).
func Time(t time.Time) Value { return Value{I: t.UnixMicro(), NotNull: true} }

// IsNull reports whether v is NULL.
func (v Value) IsNull() bool { return !v.NotNull }

// Format renders v as a column of type t with the given decimal scale.
func (v Value) Format(t Type, scale int) string {
	switch {
	case v.IsNull():
		return "NULL"
	case t == TypeDecimal:
		return formatDecimal(v.I, scale)
	case t == TypeTimestamp:
		return time.UnixMicro(v.I).UTC().Format(time.RFC3339Nano)
	case t.isString():
		return strconv.Quote(string(v.B))
	default:
		return strconv.FormatInt(v.I, 10)
	}
}

func formatDecimal(units int64, scale int) string {
	if scale == 0 {
		return strconv.FormatInt(units, 10)
	}
	neg := units < 0
	u := uint64(units)
	if neg {
		u = uint64(-units)
	}
	s := strconv.FormatUint(u, 10)
	for len(s) <= scale {
		s = "0" + s
	}
	s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	if neg {
		s = "-" + s
	}
	return s
}

// Row is the values of a table's columns, in schema order.
type Row []Value

func (r Row) String() string { return fmt.Sprint([]Value(r)) }
