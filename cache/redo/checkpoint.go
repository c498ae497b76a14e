package redo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache/page"
)

// The control file. The layer above (the engine) keeps one checkpoint
// record: where recovery starts redoing, which records it must keep. The
// log stores it, opaque, in its own small file, redo/checkpoint, in two
// alternating slots, as InnoDB writes its two checkpoint blocks into the
// first log file (LOG_CHECKPOINT_1 and LOG_CHECKPOINT_2, at 512 and 1536
// of ib_logfile0): a save overwrites the older slot and syncs, so a crash
// in the middle of it leaves the other, and the newer slot that verifies
// wins. doc.go draws the layout.

const (
	controlName     = "checkpoint"
	controlSlotSize = 512
	controlMagic    = 0x43_4c_45_45 // "EELC" little-endian
	controlVersion  = 1
	// MaxCheckpointRecord is the largest record SaveCheckpoint stores.
	MaxCheckpointRecord = controlSlotSize - 32
)

// controlSlot is one slot of the control file.
type controlSlot struct {
	number uint64 // 0 for the slot written when the log was created
	logEnd uint64 // the log's durable end when the slot was written
	rec    []byte // the layer above's record; nil: none saved yet
}

func (s *controlSlot) encode() []byte {
	b := make([]byte, controlSlotSize)
	binary.LittleEndian.PutUint32(b[0:], controlMagic)
	binary.LittleEndian.PutUint16(b[4:], controlVersion)
	if s.rec != nil {
		binary.LittleEndian.PutUint16(b[6:], 1)
	}
	binary.LittleEndian.PutUint64(b[8:], s.number)
	binary.LittleEndian.PutUint64(b[16:], s.logEnd)
	binary.LittleEndian.PutUint32(b[24:], uint32(len(s.rec)))
	copy(b[28:], s.rec)
	binary.LittleEndian.PutUint32(b[controlSlotSize-4:], crc32.Checksum(b[:controlSlotSize-4], castagnoli))
	return b
}

func decodeSlot(b []byte) (controlSlot, bool) {
	var s controlSlot
	if len(b) < controlSlotSize ||
		binary.LittleEndian.Uint32(b[0:]) != controlMagic ||
		binary.LittleEndian.Uint16(b[4:]) != controlVersion ||
		binary.LittleEndian.Uint32(b[controlSlotSize-4:]) != crc32.Checksum(b[:controlSlotSize-4], castagnoli) {
		return s, false
	}
	n := binary.LittleEndian.Uint32(b[24:])
	if n > MaxCheckpointRecord {
		return s, false
	}
	s.number = binary.LittleEndian.Uint64(b[8:])
	s.logEnd = binary.LittleEndian.Uint64(b[16:])
	if binary.LittleEndian.Uint16(b[6:])&1 != 0 {
		s.rec = append([]byte{}, b[28:28+n]...)
	}
	return s, true
}

func (l *Log) controlPath() string { return l.fs.PathJoin(l.dir, controlName) }

// readControl reads the control file and returns its newer slot that
// verifies. found is false if there is no control file.
func (l *Log) readControl() (s controlSlot, found bool, err error) {
	path := l.controlPath()
	f, err := l.fs.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, false, nil
	}
	if err != nil {
		return s, false, fmt.Errorf("cache: open redo log control file %s: %w", path, err)
	}
	defer f.Close()
	b := make([]byte, 2*controlSlotSize)
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return s, false, fmt.Errorf("cache: read redo log control file %s: %w", path, err)
	}
	b = b[:n]
	a, okA := decodeSlot(b)
	var c controlSlot
	okC := false
	if len(b) >= 2*controlSlotSize {
		c, okC = decodeSlot(b[controlSlotSize:])
	}
	switch {
	case okA && okC:
		if c.number > a.number {
			return c, true, nil
		}
		return a, true, nil
	case okA:
		return a, true, nil
	case okC:
		return c, true, nil
	}
	return s, true, fmt.Errorf("%w: control file %s: neither checkpoint slot verifies", ErrCorruptLog, path)
}

// createControl writes a new log's control file: slot 0 says no
// checkpoint was saved and the log ends at FirstLSN. It is written under
// a temporary name and renamed once synced, so that a crash leaves either
// no control file (a log never created) or a whole one.
func (l *Log) createControl() error {
	path := l.controlPath()
	tmp := path + tmpSuffix
	f, err := l.fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("cache: create redo log control file %s: %w", tmp, err)
	}
	slot := controlSlot{number: 0, logEnd: FirstLSN}
	buf := append(slot.encode(), make([]byte, controlSlotSize)...)
	if _, err := f.WriteAt(buf, 0); err != nil {
		f.Close()
		return fmt.Errorf("cache: write redo log control file %s: %w", tmp, err)
	}
	if !l.opts.Volatile {
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("cache: sync redo log control file %s: %w", tmp, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cache: close redo log control file %s: %w", tmp, err)
	}
	if err := l.fs.Rename(tmp, path); err != nil {
		return fmt.Errorf("cache: create redo log control file %s: %w", path, err)
	}
	return l.syncDir(l.dir)
}

// SaveCheckpoint stores rec, the layer above's checkpoint record (at most
// MaxCheckpointRecord bytes; an empty one reads back as nil), durably in
// the control file. The log is written and synced first, and the slot
// records its durable end: a checkpoint never names an LSN past the
// durable log, which after a crash would let new records reuse LSNs below
// it, and Open refuses a log that ends before that end.
func (l *Log) SaveCheckpoint(rec []byte) error {
	if len(rec) > MaxCheckpointRecord {
		return fmt.Errorf("cache: save checkpoint: %w: a record of %d bytes, at most %d", page.ErrInvalidOptions, len(rec), MaxCheckpointRecord)
	}
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	end, err := l.writeSyncLocked()
	if err != nil {
		return fmt.Errorf("cache: save checkpoint: %w", err)
	}
	l.mu.Lock()
	l.durable = max(l.durable, end)
	l.stats.FlushSyncs++
	l.publishLocked()
	l.mu.Unlock()
	path := l.controlPath()
	if l.ctl == nil {
		if l.ctl, err = l.fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified); err != nil {
			return fmt.Errorf("cache: save checkpoint: open %s: %w", path, err)
		}
	}
	slot := controlSlot{number: l.ctlNumber + 1, logEnd: end, rec: append([]byte{}, rec...)}
	if len(rec) == 0 {
		slot.rec = nil
	}
	if _, err := l.ctl.WriteAt(slot.encode(), int64(slot.number%2)*controlSlotSize); err != nil {
		return fmt.Errorf("cache: save checkpoint: write %s: %w", path, err)
	}
	if !l.opts.Volatile {
		if err := l.ctl.SyncData(); err != nil {
			return fmt.Errorf("cache: save checkpoint: sync %s: %w", path, err)
		}
	}
	l.ctlNumber = slot.number
	l.mu.Lock()
	l.ckptRec = slot.rec
	l.mu.Unlock()
	return nil
}

// LoadCheckpoint returns the last saved checkpoint record, or nil.
func (l *Log) LoadCheckpoint() ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ckptRec == nil {
		return nil, nil
	}
	return append([]byte{}, l.ckptRec...), nil
}
