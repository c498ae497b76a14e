package lock_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine/lock"
)

// Two transactions share a row; the second then asks for it exclusively
// and, the first holding on, times out.
func Example() {
	clock := cache.RealClock{}
	lm := lock.NewManager(clock, lock.RealParker{Clock: clock}, time.Millisecond)
	var c1, c2 lock.Counters
	t1, t2 := &lock.Owner{ID: 1}, &lock.Owner{ID: 2}
	row := lock.RowKey(7, []byte("customer 42"))

	fmt.Println(lm.LockAs(&c1, t1, row, lock.Shared))
	fmt.Println(lm.LockAs(&c2, t2, row, lock.Shared))
	err := lm.LockAs(&c2, t2, row, lock.Exclusive)
	fmt.Println(errors.Is(err, lock.ErrTimeout), c2.LockRequests, c2.LockWaits, c2.LockTimeouts)

	lm.Release(t2) // t2 rolls back
	lm.Release(t1) // t1 commits
	fmt.Println(lm.HeldBy(t1), lm.HeldBy(t2))
	// Output:
	// <nil>
	// <nil>
	// true 2 1 1
	// 0 0
}
