package cache

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

// Configuration errors: returned by NewPool, OpenPebbleStore and friends
// before any work starts.
var (
	// ErrInvalidConfig is wrapped by every rejected option; the message
	// names the option and the allowed values.
	ErrInvalidConfig = errors.New("cache: invalid configuration")
)

// Errors from reading and writing pages.
var (
	// ErrPageNotFound means the store has never been given the page.
	ErrPageNotFound = errors.New("cache: page not found")

	// ErrClosed is returned by a store or pool used after Close.
	ErrClosed = errors.New("cache: closed")
)

// Errors from the buffer pool.
var (
	// ErrPoolExhausted means every frame is pinned (or promised to a
	// reservation), so a page cannot be brought in. Callers about to make a
	// structural change reserve frames first, so that this error strikes
	// before the change starts, never half way through it.
	ErrPoolExhausted = errors.New("cache: buffer pool exhausted: every frame is pinned or reserved")
)

// Errors from space management.
var (
	// ErrSpaceNotFound means the space has no meta page.
	ErrSpaceNotFound = errors.New("cache: space not found")

	// ErrSpaceExists means CreateSpace was asked for a space that exists.
	ErrSpaceExists = errors.New("cache: space already exists")

	// ErrBadFormat means a meta page carries an unknown magic number or
	// format version.
	ErrBadFormat = errors.New("cache: unknown space format")
)
