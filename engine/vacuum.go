package engine

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/enginelab/enginelab/heap"
)

// Vacuum of versioned heap tables: PostgreSQL's lazy vacuum
// (access/heap/vacuumlazy.c) and autovacuum's trigger, for the tables
// Options.HeapVersions makes.
//
// What a pass does, page by page: it prunes the page whatever its free
// space (heap_page_prune, as lazy_scan_prune does), so every HOT chain's
// versions dead to every snapshot go, the root redirected to the first
// one still needed; it counts the versions left that are dead (a row's
// chain keeps the last version of each HOT chain, whose ctid names the
// next chain: see heap.Heap.SetKeepChainTails) and the live ones
// (reltuples); and it sets the page's visibility-map bits when every
// tuple on it is visible to all (visibilitymap_set).
//
// What it does not do (a departure): PostgreSQL's vacuum then removes the
// index entries of LP_DEAD line pointers (ambulkdelete) and makes the
// pointers LP_UNUSED in a second heap pass. Here an index names only a
// row's chain head (one primary entry per key), and pruning never makes a
// head dead while the row has a later version, so no index entry names a
// dead line pointer: there is nothing for the index pass to remove until
// chains are shortened (the primary and row-pointer entries repointed
// past a dead prefix, and the old roots then set dead and, once no
// walker can hold the old head, unused), which is not built.
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
	// (kept chain tails) and LiveTuples the others (reltuples).
	TuplesRemoved, DeadTuples, LiveTuples int
	// IndexEntriesRemoved counts index entries removed: always 0 until
	// chains are shortened (see above).
	IndexEntriesRemoved int
}

// Vacuum is one pass of PostgreSQL's lazy vacuum over t's heap (see
// above): each page is pruned, its dead and live versions counted, and
// its visibility-map bits set when all its tuples are visible to every
// snapshot, all below the horizon (the oldest transaction any running
// transaction or open view may still see as running). Its work is
// charged to m (nil: none) and to the meter's Vacuum counters. A table
// that keeps no versions is left alone.
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
	for no := uint32(1); no < hw; no++ {
		res, err := t.heap.Prune(m, no, horizon, cs)
		if errors.Is(err, heap.ErrRowNotFound) {
			continue // not a heap page (the map's or the free space map's)
		}
		if err != nil {
			return st, fmt.Errorf("engine: vacuum %s: %w", t.info.def.Name, err)
		}
		st.PagesScanned++
		if res.Pruned+res.Redirected+res.Dead+res.Unused > 0 {
			st.PagesPruned++
			st.TuplesRemoved += res.Pruned
		}
		lps, _, err := t.heap.PageVersions(m, no)
		if err != nil {
			return st, fmt.Errorf("engine: vacuum %s: %w", t.info.def.Name, err)
		}
		for _, lp := range lps {
			if lp.State != "normal" {
				continue
			}
			vs, err := heap.StateForVacuum(lp.Header, horizon, cs)
			if err != nil {
				return st, fmt.Errorf("engine: vacuum %s: %w", t.info.def.Name, err)
			}
			switch vs {
			case heap.TupleDead:
				st.DeadTuples++
			case heap.TupleLive, heap.TupleDeleteInProgress:
				st.LiveTuples++
			}
		}
		mv, err := t.heap.MarkVisible(m, no, horizon, cs, false)
		if err != nil {
			return st, fmt.Errorf("engine: vacuum %s: %w", t.info.def.Name, err)
		}
		if mv.Bits&heap.VMAllVisible != 0 {
			st.PagesAllVisible++
		}
	}
	// The dead versions counted before the pass were pruned or are
	// kept tails now; those made during it count toward the next one.
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
