// Package memcached is a tier.Tier over one or more memcached servers:
// Waffle Grid's remote buffer pool. Pages are spread over the servers by
// the client's key hash, one page per item, keyed by tier.Key.String(),
// with no expiry; the servers decide what to evict, and may be shared with
// other databases (the keys carry the database's id and open epoch).
//
//	t, err := memcached.New([]string{"127.0.0.1:11211"}, &memcached.Options{
//		PageSize: page.DefaultSize,  // required: each server must hold one
//	})
//	if errors.Is(err, tier.ErrTooLarge) { ... } // memcached -I too small
//	defer t.Close()
//
// New asks every server for its settings and refuses one whose items
// cannot hold a page with its key and item header. Every call waits at
// most about Options.Timeout per network step, so a dead or hung server
// costs its callers that much and an error, which the pool counts as a
// miss. Stats are this client's: Items and Bytes are not known (-1), and
// Capacity is the servers' memory limits summed at New.
//
// A Tier is safe for concurrent use; keep Options.MaxIdleConns at about
// the number of goroutines that use it. Close closes the idle connections
// and leaves the pages on the servers (no later open can read them: its
// epoch differs); no call may be in flight during it.
//
// Tests start private servers with the memcachedtest subpackage.
package memcached
