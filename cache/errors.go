package cache

import "errors"

// ErrCorrupt means the database's files are damaged: a file of the
// pebble store (sstable, MANIFEST, WAL, OPTIONS, marker) truncated,
// altered or missing, pebble failing on what it read (an error, a panic, a
// fatal error), a page that fails its checksum, a redo record that does
// not decode. Every such error matches it with errors.Is, and so do the
// more specific kinds (ErrCorruptPage, ErrCorruptLog, and those of the
// packages above: btree.ErrCorruptTree, engine.ErrCorruptRow and
// engine.ErrCorruptKey).
//
// Damage is never answered with data: the call that meets it fails.
var ErrCorrupt = errors.New("cache: the database's files are damaged")

// NewCorruptKind returns a new sentinel error with the given text that
// matches ErrCorrupt with errors.Is and keeps its own identity: callers
// match either the kind or the class.
func NewCorruptKind(text string) error { return &corruptKind{text} }

type corruptKind struct{ text string }

func (e *corruptKind) Error() string { return e.text }

// Is makes every kind match the class.
func (e *corruptKind) Is(target error) bool { return target == ErrCorrupt }

// Configuration errors: returned by NewPool, OpenPebbleStore and friends
// before any work starts.
var (
	// ErrInvalidConfig is wrapped by every rejected option; the message
	// names the option and the allowed values.
	ErrInvalidConfig = errors.New("cache: invalid configuration")
)

// Errors from reading and writing pages.
var (
	// ErrCorruptPage means a page read from the store failed its checksum,
	// had the wrong size or carried another page's header. The message names
	// the page. Corrupt bytes are never returned as data.
	ErrCorruptPage = NewCorruptKind("cache: corrupt page")

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
