package redo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// The segment files and the frames in them; doc.go draws both.

const (
	// DefaultCapacity is the log's default size on disk: MariaDB 10.5's
	// default innodb_log_file_size, 96 MiB.
	DefaultCapacity = 96 << 20
	// MinCapacity is the smallest capacity allowed: eight segments of
	// MinSegmentSize.
	MinCapacity = 8 * MinSegmentSize
	// MinSegmentSize and MaxSegmentSize bound a segment: a capacity of 8
	// MiB or more gets segments of capacity/8 clamped to [1 MiB, 64 MiB];
	// a smaller one (tests, small trials) capacity/8, at least
	// MinSegmentSize.
	MinSegmentSize = 32 << 10
	MaxSegmentSize = 64 << 20

	// segmentHeaderSize is the segment header's size; it is the first
	// bytes of the segment's LSN range.
	segmentHeaderSize = 32
	// frameHeaderSize is a frame's header: its length and checksum.
	frameHeaderSize = 8

	segmentMagic   = 0x52_4c_45_45 // "EELR" little-endian: EnginElab Redo
	segmentVersion = 1

	// logDirName is the log's directory inside the database directory.
	logDirName = "redo"
	// segmentNameLen is the length of a segment file's name: its first LSN
	// in hexadecimal, 16 digits, so that names sort in LSN order.
	segmentNameLen = 16
	// tmpSuffix marks a segment file being created: it is renamed to its
	// name once it has its full size and is synced.
	tmpSuffix = ".tmp"
	// readChunk is how much of a segment a scan reads at a time.
	readChunk = 256 << 10
)

// FirstLSN is the LSN of the first record of a new log: the first
// segment starts at LSN 0 with its header. 0 means "never logged" in a
// page header.
const FirstLSN = segmentHeaderSize

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// segmentSize returns the size of the segments of a log of the given
// capacity (see MinSegmentSize), a multiple of 4 KiB.
func segmentSize(capacity int64) uint64 {
	s := min(capacity/8, MaxSegmentSize)
	if capacity >= 8<<20 {
		s = max(s, 1<<20)
	}
	s = max(s, MinSegmentSize)
	return uint64(s) &^ 4095
}

// segmentName is the file name of the segment starting at start.
func segmentName(start uint64) string {
	return fmt.Sprintf("%016x", start)
}

// parseSegmentName returns the first LSN a segment file's name gives.
func parseSegmentName(name string) (uint64, bool) {
	if len(name) != segmentNameLen {
		return 0, false
	}
	for _, c := range name {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(name, 16, 64)
	return v, err == nil
}

// segHeader is a segment's header: its first LSN, its size in bytes
// (header included; the LSN range is [start, start+size)) and the chain
// value it starts from (the checksum of the last frame before it, 0 for
// the first segment of a log).
type segHeader struct {
	start, size uint64
	chain       uint32
}

func (h segHeader) end() uint64 { return h.start + h.size }

func (h segHeader) appendTo(dst []byte) []byte {
	var b [segmentHeaderSize]byte
	binary.LittleEndian.PutUint32(b[0:], segmentMagic)
	binary.LittleEndian.PutUint16(b[4:], segmentVersion)
	binary.LittleEndian.PutUint64(b[8:], h.start)
	binary.LittleEndian.PutUint64(b[16:], h.size)
	binary.LittleEndian.PutUint32(b[24:], h.chain)
	binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], castagnoli))
	return append(dst, b[:]...)
}

// parseSegHeader decodes a header; ok is false unless it verifies.
func parseSegHeader(b []byte) (h segHeader, ok bool) {
	if len(b) < segmentHeaderSize ||
		binary.LittleEndian.Uint32(b[0:]) != segmentMagic ||
		binary.LittleEndian.Uint16(b[4:]) != segmentVersion ||
		binary.LittleEndian.Uint32(b[28:]) != crc32.Checksum(b[:28], castagnoli) {
		return h, false
	}
	h = segHeader{start: binary.LittleEndian.Uint64(b[8:]), size: binary.LittleEndian.Uint64(b[16:]),
		chain: binary.LittleEndian.Uint32(b[24:])}
	if h.size < segmentHeaderSize+frameHeaderSize || h.start+h.size < h.start {
		return h, false
	}
	return h, true
}

// frameSum is a frame's checksum: CRC-32C of its body, then of its LSN,
// its length and the chain value before it (the previous frame's
// checksum). bodySum is the body's own CRC-32C, computed before the LSN
// is known, outside the log's mutex. t is scratch space, the caller's so
// that it is not allocated at every call (crc32.Update's slice escapes).
func frameSum(t *[16]byte, bodySum uint32, lsn uint64, length, prev uint32) uint32 {
	binary.LittleEndian.PutUint64(t[0:], lsn)
	binary.LittleEndian.PutUint32(t[8:], length)
	binary.LittleEndian.PutUint32(t[12:], prev)
	return crc32.Update(bodySum, castagnoli, t[:])
}

// segReader reads one segment file through a window of readChunk bytes
// (more when a frame is larger), so that a scan holds at most a chunk and
// its largest frame, not the segment.
type segReader struct {
	f    vfs.File
	sum  [16]byte // frameSum's scratch
	buf  []byte
	base int64 // file offset of buf[0]
	n    int   // valid bytes in buf
}

// get returns the file's bytes [off, off+n), or ok false if the file ends
// first. The slice is valid until the next call.
func (r *segReader) get(off int64, n int) (b []byte, ok bool, err error) {
	if off >= r.base && off+int64(n) <= r.base+int64(r.n) {
		return r.buf[off-r.base:][:n], true, nil
	}
	size := max(n, readChunk)
	if cap(r.buf) < size {
		r.buf = make([]byte, size)
	}
	r.buf = r.buf[:size]
	m, err := r.f.ReadAt(r.buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		r.n = 0
		return nil, false, err
	}
	r.base, r.n = off, m
	if m < n {
		return nil, false, nil
	}
	return r.buf[:n], true, nil
}

// scanResult is where a read of the log stopped: the LSN past the last
// valid frame, the segment holding it, and the chain value there.
type scanResult struct {
	end   uint64
	seg   segHeader
	chain uint32
}

// segFiles is a listing of the log's directory: the segment files by
// first LSN.
type segFiles map[uint64]bool

// readHeader reads and verifies the header of the segment file that
// starts at start; ok is false if it is missing, short, does not verify or
// names another LSN (a recycled file whose header is from its last cycle).
func (l *Log) readHeader(start uint64) (h segHeader, ok bool, err error) {
	h, ok, err = l.readAnyHeader(start)
	return h, ok && h.start == start, err
}

// readAnyHeader reads and verifies the header of the file named for
// segment start, whichever segment it names: a recycled file's names the
// segment it held last. ok is false if it is short or does not verify.
func (l *Log) readAnyHeader(start uint64) (h segHeader, ok bool, err error) {
	f, err := l.fs.Open(l.segPath(start))
	if err != nil {
		return h, false, fmt.Errorf("cache: read redo log segment %s: %w", l.segPath(start), err)
	}
	defer f.Close()
	var b [segmentHeaderSize]byte
	n, err := f.ReadAt(b[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return h, false, fmt.Errorf("cache: read redo log segment %s: %w", l.segPath(start), err)
	}
	h, ok = parseSegHeader(b[:n])
	return h, ok, nil
}

// stale reports whether the file named for segment start is a recycled
// file left behind the log's end: its header verifies but names another
// segment, so none of its frames verifies at this name's LSNs (their
// checksums cover the LSN they were written at). Segment files are
// recycled to names ahead of the end and taken in order, so this happens
// only when a new segment's range stepped over a spare's name: after the
// capacity changed, and the segment size with it, or past a segment made
// larger for one frame larger than a segment (segmentFile now removes
// such a spare as the log passes it; a log written before that may hold
// some). A file whose header does not verify at all is not stale but
// damaged.
func (l *Log) stale(start uint64) (bool, error) {
	h, ok, err := l.readAnyHeader(start)
	return ok && h.start != start, err
}

// read reads the log from the segment h (whose header verified), calling
// fn for every frame at or after from, and follows the chain into the
// segments after it: at the first frame that does not verify (a bad
// checksum, a zero or impossible length, a frame from an earlier cycle of
// a recycled file, whose LSN is not the one its place gives) it tries the
// next segment, which continues the log only if its header names the
// segment's LSN and the chain value reached. Otherwise that frame is the
// end of the log.
func (l *Log) read(files segFiles, h segHeader, from uint64, fn func(lsn uint64, body []byte) error) (scanResult, error) {
	r := &segReader{}
	chain := h.chain
	for {
		f, err := l.fs.Open(l.segPath(h.start))
		if err != nil {
			return scanResult{}, fmt.Errorf("cache: read redo log segment %s: %w", l.segPath(h.start), err)
		}
		r.f, r.base, r.n = f, 0, 0
		off := int64(segmentHeaderSize)
		for off+frameHeaderSize <= int64(h.size) {
			fh, ok, err := r.get(off, frameHeaderSize)
			if err != nil {
				f.Close()
				return scanResult{}, fmt.Errorf("cache: read redo log segment %s: %w", l.segPath(h.start), err)
			}
			if !ok {
				break
			}
			n := binary.LittleEndian.Uint32(fh)
			sum := binary.LittleEndian.Uint32(fh[4:])
			if n < frameHeaderSize || off+int64(n) > int64(h.size) {
				break
			}
			fr, ok, err := r.get(off, int(n))
			if err != nil {
				f.Close()
				return scanResult{}, fmt.Errorf("cache: read redo log segment %s: %w", l.segPath(h.start), err)
			}
			if !ok {
				break
			}
			body := fr[frameHeaderSize:]
			lsn := h.start + uint64(off)
			if frameSum(&r.sum, crc32.Checksum(body, castagnoli), lsn, n, chain) != sum {
				break
			}
			if lsn >= from && fn != nil {
				if err := fn(lsn, body); err != nil {
					f.Close()
					return scanResult{}, err
				}
			}
			chain = sum
			off += int64(n)
		}
		f.Close()
		res := scanResult{end: h.start + uint64(off), seg: h, chain: chain}
		next := h.end()
		if !files[next] {
			return res, nil
		}
		nh, ok, err := l.readHeader(next)
		if err != nil {
			return scanResult{}, err
		}
		if !ok || nh.chain != chain {
			return res, nil
		}
		h = nh
	}
}

// listSegments lists the segment files in the log's directory.
func (l *Log) listSegments() (segFiles, error) {
	names, err := l.fs.List(l.dir)
	if err != nil {
		return nil, fmt.Errorf("cache: list redo log directory %s: %w", l.dir, err)
	}
	files := make(segFiles)
	for _, n := range names {
		if s, ok := parseSegmentName(n); ok {
			files[s] = true
		}
	}
	return files, nil
}

func (l *Log) segPath(start uint64) string { return l.fs.PathJoin(l.dir, segmentName(start)) }
