package page

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Every page, whatever its kind, starts with the same 32-byte header. The
// layers above own everything after it.
//
//	0        4      5      6        8           12          16               24               32
//	+--------+------+------+--------+-----------+-----------+----------------+----------------+
//	| CRC32C | kind | flag | unused |  space    |  page no  |      LSN       |    reserved    |
//	|  (4B)  | (1B) | (1B) |  (2B)  |   (4B)    |   (4B)    |      (8B)      |      (8B)      |
//	+--------+------+------+--------+-----------+-----------+----------------+----------------+
//	|<- checksum covers bytes 4 .. page size ----------------------------------------------->|
//
// All integers are little-endian. The checksum is CRC-32C (Castagnoli, the
// polynomial with hardware support on x86 and arm64) over every byte after
// the checksum field. It is set when the pool writes a page out and verified
// when a page is read in; in memory it is stale and nobody reads it.
//
// The header repeats the page's own id so that a page written to the wrong
// place (a misdirected write) is caught on read as corruption, not served as
// another page's data. The LSN is the log sequence number of the last
// logged change to the page; the engine sets it, the pool only reads it (to
// honour the write-ahead rule and to remember the newest LSN of each page).
const (
	offChecksum = 0
	offKind     = 4
	offFlags    = 5
	offSpace    = 8
	offPageNo   = 12
	offLSN      = 16

	// ChecksumSize is the checksum field's size: bytes [0, ChecksumSize).
	ChecksumSize = 4
	// KindOffset is where the kind byte sits (redo writes it there).
	KindOffset = offKind
	// LSNOffset is where the 8-byte LSN sits.
	LSNOffset = offLSN

	// HeaderSize is the number of bytes at the start of every page that
	// belong to the cache packages. Page contents start at HeaderSize.
	HeaderSize = 32
)

// Page sizes. A database has one page size, fixed when it is created.
const (
	MinSize     = 4 << 10
	MaxSize     = 64 << 10
	DefaultSize = 16 << 10
)

// Kind says what a page holds. It is stored in the header so that a page can
// be identified without knowing who owns it, and so that meters can count
// page requests by kind.
type Kind uint8

// Page kinds. KindFree is the zero value: a page that was never formatted or
// that sits on a space's free list.
const (
	KindFree Kind = iota
	KindMeta
	KindBTreeInner
	KindBTreeLeaf
	KindHeap
	KindFSM
	// KindUndo pages hold undo logs and the rollback segment (the engine's
	// system space).
	KindUndo
	// KindVM pages hold a heap's visibility map (package heap), KindXact
	// pages a commit log (package heap/xact).
	KindVM
	KindXact
	// NumKinds bounds the kinds; meters keep one counter per kind.
	NumKinds
)

var kindNames = [NumKinds]string{"free", "meta", "btree-inner", "btree-leaf", "heap", "fsm", "undo", "vm", "xact"}

func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ID names a page: the space it belongs to and its number in that space.
// Page 0 of every space is the space's meta page.
type ID struct {
	Space uint32
	Page  uint32
}

func (id ID) String() string { return fmt.Sprintf("%d:%d", id.Space, id.Page) }

// castagnoli is the CRC-32C table; crc32 uses the SSE4.2/ARMv8 instruction
// when the table is this one.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C returns the CRC-32C (Castagnoli) checksum of b: the checksum of
// every page header, and the one the redo log's frames and the store's
// MANIFEST witness use too.
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// ValidSize reports whether size is a power of two in [MinSize, MaxSize].
func ValidSize(size int) bool {
	return size >= MinSize && size <= MaxSize && size&(size-1) == 0
}

// Init zeroes buf and writes a fresh header for page id of kind k.
func Init(buf []byte, id ID, k Kind) {
	clear(buf)
	buf[offKind] = byte(k)
	binary.LittleEndian.PutUint32(buf[offSpace:], id.Space)
	binary.LittleEndian.PutUint32(buf[offPageNo:], id.Page)
}

// KindOf returns the kind stored in a page's header.
func KindOf(buf []byte) Kind { return Kind(buf[offKind]) }

// SetKind changes the kind stored in a page's header.
func SetKind(buf []byte, k Kind) { buf[offKind] = byte(k) }

// LSN returns the LSN stored in a page's header.
func LSN(buf []byte) uint64 { return binary.LittleEndian.Uint64(buf[offLSN:]) }

// SetLSN stores lsn in a page's header. Callers hold the page's
// exclusive latch.
func SetLSN(buf []byte, lsn uint64) { binary.LittleEndian.PutUint64(buf[offLSN:], lsn) }

// IDOf returns the page id stored in a page's header.
func IDOf(buf []byte) ID {
	return ID{
		Space: binary.LittleEndian.Uint32(buf[offSpace:]),
		Page:  binary.LittleEndian.Uint32(buf[offPageNo:]),
	}
}

// Seal computes the page's checksum and stores it in the header. The
// pool seals a private copy of a page just before writing it out.
func Seal(buf []byte) {
	binary.LittleEndian.PutUint32(buf[offChecksum:], CRC32C(buf[offChecksum+4:]))
}

// Verify checks that buf is a well-formed image of page id: the right
// length, a checksum that holds and a header naming id. Any failure is an
// error that matches ErrCorruptPage and names the page.
func Verify(id ID, buf []byte, pageSize int) error {
	if len(buf) != pageSize {
		return fmt.Errorf("%w: page %s is %d bytes, want %d", ErrCorruptPage, id, len(buf), pageSize)
	}
	want := binary.LittleEndian.Uint32(buf[offChecksum:])
	if got := CRC32C(buf[offChecksum+4:]); got != want {
		return fmt.Errorf("%w: page %s checksum %08x, header says %08x", ErrCorruptPage, id, got, want)
	}
	if got := IDOf(buf); got != id {
		return fmt.Errorf("%w: page %s holds the header of page %s", ErrCorruptPage, id, got)
	}
	return nil
}
