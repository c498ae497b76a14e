package cache

import "errors"

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
	ErrCorruptPage = errors.New("cache: corrupt page")

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
