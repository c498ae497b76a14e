package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
)

// TestHeapVersionsCheckBesideWriters runs Check of a versioned table over
// and over while writers insert, update (HOT, non-HOT through an indexed
// column, and rows grown past their page), delete and roll back their own
// rows, and the background vacuum runs. In the first half of the writers'
// work every Check must pass: a page, an FSM byte or a map bit caught
// between a writer's changes, a B+tree split under the walk, or a version
// a transaction is still writing is no damage. Then a row no writer
// touches, the last in primary key order, loses its entry in by_u; in the
// second half every Check must report exactly that row's missing entry.
// Run it with -race.
func TestHeapVersionsCheckBesideWriters(t *testing.T) {
	const (
		writers = 3
		opsEach = 300 // transactions per writer, half before the damage
		fence   = int64(1) << 40
	)
	seed := uint64(11)
	t.Logf("seed %d", seed)
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db, err := Open(&Options{HeapVersions: HeapVersionsOn, Options: cache.Options{PoolSize: 8 << 20}})
			require.NoError(t, err)
			defer func() { require.NoError(t, db.Close()) }()
			tb, err := db.CreateTable(hv2Table(org))
			require.NoError(t, err)
			fenceRow := Row{Int(fence), Int(fence), Int(7), Int(0), Null}
			hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, fenceRow) })
			check := func() error {
				tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
				err := tb.Check(tx)
				return errors.Join(err, tx.Commit())
			}
			require.NoError(t, check())

			var half, all sync.WaitGroup
			damaged := make(chan struct{})
			errs := make([]error, writers)
			for w := range writers {
				half.Add(1)
				all.Add(1)
				go func() {
					defer all.Done()
					halfDone := false
					defer func() {
						if !halfDone {
							half.Done()
						}
					}()
					rng := rand.New(rand.NewPCG(seed, uint64(w)))
					next := int64(w+1) * 1_000_000
					var live []int64
					for op := range opsEach {
						if op == opsEach/2 {
							halfDone = true
							half.Done()
							<-damaged
						}
						abort := rng.IntN(10) == 0
						tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
						var err error
						switch k := rng.IntN(10); {
						case k < 3 || len(live) == 0:
							next++
							err = tx.Insert(tb, Row{Int(next), Int(next), Int(rng.Int64N(50)), Int(0), Null})
							if !abort {
								live = append(live, next)
							}
						case k < 5:
							id := live[rng.IntN(len(live))]
							err = tx.Update(tb, []Value{Int(id)}, []Set{{Column: "u", Value: Int(rng.Int64N(50))}})
						case k < 7:
							id := live[rng.IntN(len(live))]
							err = tx.Update(tb, []Value{Int(id)}, []Set{{Column: "w", Value: Int(int64(op))}})
						case k < 8:
							id := live[rng.IntN(len(live))]
							pad := strings.Repeat(string(rune('a'+rng.IntN(26))), rng.IntN(1500))
							err = tx.Update(tb, []Value{Int(id)}, []Set{{Column: "pad", Value: Str(pad)}})
						default:
							i := rng.IntN(len(live))
							err = tx.Delete(tb, []Value{Int(live[i])})
							if !abort {
								live = append(live[:i], live[i+1:]...)
							}
						}
						if err == nil {
							if abort {
								err = tx.Rollback()
							} else {
								err = tx.Commit()
							}
						}
						if err != nil {
							errs[w] = fmt.Errorf("writer %d, op %d: %w", w, op, err)
							return
						}
					}
				}()
			}
			fail := func(format string, args ...any) {
				select {
				case <-damaged:
				default:
					close(damaged)
				}
				all.Wait()
				t.Fatalf(format, args...)
			}
			halfDone := make(chan struct{})
			go func() { half.Wait(); close(halfDone) }()
			checks := 0
			for running := true; running; checks++ {
				select {
				case <-halfDone:
					running = false // one more, after the first half
				default:
				}
				if err := check(); err != nil {
					fail("check %d beside the writers, before the damage: %v", checks, err)
				}
			}
			if err := errors.Join(errs...); err != nil {
				fail("%v", err)
			}

			// The damage: the fence row's by_u entry goes.
			by := tb.ixs[2]
			require.Equal(t, "by_u", by.name)
			tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			_, root, _, _, found, err := tx.versionedFind(tb, appendKey(nil, tb.info.def.Columns, tb.info.pk, fenceRow), tx.latestSnap(), true)
			require.NoError(t, err)
			require.True(t, found)
			require.NoError(t, tx.Commit())
			require.NoError(t, by.tree.Delete(nil, tb.entryKey(nil, by, fenceRow, appendKey(nil, tb.info.def.Columns, tb.info.pk, fenceRow), root)))
			wantMsg := "index by_u: key (u=7; "
			close(damaged)

			allDone := make(chan struct{})
			go func() { all.Wait(); close(allDone) }()
			damagedChecks := 0
			for running := true; running; damagedChecks++ {
				select {
				case <-allDone:
					running = false
				default:
				}
				err := check()
				if !errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), wantMsg) || !strings.Contains(err.Error(), "no entry for the row") ||
					!strings.Contains(err.Error(), fmt.Sprintf("primary key id=%d", fence)) {
					all.Wait()
					t.Fatalf("check %d beside the writers, after the damage: %v", damagedChecks, err)
				}
			}
			require.NoError(t, errors.Join(errs...))
			t.Logf("%d checks before the damage, %d after, beside %d writers of %d transactions each", checks, damagedChecks, writers, opsEach)
		})
	}
}

// crashReopen leaves what a crash of db at this instant would leave on fs
// (its synced bytes), closes db, opens that image with opts and returns
// the reopened database, closed when t ends, and its table name.
func crashReopen(t *testing.T, fs *vfs.MemFS, opts *Options, db *DB, name string) (*DB, *TableHandle) {
	t.Helper()
	image := fs.CrashClone(vfs.CrashCloneCfg{})
	_ = db.Close()
	opts.FS = image
	db, err := Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	tb, err := db.Table(name)
	require.NoError(t, err)
	return db, tb
}
