package engine

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/engine/lock"
	"github.com/enginelab/enginelab/heap"
)

// Vacuum of versioned heap tables: PostgreSQL's lazy vacuum
// (access/heap/vacuumlazy.c) and autovacuum's trigger, for the tables
// Options.HeapVersions makes.
//
// A pass has three parts, as lazy vacuum's:
//
//  1. The first heap pass (lazy_scan_heap, lazy_scan_prune): each page is
//     pruned whatever its free space (heap_page_prune), so every HOT
//     chain's versions dead to every snapshot go: a chain's root is
//     redirected to its first version still needed, or becomes a dead
//     line pointer (LP_DEAD) when the whole chain is dead, and the dead
//     heap-only versions' slots become unused. The pass collects the
//     page's dead line pointers (dead_items), counts the live versions
//     (reltuples) and sets the page's visibility-map bits when every
//     tuple on it is visible to all and it has no dead line pointer
//     (visibilitymap_set).
//  2. The index pass (lazy_vacuum_all_indexes, ambulkdelete): every index
//     is scanned whole; in those whose entries name line pointers (the
//     primary index, and the secondaries of the row-pointer organization)
//     the entries naming a collected pointer are removed, each removal a
//     logged B+tree delete.
//  3. The second heap pass (lazy_vacuum_heap_rel): the collected pointers
//     are set unused (heap.Heap.VacuumDeadSlots, logged in one
//     mini-transaction with the page's FSM byte), so that inserts reuse
//     them, and the pages' visibility-map bits are set when they can be.
//
// The secondaries of the organization whose entries carry the primary
// key name no line pointer: in them the index pass removes the entries
// of the rows that lost a primary entry in this pass that no version
// left on the row's chains gives back (an older version's values, or a
// deleted row's), under a conditional row lock (bulkDeleteByKey).
//
// Check of the table (checkversions.go) holds vacuum off for its whole
// run (vacState.mu): an entry it read could otherwise name a pointer the
// second heap pass then frees.
//
// Autovacuum. A table is due when the versions its updates and deletes
// left since its last vacuum reach autovacuum_vacuum_threshold (50) plus
// autovacuum_vacuum_scale_factor (0.2) times its live tuples at the last
// vacuum (reltuples, 0 before the first one), as relation_needs_vacanalyze
// decides. Options.Vacuum says who runs it: a goroutine woken when a
// table becomes due (VacuumBackground, the real runtime's default), or
// DB.VacuumStep, which the simulator's scheduler runs as a background
// actor beside purge (VacuumManual, with any other runtime).

// VacuumMode says who runs autovacuum (Options.Vacuum).
type VacuumMode uint8

// Vacuum modes.
const (
	// VacuumDefault is VacuumBackground with the real runtime and
	// VacuumManual with another.
	VacuumDefault VacuumMode = iota
	// VacuumBackground vacuums the tables that are due on a goroutine of
	// its own (PostgreSQL's autovacuum worker), on the database's vacuum
	// meter (DB.VacuumMeter), woken by the update or delete that makes a
	// table due. Close stops it.
	VacuumBackground
	// VacuumManual vacuums only when DB.Vacuum or DB.VacuumStep is
	// called: the simulator's scheduled vacuum actor, and tests that count
	// exactly.
	VacuumManual
)

func (v VacuumMode) String() string {
	switch v {
	case VacuumDefault:
		return "default"
	case VacuumBackground:
		return "background"
	case VacuumManual:
		return "manual"
	}
	return fmt.Sprintf("VacuumMode(%d)", uint8(v))
}

// Autovacuum's trigger, PostgreSQL's defaults.
const (
	AutovacuumThreshold   = 50  // autovacuum_vacuum_threshold
	AutovacuumScaleFactor = 0.2 // autovacuum_vacuum_scale_factor
)

// vacState is a versioned table's vacuum bookkeeping (pgstat's
// n_dead_tup and pg_class.reltuples).
type vacState struct {
	mu sync.Mutex // one vacuum of the table at a time
	// dead counts the versions updates and deletes left since the last
	// vacuum; reltuples the live tuples the last vacuum found.
	dead, reltuples atomic.Int64
}

// due reports whether autovacuum should vacuum the table.
func (v *vacState) due() bool {
	return float64(v.dead.Load()) >= AutovacuumThreshold+AutovacuumScaleFactor*float64(v.reltuples.Load())
}

// noteDead counts a version an update or delete of t left, and wakes the
// background vacuum when t becomes due.
func (db *DB) noteDead(t *TableHandle) {
	if t.vac == nil {
		return
	}
	t.vac.dead.Add(1)
	if w := db.vacuumer.Load(); w != nil && t.vac.due() {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// VacuumStats is what Vacuum did.
type VacuumStats struct {
	// PagesScanned counts the heap pages examined, PagesAllVisible those
	// marked all-visible (now or before), PagesPruned those a prune
	// changed.
	PagesScanned, PagesAllVisible, PagesPruned int
	// TuplesRemoved counts the versions whose storage the prunes freed;
	// DeadTuples the versions dead to all still on the pages afterwards
	// (none but those a prune could not reach) and LiveTuples the others
	// (reltuples).
	TuplesRemoved, DeadTuples, LiveTuples int
	// DeadItems counts the dead line pointers the first heap pass found
	// (lazy_scan_heap's dead_items), IndexEntriesRemoved the index
	// entries naming them that the index pass removed, and
	// LinePointersFreed those the second heap pass set unused.
	DeadItems, IndexEntriesRemoved, LinePointersFreed int
}

// Vacuum is one pass of PostgreSQL's lazy vacuum over t (see above),
// below the horizon (the oldest transaction any running transaction or
// open view may still see as running): the first heap pass prunes each
// page, counts its dead and live versions, collects its dead line
// pointers, and sets its visibility-map bits when all its tuples are
// visible to every snapshot and it has no dead line pointer; the index
// pass removes the entries naming a collected pointer from the primary
// index and every secondary that carries row pointers; the second heap
// pass sets the collected pointers unused and then sets the visibility
// bits of their pages when it can. Its work is charged to m (nil: none)
// and to the meter's Vacuum counters. A table that keeps no versions is
// left alone.
func (db *DB) Vacuum(m *Meter, t *TableHandle) (VacuumStats, error) {
	var st VacuumStats
	if !t.versioned() {
		return st, nil
	}
	if m == nil {
		m = new(Meter)
	}
	t.vac.mu.Lock()
	defer t.vac.mu.Unlock()
	deadBefore := t.vac.dead.Load()
	horizon := db.vacuumHorizon()
	cs := db.clog.Load()
	hw := t.heap.HighWater()
	fail := func(err error) (VacuumStats, error) {
		return st, fmt.Errorf("engine: vacuum %s: %w", t.info.def.Name, err)
	}
	markVisible := func(no uint32) error {
		mv, err := t.heap.MarkVisible(m, no, horizon, cs, false)
		if err == nil && mv.Bits&heap.VMAllVisible != 0 {
			st.PagesAllVisible++
		}
		return err
	}
	// The first heap pass (lazy_scan_heap).
	var deadPages []uint32
	var lps []heap.LinePointer // one page's line pointers, reused
	deadSlots := map[uint32][]uint16{}
	for no := uint32(1); no < hw; no++ {
		res, err := t.heap.Prune(m, no, horizon, cs)
		if errors.Is(err, heap.ErrRowNotFound) {
			continue // not a heap page (the map's or the free space map's)
		}
		if err != nil {
			return fail(err)
		}
		st.PagesScanned++
		if res.Pruned+res.Redirected+res.Dead+res.Unused > 0 {
			st.PagesPruned++
			st.TuplesRemoved += res.Pruned
		}
		lps, _, err = t.heap.AppendPageVersions(lps, m, no)
		if err != nil {
			return fail(err)
		}
		for i, lp := range lps {
			if lp.State == "dead" {
				deadSlots[no] = append(deadSlots[no], uint16(i))
				st.DeadItems++
				continue
			}
			if lp.State != "normal" {
				continue
			}
			vs, err := heap.StateForVacuum(lp.Header, horizon, cs)
			if err != nil {
				return fail(err)
			}
			switch vs {
			case heap.TupleDead:
				st.DeadTuples++
			case heap.TupleLive, heap.TupleDeleteInProgress:
				st.LiveTuples++
			}
		}
		if len(deadSlots[no]) > 0 {
			deadPages = append(deadPages, no)
			continue // not all-visible until the second pass
		}
		if err := markVisible(no); err != nil {
			return fail(err)
		}
	}
	if len(deadPages) > 0 {
		// The index pass (lazy_vacuum_all_indexes, ambulkdelete): the
		// primary index first, whose removed entries name the rows
		// whose secondaries that carry the primary key may hold an
		// entry no version gives back any more.
		rows := map[string]bool{}
		for _, ix := range t.ixs {
			var n int
			var err error
			if ix.primary || ix.carry == carryPtr {
				n, err = db.bulkDelete(m, t, ix, deadSlots, rows)
			} else {
				n, err = db.bulkDeleteByKey(m, t, ix, rows)
			}
			st.IndexEntriesRemoved += n
			if err != nil {
				return fail(err)
			}
		}
		// The second heap pass (lazy_vacuum_heap_rel): no entry names
		// the dead line pointers any more, so they may be reused.
		for _, no := range deadPages {
			n, err := t.heap.VacuumDeadSlots(m, no, deadSlots[no])
			st.LinePointersFreed += n
			if err != nil {
				return fail(err)
			}
			if err := markVisible(no); err != nil {
				return fail(err)
			}
		}
	}
	// The dead versions counted before the pass were pruned or are
	// dead line pointers gone now; those made during it count toward
	// the next one.
	t.vac.dead.Add(-deadBefore)
	t.vac.reltuples.Store(int64(st.LiveTuples))
	m.VacuumRuns++
	m.VacuumPages += int64(st.PagesScanned)
	m.VacuumPagesPruned += int64(st.PagesPruned)
	m.VacuumTuplesRemoved += int64(st.TuplesRemoved)
	m.VacuumDeadTuples += int64(st.DeadTuples)
	m.VacuumIndexEntriesRemoved += int64(st.IndexEntriesRemoved)
	return st, nil
}

// bulkDelete is btbulkdelete for ix, the primary index or a secondary
// whose entries carry row pointers: it scans the whole index and removes
// every entry naming a dead line pointer of dead (page to slots), each
// in a mini-transaction of its own, logged as any B+tree delete. The
// entries are removed after the scan, so that the iterator never meets
// its own deletes. The primary keys of the primary entries removed are
// added to rows. It returns how many entries it removed.
func (db *DB) bulkDelete(m *Meter, t *TableHandle, ix *index, dead map[uint32][]uint16, rows map[string]bool) (int, error) {
	var doomed [][]byte
	// Killed entries too: a scan marked them, vacuum removes them.
	it := ix.tree.NewIter(m, &btree.IterOptions{Killed: true})
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) < heap.RowPtrSize {
			_ = it.Close()
			return 0, fmt.Errorf("%w: index %s entry of %d bytes", heap.ErrBadRowPtr, ix.name, len(k))
		}
		p, err := heap.DecodeRowPtr(k[len(k)-heap.RowPtrSize:])
		if err != nil {
			_ = it.Close()
			return 0, fmt.Errorf("index %s: %w", ix.name, err)
		}
		if slices.Contains(dead[p.Page], p.Slot) {
			doomed = append(doomed, append([]byte(nil), k...))
		}
	}
	if err := it.Close(); err != nil {
		return 0, fmt.Errorf("index %s: %w", ix.name, err)
	}
	n := 0
	for _, k := range doomed {
		if err := ix.tree.Delete(m, k); err != nil {
			return n, fmt.Errorf("index %s: %w", ix.name, err)
		}
		n++
		if ix.primary {
			rows[string(k[:len(k)-heap.RowPtrSize])] = true
		}
	}
	return n, nil
}

// vacuumOwnerID names the lock owner of vacuum's conditional row locks; its id
// is no transaction's (ids count up from 1).
const vacuumOwnerID = ^uint64(0)

// bulkDeleteByKey is the index pass for ix, a secondary whose entries
// carry the primary key and so name no line pointer: an entry of a row
// in rows (one that lost a primary entry in this pass, so a version of
// it died) is removed when no version left on the row's HOT chains gives
// it back (its values were an older version's, or the row's, deleted).
// The row lock is taken conditionally, as PostgreSQL's vacuum takes a
// cleanup lock (ConditionalLockBufferForCleanup): under it no
// transaction writes a version of the row, so none can find the entry
// there (an update setting the values back) while vacuum decides to
// remove it. A row whose lock is held is skipped: its entries stay until
// a later pass finds another of its versions dead, as do those of rows a
// crash made this pass forget; readers skip them.
func (db *DB) bulkDeleteByKey(m *Meter, t *TableHandle, ix *index, rows map[string]bool) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	cols := t.info.def.Columns
	row := make(Row, len(cols))
	var doomed [][]byte
	it := ix.tree.NewIter(m, &btree.IterOptions{Killed: true})
	for ok := it.First(); ok; ok = it.Next() {
		rest, _, err := decodeKeyInto(it.Key(), cols, ix.cols, row, nil)
		if err != nil {
			_ = it.Close()
			return 0, fmt.Errorf("index %s: %w", ix.name, err)
		}
		if rows[string(rest)] {
			doomed = append(doomed, append([]byte(nil), it.Key()...))
		}
	}
	if err := it.Close(); err != nil {
		return 0, fmt.Errorf("index %s: %w", ix.name, err)
	}
	prim := t.ixs[0]
	owner := &lock.Owner{ID: vacuumOwnerID}
	n := 0
	for _, k := range doomed {
		rest, _, err := decodeKeyInto(k, cols, ix.cols, row, nil)
		if err != nil {
			return n, fmt.Errorf("index %s: %w", ix.name, err)
		}
		pk := rest
		if !db.locks.TryLockAs(owner, lock.RowKey(t.entry.Primary, pk), lock.Exclusive) {
			continue
		}
		keep, err := db.versionGivesBack(m, t, prim, ix, pk, k)
		if err == nil && !keep {
			if err = ix.tree.Delete(m, k); err == nil {
				n++
			}
		}
		db.locks.Release(owner)
		if err != nil {
			return n, fmt.Errorf("index %s: %w", ix.name, err)
		}
	}
	return n, nil
}

// versionGivesBack reports whether a version on one of the HOT chains
// the primary entries of pk name gives back key, ix's entry.
func (db *DB) versionGivesBack(m *Meter, t *TableHandle, prim, ix *index, pk, key []byte) (bool, error) {
	hi := append(append([]byte(nil), pk...), bytes.Repeat([]byte{0xFF}, heap.RowPtrSize)...)
	var roots []heap.RowPtr
	it := prim.tree.NewIter(m, &btree.IterOptions{Lower: btree.Incl(pk), Upper: btree.Incl(hi)})
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) != len(pk)+heap.RowPtrSize {
			continue
		}
		r, err := heap.DecodeRowPtr(k[len(pk):])
		if err != nil {
			_ = it.Close()
			return false, err
		}
		roots = append(roots, r)
	}
	if err := it.Close(); err != nil {
		return false, err
	}
	cols := t.info.def.Columns
	for _, r := range roots {
		_, vs, err := t.heap.HotChain(m, r)
		if err != nil {
			return false, err
		}
		for _, v := range vs {
			row, err := decodeRow(v.Row, cols, nil)
			if err != nil {
				return false, err
			}
			if bytes.Equal(t.entryKey(nil, ix, row, pk, r), key) {
				return true, nil
			}
		}
	}
	return false, nil
}

// VacuumStep vacuums the versioned tables that are due (see Autovacuum
// above), at most max of them (0: no limit), in name order, and returns
// how many heap pages it vacuumed. Its work is charged to m (nil: the
// database's vacuum meter, VacuumMeter). One step runs at a time. It is
// the step the simulator schedules as its vacuum actor (VacuumManual).
func (db *DB) VacuumStep(m *Meter, max int) (int, error) {
	db.vacStepMu.Lock()
	defer db.vacStepMu.Unlock()
	own := m == nil
	if own {
		m = new(Meter)
	}
	pages, done := 0, 0
	var err error
	for _, name := range db.Tables() {
		if max > 0 && done >= max {
			break
		}
		t, terr := db.Table(name)
		if terr != nil {
			continue // dropped meanwhile
		}
		if !t.versioned() || !t.vac.due() {
			continue
		}
		st, verr := db.Vacuum(m, t)
		pages += st.PagesScanned
		done++
		if verr != nil {
			err = verr
			break
		}
	}
	if own {
		db.vacMeterMu.Lock()
		db.vacMeter.Add(m)
		db.vacMeterMu.Unlock()
	}
	return pages, err
}

// VacuumMeter returns a copy of the database's vacuum meter: the work of
// the vacuum steps given no meter (the background vacuum's).
func (db *DB) VacuumMeter() Meter {
	db.vacMeterMu.Lock()
	defer db.vacMeterMu.Unlock()
	return db.vacMeter.Clone()
}

// VacuumErr returns the last error the background vacuum met (nil: none).
func (db *DB) VacuumErr() error {
	db.vacMeterMu.Lock()
	defer db.vacMeterMu.Unlock()
	return db.vacErr
}

// vacuumer is the background vacuum goroutine (VacuumBackground).
type vacuumer struct {
	wake chan struct{} // a pending wake-up (buffer 1: wakes coalesce)
	stop chan struct{} // closed by Close
	done chan struct{} // closed when the goroutine has returned
}

// startVacuumer starts the background vacuum goroutine.
//
// It starts the goroutine once, with Options.Vacuum VacuumBackground; a
// later call does nothing. The callers are Open and CreateTable, never at
// once (Open has not returned the database yet; CreateTable holds db.mu).
func (db *DB) startVacuumer() {
	if db.opts.Vacuum != VacuumBackground || db.vacuumer.Load() != nil {
		return
	}
	w := &vacuumer{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	db.vacuumer.Store(w)
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-w.wake:
			}
			if _, err := db.VacuumStep(nil, 0); err != nil && !errors.Is(err, ErrClosed) {
				db.vacMeterMu.Lock()
				db.vacErr = err
				db.vacMeterMu.Unlock()
			}
			if h := testHookVacuumRound; h != nil {
				h(db)
			}
		}
	}()
}

// testHookVacuumRound, when set by a test, runs after each round of the
// background vacuum.
var testHookVacuumRound func(db *DB)

// stopVacuumer stops the background vacuum goroutine and waits for it.
func (db *DB) stopVacuumer() {
	if w := db.vacuumer.Load(); w != nil {
		close(w.stop)
		<-w.done
	}
}

// vacuumFields are DB's vacuum fields (embedded).
type vacuumFields struct {
	vacuumer   atomic.Pointer[vacuumer] // set once (startVacuumer)
	vacStepMu  sync.Mutex               // one VacuumStep at a time
	vacMeterMu sync.Mutex               // guards vacMeter and vacErr
	vacMeter   Meter
	vacErr     error
}
