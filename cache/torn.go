package cache

import "fmt"

// TornPages is how page writes are protected against a torn write (a
// crash that leaves part of a page old and part new):
//
//   - TornPagesFullPageWrites, PostgreSQL's full_page_writes: the first
//     change to a page after a checkpoint logs the whole page in the redo
//     record (a full-page image), and redo restores the image instead of
//     redoing the change.
//
// The store writes a page atomically (a pebble key), so here it protects
// nothing: it costs what it costs a real engine (the images' redo bytes),
// metered so that reports and the simulator can price it. TornPagesNone,
// the default, pays nothing. (InnoDB's doublewrite buffer is the other
// choice a real engine makes; it is not modeled yet.)
type TornPages uint8

// Torn-page protections.
const (
	TornPagesNone TornPages = iota
	TornPagesFullPageWrites
)

var tornNames = [...]string{"none", "full-page-writes"}

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
	return fmt.Errorf("%w: torn-page protection %q: want none or full-page-writes", ErrInvalidOptions, s)
}
