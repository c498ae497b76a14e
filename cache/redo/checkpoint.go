package redo

import (
	"fmt"

	"github.com/enginelab/enginelab/cache/store"
)

// The layer above (the engine) keeps one checkpoint record: where recovery
// starts redoing, which records it must keep. The log stores it, opaque,
// in the store's metadata (key 'm' "ckpt"), because saving it must make
// the log durable up to it (see SaveCheckpoint).

// checkpointKey holds the engine's checkpoint record, beside the page-size
// record under the metadata prefix.
var checkpointKey = []byte{store.PrefixMeta, 'c', 'k', 'p', 't'}

// SaveCheckpoint stores rec, the layer above's checkpoint record, durably.
// The log buffer is written first, so the synced write makes every record
// before it durable too: a checkpoint never names an LSN past the stored
// log, which after a crash would let new records reuse LSNs below it.
func (l *Log) SaveCheckpoint(rec []byte) error {
	if err := l.write(); err != nil {
		return err
	}
	if err := l.st.Set("save checkpoint", checkpointKey, rec, !l.opts.Volatile); err != nil {
		return fmt.Errorf("cache: save checkpoint: %w", err)
	}
	l.mu.Lock()
	l.durable = max(l.durable, l.written)
	l.mu.Unlock()
	return nil
}

// LoadCheckpoint returns the last saved checkpoint record, or nil.
func (l *Log) LoadCheckpoint() ([]byte, error) {
	var rec []byte
	found, err := l.st.Get("load checkpoint", checkpointKey, func(v []byte) { rec = append([]byte{}, v...) })
	if err != nil {
		return nil, fmt.Errorf("cache: load checkpoint: %w", err)
	}
	if !found {
		return nil, nil
	}
	return rec, nil
}
