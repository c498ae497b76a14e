package store

import (
	"errors"
	"fmt"
	"strings"

	"github.com/enginelab/enginelab/cache/page"
)

// CorruptError is how the pebble store reports damaged files: pebble's own
// corruption errors, files it expected and did not find, and panics and
// fatal errors inside pebble, all translated at the store's one boundary
// with pebble (see PebbleStore). It matches page.ErrCorrupt.
type CorruptError struct {
	// Dir is the database directory.
	Dir string
	// Op is what the store was doing: "open", "read page 3:17", ...
	Op string
	// File is the damaged file, when pebble said which; else empty.
	File string
	// Err is pebble's error, or the panic or fatal error turned into one.
	Err error
}

func (e *CorruptError) Error() string {
	s := fmt.Sprintf("cache: the database in %s is damaged: %s", e.Dir, e.Op)
	if e.File != "" {
		s += " (file " + e.File + ")"
	}
	// Pebble joins its corruption errors with a carrier of details whose
	// text says nothing.
	msg := strings.ReplaceAll(e.Err.Error(), "\n<corruption detail carrier>", "")
	return s + ": " + msg
}

// Is makes a CorruptError match page.ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == page.ErrCorrupt }

// Unwrap returns pebble's error.
func (e *CorruptError) Unwrap() error { return e.Err }

// Errors of the store. A damaged file is a *CorruptError, and a page that
// fails its checksum an error matching page.ErrCorruptPage; these are the
// others.
var (
	// ErrInvalidOptions is wrapped by every option OpenPebble refuses, and
	// by a write of a page of the wrong size; the message names the option
	// and the allowed values. It is page.ErrInvalidOptions, the one value
	// every layer's refused options wrap.
	ErrInvalidOptions = page.ErrInvalidOptions

	// ErrPageNotFound means the store has never been given the page.
	ErrPageNotFound = errors.New("cache: page not found")

	// ErrClosed is returned by a store used after Close.
	ErrClosed = errors.New("cache: store closed")

	// ErrBadFormat means a record the store keeps about the database (its
	// page size, its identity) has an unknown form.
	ErrBadFormat = errors.New("cache: unknown store format")
)
