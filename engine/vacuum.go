package engine

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

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
//     whose entries name line pointers (the primary index, and the
//     secondaries of the row-pointer organization) is scanned whole and
//     the entries naming a collected pointer are removed, each removal a
//     logged B+tree delete.
//  3. The second heap pass (lazy_vacuum_heap_rel): the collected pointers
//     are set unused (heap.Heap.VacuumDeadSlots, logged in one
//     mini-transaction with the page's FSM byte), so that inserts reuse
//     them, and the pages' visibility-map bits are set when they can be.
//
// The secondaries of the organization whose entries carry the primary
// key name no line pointer: vacuum leaves them alone, so the entry of a
// row's old values, or of a deleted row, stays (readers skip it: the
// version they find does not give it back). Removing it would need to
// know that no version not dead to all has those values, and to exclude
// a concurrent update that sets them again and finds the entry there.
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
	if w := db.vacuumer; w != nil && t.vac.due() {
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
		lps, _, err := t.heap.PageVersions(m, no)
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
		// The index pass (lazy_vacuum_all_indexes, ambulkdelete).
		for _, ix := range t.ixs {
			n, err := db.bulkDelete(m, t, ix, deadSlots)
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

// bulkDelete is btbulkdelete for ix: it scans the whole index and
// removes every entry naming a dead line pointer of dead (page to slots),
// each in a mini-transaction of its own, logged as any B+tree delete.
// An index whose entries carry the primary key names no line pointer: it
// is left alone (see above). The entries are removed after the scan, so
// that the iterator never meets its own deletes. It returns how many it
// removed.
func (db *DB) bulkDelete(m *Meter, t *TableHandle, ix *index, dead map[uint32][]uint16) (int, error) {
	if !ix.primary && ix.carry != carryPtr {
		return 0, nil
	}
	var doomed [][]byte
	it := ix.tree.NewIter(m, nil)
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
	}
	return n, nil
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
func (db *DB) startVacuumer() {
	w := &vacuumer{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	db.vacuumer = w
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
	if w := db.vacuumer; w != nil {
		close(w.stop)
		<-w.done
	}
}

// vacuumFields are DB's vacuum fields (embedded).
type vacuumFields struct {
	vacuumer   *vacuumer
	vacStepMu  sync.Mutex // one VacuumStep at a time
	vacMeterMu sync.Mutex // guards vacMeter and vacErr
	vacMeter   Meter
	vacErr     error
}
