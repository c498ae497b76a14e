package cache

import (
	"errors"

	"github.com/enginelab/enginelab/cache/page"
)

// Option errors: returned by NewPool and Options.Validate before any work
// starts.
var (
	// ErrInvalidOptions is wrapped by every rejected option; the message
	// names the option and the allowed values. It is page.ErrInvalidOptions,
	// the one value every layer's refused options wrap.
	ErrInvalidOptions = page.ErrInvalidOptions
)

// ErrClosed is returned by a pool used after Close.
var ErrClosed = errors.New("cache: closed")

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
