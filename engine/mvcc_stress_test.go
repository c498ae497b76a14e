package engine

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
)

// TestMVCCStress moves money between accounts of a clustered table from
// several goroutines, each transfer deleting one account's row and
// inserting it again (over its own delete-mark) with the new balance, and
// updating the other's indexed balance, while RepeatableRead and
// ReadCommitted readers sum the balances through the primary key and,
// index-only, through the balance index, and the background purge removes
// what no view needs. Every snapshot sums to the total with every account
// present; at the end purge leaves no mark and every index agrees with the
// table.
func TestMVCCStress(t *testing.T) {
	const accounts, workers, transfers, readers, reads = 8, 4, 60, 2, 40
	db, err := Open(&Options{Options: cache.Options{PoolSize: 8 << 20}, LockTimeout: 10 * time.Second})
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, PurgeBackground, db.Options().Purge)
	tb, err := db.CreateTable(Table{Name: "account",
		Columns: []Column{{Name: "id", Type: TypeInt}, {Name: "balance", Type: TypeInt},
			{Name: "owner", Type: TypeVarchar, Length: 40}},
		PrimaryKey: []string{"id"},
		Indexes:    []Index{{Name: "by_balance", Columns: []string{"balance"}}}})
	require.NoError(t, err)
	tx := db.Begin(nil)
	for id := int64(0); id < accounts; id++ {
		require.NoError(t, tx.Insert(tb, Row{Int(id), Int(1000), Str(fmt.Sprint("owner ", id))}))
	}
	require.NoError(t, tx.Commit())
	const total = accounts * 1000

	transfer := func(r *rand.Rand) error {
		a, b := int64(r.IntN(accounts)), int64(r.IntN(accounts))
		if a == b {
			return nil
		}
		amount := int64(1 + r.IntN(50))
		tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
		lo, hi := min(a, b), max(a, b)
		rows := map[int64]Row{}
		for _, id := range []int64{lo, hi} {
			row, found, err := tx.GetForUpdate(tb, []Value{Int(id)}, nil)
			if err != nil {
				return err
			}
			if !found {
				_ = tx.Rollback()
				return fmt.Errorf("account %d missing", id)
			}
			rows[id] = Row{row[0], row[1], Str(string(row[2].B))}
		}
		if err := tx.Delete(tb, []Value{Int(a)}); err != nil {
			return err
		}
		ra := rows[a]
		if err := tx.Insert(tb, Row{ra[0], Int(ra[1].I - amount), ra[2]}); err != nil {
			return err
		}
		if err := tx.Update(tb, []Value{Int(b)}, []Set{{Column: "balance", Value: Int(rows[b][1].I + amount)}}); err != nil {
			return err
		}
		return tx.Commit()
	}
	sum := func(iso Isolation) error {
		tx := db.BeginTx(nil, TxOptions{Isolation: iso})
		defer tx.Rollback()
		for _, o := range []ScanOptions{{}, {Index: "by_balance", Columns: []string{"balance"}}} {
			cur, err := tx.Scan(tb, o)
			if err != nil {
				return err
			}
			s, n := int64(0), 0
			for cur.Next() {
				s += cur.Row()[1].I
				n++
			}
			if err := cur.Close(); err != nil {
				return err
			}
			if iso == RepeatableRead && (s != total || n != accounts) {
				return fmt.Errorf("%s scan of %q: %d accounts summing to %d", iso, o.Index, n, s)
			}
		}
		return nil
	}

	var wg sync.WaitGroup
	errs := make(chan error, workers+readers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(19, uint64(w)))
			for done := 0; done < transfers; {
				err := transfer(r)
				switch {
				case err == nil:
					done++
				case Retryable(err):
				default:
					errs <- err
					return
				}
			}
		}()
	}
	for rd := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range reads {
				iso := RepeatableRead
				if (i+rd)%4 == 3 {
					iso = ReadCommitted
				}
				if err := sum(iso); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, db.PurgeErr())
	_, err = db.PurgeStep(nil, 0)
	require.NoError(t, err)
	require.Zero(t, db.PurgeLag())
	c, s, ca, sa := marks(t, tb)
	require.Equal(t, [4]int{0, 0, accounts, accounts}, [4]int{c, s, ca, sa})
	mvccCheck(t, db, tb)
	require.NoError(t, sum(RepeatableRead))
	require.Positive(t, db.Purge().Records+db.Purge().SecondaryRemoved)
}
