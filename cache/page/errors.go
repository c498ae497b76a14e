package page

import "errors"

// ErrCorrupt means the database's files are damaged: a file of the
// pebble store (sstable, MANIFEST, WAL, OPTIONS, marker) truncated,
// altered or missing, pebble failing on what it read (an error, a panic, a
// fatal error), a page that fails its checksum, a redo record that does
// not decode. Every such error matches it with errors.Is, and so do the
// more specific kinds (ErrCorruptPage here, redo.ErrCorruptLog, and those
// of the packages above: btree.ErrCorruptTree, engine.ErrCorruptRow and
// engine.ErrCorruptKey). What the store finds is a *store.CorruptError,
// which names the database's directory and, when pebble said, the file.
//
// Damage is never answered with data: the call that meets it fails. What
// gets through is what nothing can see: a WAL cut short or deleted, whose
// lost writes read as a crash a moment earlier (see store.PebbleStore).
//
// The class lives here, in the package every other one imports, so that
// each layer can declare its own kinds (NewCorruptKind) without importing
// the layers that report the others.
var ErrCorrupt = errors.New("cache: the database's files are damaged")

// NewCorruptKind returns a new sentinel error with the given text that
// matches ErrCorrupt with errors.Is and keeps its own identity: callers
// match either the kind or the class.
func NewCorruptKind(text string) error { return &corruptKind{text} }

type corruptKind struct{ text string }

func (e *corruptKind) Error() string { return e.text }

// Is makes every kind match the class.
func (e *corruptKind) Is(target error) bool { return target == ErrCorrupt }

// ErrCorruptPage means a page image failed its checksum, had the wrong
// size or carried another page's header (Verify). The message names the
// page. Corrupt bytes are never returned as data.
var ErrCorruptPage = NewCorruptKind("cache: corrupt page")

// ErrInvalidOptions is wrapped by every option a library object refuses:
// a pool's (cache.Options), a store's (store.PebbleOptions), a tier
// backend's, a database's (engine.Options). Each package that validates
// options exports this same value under the same name (cache.ErrInvalidOptions,
// store.ErrInvalidOptions, tier.ErrInvalidOptions,
// engine.ErrInvalidOptions), so that errors.Is against any of them tells a
// refused option from a failure, whichever layer refused it.
//
// Its text names no package: the package that refuses an option puts its
// own name in front ("cache: invalid options: ...", "engine: invalid
// options: ...") and the option and its allowed values after. Refusals
// come before anything is opened.
var ErrInvalidOptions = errors.New("invalid options")
