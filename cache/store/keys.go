package store

import "github.com/cockroachdb/pebble/v2"

// Raw key access, for tests and tools that reach under the page API.
// Every call crosses the store's boundary with pebble (see PebbleStore):
// damage is a *CorruptError, never a panic, and a store that has failed
// refuses the call. Page keys (PageKey) are the store's own: write pages
// with WritePage.

// Get reads key and hands its value to use, which runs inside the boundary
// (the value is pebble's, valid only during the call) and must only copy
// or inspect it. found is false for a key that is absent. op names what
// the caller is doing, for messages.
func (s *PebbleStore) Get(op string, key []byte, use func(v []byte)) (found bool, err error) {
	return s.get(op, key, use)
}

// Set writes value under key: synced if sync (durable when Set returns,
// with every write before it), else durable after a later sync.
func (s *PebbleStore) Set(op string, key, value []byte, sync bool) error {
	o := pebble.NoSync
	if sync {
		o = pebble.Sync
	}
	return s.set(op, key, value, o)
}

// DeleteRange deletes the keys in [start, end), unsynced.
func (s *PebbleStore) DeleteRange(op string, start, end []byte) error {
	return s.call(op, func() error { return s.db.DeleteRange(start, end, pebble.NoSync) })
}

// Iter is a pebble iterator whose every step crosses the store's
// boundary, so that what the caller does between steps (redo, in Scan)
// runs outside it: a panic there is the caller's, not pebble's. A step
// that fails ends the iteration (false); Error then returns the failure.
type Iter struct {
	st  *PebbleStore
	op  string
	it  *pebble.Iterator
	err error
}

// NewIter opens an iterator over the keys in [lower, upper). op names what
// the caller is doing, for messages ("scan redo log"). The caller closes
// it.
func (s *PebbleStore) NewIter(op string, lower, upper []byte) (*Iter, error) {
	i := &Iter{st: s, op: op}
	err := s.call(op, func() error {
		var err error
		i.it, err = s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
		return err
	})
	if err != nil {
		return nil, err
	}
	return i, nil
}

// step runs one move of the iterator through the boundary.
func (i *Iter) step(move func() bool) bool {
	if i.err != nil {
		return false
	}
	ok := false
	i.err = i.st.call(i.op, func() error {
		ok = move()
		return nil
	})
	return ok && i.err == nil
}

// First moves to the first key and reports whether there is one.
func (i *Iter) First() bool { return i.step(i.it.First) }

// Next moves to the next key and reports whether there is one.
func (i *Iter) Next() bool { return i.step(i.it.Next) }

// SeekLT moves to the last key before key and reports whether there is
// one.
func (i *Iter) SeekLT(key []byte) bool { return i.step(func() bool { return i.it.SeekLT(key) }) }

// Key returns the current key, valid until the next step.
func (i *Iter) Key() []byte { return i.it.Key() }

// Value returns the current value, valid until the next step.
func (i *Iter) Value() ([]byte, error) {
	var v []byte
	err := i.st.call(i.op, func() error {
		var err error
		v, err = i.it.ValueAndErr()
		return err
	})
	return v, err
}

// Error returns the error that ended the iteration, if any.
func (i *Iter) Error() error {
	if i.err != nil {
		return i.err
	}
	return i.st.call(i.op, i.it.Error)
}

// Close closes the iterator (through the boundary even after a failure:
// pebble's iterator is released either way, unless pebble's own state
// is in doubt).
func (i *Iter) Close() error {
	if i.st.abandoned.Load() {
		return i.st.Err()
	}
	return i.st.enter(i.op, i.it.Close)
}

// HasPages reports whether the store holds any page. The redo log asks
// when it finds no log files: a database with pages but no log has lost
// its log, while one without pages is new.
func (s *PebbleStore) HasPages(op string) (bool, error) {
	it, err := s.NewIter(op, []byte{prefixPage}, []byte{prefixPage + 1})
	if err != nil {
		return false, err
	}
	found := it.First()
	err = it.Error()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return found, err
}
