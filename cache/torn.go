package cache

import "fmt"

// TornPages is how page writes are protected against a torn write (a
// crash that leaves part of a page old and part new):
//
//   - TornPagesFullPageWrites, PostgreSQL's full_page_writes: the first
//     change to a page after a checkpoint logs the whole page in the redo
//     record (a full-page image), and redo restores the image instead of
//     redoing the change.
//   - TornPagesDoublewrite, InnoDB's doublewrite buffer (buf0dblwr.cc):
//     every batch of page writes is first written to a doublewrite file
//     of DoublewriteSlots page slots, sequentially, and synced; then the
//     pages are written in place, and the store is synced before the
//     slots are reused. Recovery restores a page whose store copy fails
//     its checksum from its doublewrite copy, before redo
//     (doublewrite.go).
//
// The store writes a page atomically (a pebble key), so here neither
// protects anything: each costs what it costs a real engine (the images'
// redo bytes; the doublewrite batches' writes and syncs, and a store sync
// a batch), metered so that reports and the simulator can price it.
// TornPagesNone, the default, pays nothing.
type TornPages uint8

// Torn-page protections.
const (
	TornPagesNone TornPages = iota
	TornPagesFullPageWrites
	TornPagesDoublewrite
)

var tornNames = [...]string{"none", "full-page-writes", "doublewrite"}

func (t TornPages) String() string {
	if int(t) < len(tornNames) {
		return tornNames[t]
	}
	return fmt.Sprintf("TornPages(%d)", uint8(t))
}

// Set parses a name (String's), for flags.
func (t *TornPages) Set(s string) error {
	for i, n := range tornNames {
		if s == n {
			*t = TornPages(i)
			return nil
		}
	}
	return fmt.Errorf("%w: torn-page protection %q: want none, full-page-writes or doublewrite", ErrInvalidOptions, s)
}
