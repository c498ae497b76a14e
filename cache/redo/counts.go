package redo

// Counts are the log's counters for one caller (a transaction, a test):
// plain integers, owned by one goroutine at a time. Append and SyncTo take
// a *Counts (nil: count nothing); cache.Meter embeds one, so that a
// meter's LogBytes and friends are these.
type Counts struct {
	// LogRecords and LogBytes count redo records appended (one per
	// mini-transaction that changed a page or carried a note) and their
	// bytes, frame headers included.
	LogRecords int64
	LogBytes   int64
	// LogSyncs counts log syncs this caller performed; LogSyncWaits the
	// times it waited for a sync another caller was performing (group
	// commit).
	LogSyncs     int64
	LogSyncWaits int64
	// FullPageImages and FullPageImageBytes count the page images logged
	// by full-page writes (cache.TornPagesFullPageWrites), their bytes
	// included in LogBytes.
	FullPageImages     int64
	FullPageImageBytes int64
}
