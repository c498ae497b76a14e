package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/store"
)

// The doublewrite buffer (TornPagesDoublewrite) is InnoDB's protection
// against torn page writes, as MariaDB 10.6 keeps it (buf0dblwr.cc,
// buf_dblwr_t): every batch of page writes is first copied into the
// doublewrite area, which is written sequentially and synced
// (flush_buffered_writes, then os_file_flush in
// flush_buffered_writes_completed); only then are the pages written in
// place, and once the batch's last in-place write is done the data files
// are synced (write_completed: fil_flush_file_spaces) before the area is
// reused. MariaDB's area is two blocks of 64 pages (an extent each) in the
// system tablespace, one batch of up to 128 pages at a time; MySQL 8.0.20
// moved it to files of its own (#ib_16384_0.dblwr, innodb_doublewrite_pages
// a batch). Here it is a file of its own, like MySQL's, with MariaDB's
// size: DoublewriteSlots pages.
//
// Every batch the pool writes goes through it: a page cleaner pass's LRU
// batch and flush-list batch, a flush for log space, a checkpoint's
// writes, and a single page written back by a fetch that evicts it (MySQL
// keeps a separate segment for single-page flushes; here they take the
// one area in turn). A batch bigger than the area is split.
//
// At Open, before redo, recovery reads the area: a page whose copy in the
// store fails its checksum while its doublewrite copy is sound is
// restored from the copy (buf_dblwr_t::recover), and redo then starts
// from a whole page.
//
// The store writes a page atomically (one pebble key), so a torn in-place
// write cannot happen here: the doublewrite buffer costs what it costs
// InnoDB (a sequential write of every batch, a sync of it, a store sync a
// batch) and protects nothing more. Its restore path is tested by damaging
// a store page directly.
//
// # The file
//
// DoublewriteFile in the database directory, on the store's filesystem
// (so an in-memory database's is in memory, and a crashable test
// filesystem crashes it with the rest). Its size is fixed: a 4 KiB
// header block and DoublewriteSlots page slots.
//
//	0                                  4096          4096+P       4096+128·P
//	+----------------------------------+-------------+-----+-------------+
//	| header: the last batch           |   slot 0    | ... |  slot 127   |
//	+----------------------------------+-------------+-----+-------------+
//
//	header (little-endian):
//	 0  magic "DBLW" (4B)   4  version (2B)   6  slots (2B)
//	 8  page size (4B)     12  pages in the batch, n (4B)
//	16  batch number (8B)  24  the batch's highest page LSN (8B)
//	32  n entries of 12B: space (4B), page (4B), the image's checksum (4B)
//	4092 CRC-32C of bytes [0, 4092)
//
// A batch is one write of the header and its n slots, from offset 0, and
// one sync (fdatasync). Slots past n hold older batches' pages and are
// not read.
//
// # Torn writes of the area itself
//
// The header is one 4 KiB block, written whole or not at all (the unit a
// filesystem and a drive write atomically, and the one pebble's crashable
// filesystem keeps or drops; a page of 16 KiB is four of them, which is
// why InnoDB needs a doublewrite buffer). A crash during a batch's write,
// before its sync, may keep any of its blocks and drop others: the header
// may name the new batch while some slots still hold older pages, or the
// reverse. No in-place write of that batch had begun (they wait for the
// sync), and the batch before it was synced in the store before the area
// was reused, so the store's copies of every page the header names are
// whole: recovery ignores a slot that does not hold the image the header
// names (InnoDB ignores a doublewrite page that fails its checksum). A
// header that fails its checksum, a file of the wrong size, and a slot
// that does not verify while the store's copy of its page is torn (the
// copy recovery needs) are damage: an error naming the file.

// Doublewrite geometry: MariaDB's two blocks of an extent each
// (buf_dblwr_t::block_size = FSP_EXTENT_SIZE).
const (
	DoublewriteBlockPages = ExtentPages
	DoublewriteSlots      = 2 * DoublewriteBlockPages
	// DoublewriteFile is the file's name in the database directory.
	DoublewriteFile = "doublewrite"
)

const (
	dwHeaderSize = 4096
	dwMagic      = 0x574c4244 // "DBLW" little-endian
	dwVersion    = 1
	dwEntrySize  = 12
	dwEntries    = 32
)

// ErrCorruptDoublewrite means the doublewrite file is damaged (not only
// torn by a crash during a batch's write). It matches page.ErrCorrupt.
var ErrCorruptDoublewrite = page.NewCorruptKind("cache: damaged doublewrite file")

// Doublewrite is the doublewrite file of a database (see above). One
// batch runs at a time: Write holds the area from the batch's write until
// its in-place writes are synced. It is safe for concurrent use.
type Doublewrite struct {
	fs       vfs.FS
	path     string
	pageSize int

	mu  sync.Mutex // one batch at a time; guards the fields below
	f   vfs.File
	seq uint64 // the last batch's number
	buf []byte // header and slots, the batch being written
}

// OpenDoublewrite opens the doublewrite file in dir on fs, for pages of
// pageSize bytes. If there is none it creates one when create is set, and
// otherwise returns nil: a database that never used a doublewrite buffer
// has nothing to recover from it. A file that is not a doublewrite file of
// this page size is damaged (ErrCorruptDoublewrite, naming the file).
func OpenDoublewrite(fsys vfs.FS, dir string, pageSize int, create bool) (*Doublewrite, error) {
	if !page.ValidSize(pageSize) {
		return nil, fmt.Errorf("cache: %w: doublewrite page size %d", ErrInvalidOptions, pageSize)
	}
	d := &Doublewrite{fs: fsys, path: fsys.PathJoin(dir, DoublewriteFile), pageSize: pageSize}
	// OpenReadWrite would create a missing file: look first.
	if _, err := fsys.Stat(d.path); errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil, nil
		}
		if err := d.create(dir); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("cache: open doublewrite file %s: %w", d.path, err)
	}
	f, err := fsys.OpenReadWrite(d.path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, fmt.Errorf("cache: open doublewrite file %s: %w", d.path, err)
	}
	d.f = f
	return d, nil
}

// size is the file's fixed size.
func (d *Doublewrite) size() int64 {
	return dwHeaderSize + int64(DoublewriteSlots)*int64(d.pageSize)
}

// create writes a new file, its header naming an empty batch 0, under a
// temporary name, syncs it and renames it, so that a crash leaves no file
// or a whole one.
func (d *Doublewrite) create(dir string) error {
	tmp := d.path + ".tmp"
	f, err := d.fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("cache: create doublewrite file %s: %w", tmp, err)
	}
	buf := make([]byte, d.size())
	d.encodeHeader(buf[:dwHeaderSize], 0, nil, nil, 0)
	if _, err := f.WriteAt(buf, 0); err != nil {
		f.Close()
		return fmt.Errorf("cache: write doublewrite file %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("cache: sync doublewrite file %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cache: close doublewrite file %s: %w", tmp, err)
	}
	if err := d.fs.Rename(tmp, d.path); err != nil {
		return fmt.Errorf("cache: create doublewrite file %s: %w", d.path, err)
	}
	return syncDir(d.fs, dir)
}

// Path returns the file's path.
func (d *Doublewrite) Path() string { return d.path }

// Close closes the file. A batch must not be under way.
func (d *Doublewrite) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.f == nil {
		return nil
	}
	err := d.f.Close()
	d.f = nil
	return err
}

// Remove closes and deletes the file (and syncs its directory): a
// database that no longer writes through the buffer removes it once a
// checkpoint has made every page of its last batch durable in place, so
// that a later recovery never restores a page from a copy older than its
// in-place writes.
func (d *Doublewrite) Remove() error {
	if err := d.Close(); err != nil {
		return fmt.Errorf("cache: close doublewrite file %s: %w", d.path, err)
	}
	if err := d.fs.Remove(d.path); err != nil {
		return fmt.Errorf("cache: remove doublewrite file %s: %w", d.path, err)
	}
	return syncDir(d.fs, d.fs.PathDir(d.path))
}

// encodeHeader fills h (dwHeaderSize bytes) for batch seq of the given
// page ids and images' checksums.
func (d *Doublewrite) encodeHeader(h []byte, seq uint64, ids []page.ID, sums []uint32, lsn uint64) {
	clear(h)
	binary.LittleEndian.PutUint32(h[0:], dwMagic)
	binary.LittleEndian.PutUint16(h[4:], dwVersion)
	binary.LittleEndian.PutUint16(h[6:], DoublewriteSlots)
	binary.LittleEndian.PutUint32(h[8:], uint32(d.pageSize))
	binary.LittleEndian.PutUint32(h[12:], uint32(len(ids)))
	binary.LittleEndian.PutUint64(h[16:], seq)
	binary.LittleEndian.PutUint64(h[24:], lsn)
	for i, id := range ids {
		e := h[dwEntries+i*dwEntrySize:]
		binary.LittleEndian.PutUint32(e[0:], id.Space)
		binary.LittleEndian.PutUint32(e[4:], id.Page)
		binary.LittleEndian.PutUint32(e[8:], sums[i])
	}
	binary.LittleEndian.PutUint32(h[dwHeaderSize-4:], page.CRC32C(h[:dwHeaderSize-4]))
}

// dwBatch is a decoded header.
type dwBatch struct {
	seq, lsn uint64
	ids      []page.ID
	sums     []uint32
}

// decodeHeader checks and decodes a header; an error names what is wrong.
func (d *Doublewrite) decodeHeader(h []byte) (dwBatch, error) {
	var b dwBatch
	if got, want := page.CRC32C(h[:dwHeaderSize-4]), binary.LittleEndian.Uint32(h[dwHeaderSize-4:]); got != want {
		return b, fmt.Errorf("header checksum %08x, stored %08x", got, want)
	}
	if m := binary.LittleEndian.Uint32(h[0:]); m != dwMagic {
		return b, fmt.Errorf("magic %08x, want %08x", m, uint32(dwMagic))
	}
	if v := binary.LittleEndian.Uint16(h[4:]); v != dwVersion {
		return b, fmt.Errorf("version %d, want %d", v, dwVersion)
	}
	if s := binary.LittleEndian.Uint16(h[6:]); s != DoublewriteSlots {
		return b, fmt.Errorf("%d slots, want %d", s, DoublewriteSlots)
	}
	if ps := binary.LittleEndian.Uint32(h[8:]); int(ps) != d.pageSize {
		return b, fmt.Errorf("pages of %d bytes, the database's are %d", ps, d.pageSize)
	}
	n := binary.LittleEndian.Uint32(h[12:])
	if n > DoublewriteSlots {
		return b, fmt.Errorf("a batch of %d pages in %d slots", n, DoublewriteSlots)
	}
	b.seq = binary.LittleEndian.Uint64(h[16:])
	b.lsn = binary.LittleEndian.Uint64(h[24:])
	for i := range int(n) {
		e := h[dwEntries+i*dwEntrySize:]
		b.ids = append(b.ids, page.ID{Space: binary.LittleEndian.Uint32(e[0:]), Page: binary.LittleEndian.Uint32(e[4:])})
		b.sums = append(b.sums, binary.LittleEndian.Uint32(e[8:]))
	}
	return b, nil
}

// damaged is the error for a damaged file.
func (d *Doublewrite) damaged(format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrCorruptDoublewrite, d.path, fmt.Sprintf(format, args...))
}

// Write writes one batch: the sealed images of the pages ids (at most
// DoublewriteSlots; the caller splits a bigger batch) go to the file in
// one sequential write, which is synced; then inPlace runs, which writes
// the pages to the store and syncs it, while the area is still the
// batch's. m (not nil) counts the batch once its sync has returned
// (DoublewriteWrites, DoublewritePages, DoublewriteBytes,
// DoublewriteSyncs). If the write or its sync fails, inPlace does not run.
func (d *Doublewrite) Write(m *Meter, ids []page.ID, images [][]byte, inPlace func() error) error {
	if len(ids) != len(images) || len(ids) > DoublewriteSlots {
		return fmt.Errorf("cache: doublewrite batch of %d pages (%d images), at most %d", len(ids), len(images), DoublewriteSlots)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.f == nil {
		return fmt.Errorf("cache: doublewrite file %s: %w", d.path, ErrClosed)
	}
	if d.buf == nil {
		d.buf = make([]byte, d.size())
	}
	ps := d.pageSize
	sums := make([]uint32, len(ids))
	var lsn uint64
	for i, img := range images {
		copy(d.buf[dwHeaderSize+i*ps:], img)
		sums[i] = binary.LittleEndian.Uint32(img[0:page.ChecksumSize])
		lsn = max(lsn, page.LSN(img))
	}
	d.encodeHeader(d.buf[:dwHeaderSize], d.seq+1, ids, sums, lsn)
	if _, err := d.f.WriteAt(d.buf[:dwHeaderSize+len(ids)*ps], 0); err != nil {
		return fmt.Errorf("cache: write doublewrite file %s: %w", d.path, err)
	}
	if err := d.f.SyncData(); err != nil {
		return fmt.Errorf("cache: sync doublewrite file %s: %w", d.path, err)
	}
	d.seq++
	m.DoublewriteWrites++
	m.DoublewritePages += int64(len(ids))
	m.DoublewriteBytes += int64(len(ids) * ps)
	m.DoublewriteSyncs++
	return inPlace()
}

// Batch reads the header of the last batch in the file: its number and
// its pages, in slot order (for tests and tools). A damaged header is an
// error matching ErrCorruptDoublewrite.
func (d *Doublewrite) Batch() (seq uint64, ids []page.ID, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.f == nil {
		return 0, nil, fmt.Errorf("cache: doublewrite file %s: %w", d.path, ErrClosed)
	}
	h := make([]byte, dwHeaderSize)
	if _, err := d.f.ReadAt(h, 0); err != nil && !errors.Is(err, io.EOF) {
		return 0, nil, fmt.Errorf("cache: read doublewrite file %s: %w", d.path, err)
	}
	b, err := d.decodeHeader(h)
	if err != nil {
		return 0, nil, d.damaged("%v", err)
	}
	return b.seq, b.ids, nil
}

// DoublewriteRecovery is what Recover found in the doublewrite file.
type DoublewriteRecovery struct {
	// Batch is the last batch's number (0: none was written) and Pages
	// its pages.
	Batch uint64
	Pages int
	// Torn counts the batch's slots that do not hold the image its header
	// names (a crash during the batch's write, before its sync): ignored,
	// since the store's copies of their pages were whole.
	Torn int
	// Restored counts the store pages that failed their checksum and were
	// written back from their doublewrite copy.
	Restored int
}

// Recover reads the last batch and restores from it every page whose
// copy in st fails its checksum (page.ErrCorruptPage) while its
// doublewrite copy is sound, then syncs st. Open calls it before redo. A
// damaged file, or a torn store page whose copy is not sound, is an error
// matching ErrCorruptDoublewrite that names the file.
func (d *Doublewrite) Recover(st store.Store) (DoublewriteRecovery, error) {
	var r DoublewriteRecovery
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.f == nil {
		return r, fmt.Errorf("cache: doublewrite file %s: %w", d.path, ErrClosed)
	}
	st2, err := d.f.Stat()
	if err != nil {
		return r, fmt.Errorf("cache: stat doublewrite file %s: %w", d.path, err)
	}
	if st2.Size() != d.size() {
		return r, d.damaged("%d bytes, want %d", st2.Size(), d.size())
	}
	h := make([]byte, dwHeaderSize)
	if _, err := d.f.ReadAt(h, 0); err != nil && !errors.Is(err, io.EOF) {
		return r, fmt.Errorf("cache: read doublewrite file %s: %w", d.path, err)
	}
	b, err := d.decodeHeader(h)
	if err != nil {
		return r, d.damaged("%v", err)
	}
	d.seq = b.seq
	r.Batch, r.Pages = b.seq, len(b.ids)
	if len(b.ids) == 0 {
		return r, nil
	}
	ps := d.pageSize
	slots := make([]byte, len(b.ids)*ps)
	if _, err := d.f.ReadAt(slots, dwHeaderSize); err != nil && !errors.Is(err, io.EOF) {
		return r, fmt.Errorf("cache: read doublewrite file %s: %w", d.path, err)
	}
	cur := make([]byte, ps)
	for i, id := range b.ids {
		slot := slots[i*ps : (i+1)*ps]
		sound := page.Verify(id, slot, ps) == nil && binary.LittleEndian.Uint32(slot[0:page.ChecksumSize]) == b.sums[i]
		if !sound {
			r.Torn++
		}
		err := st.ReadPage(id, cur)
		switch {
		case err == nil, errors.Is(err, store.ErrPageNotFound):
			// Whole, or never written: redo makes it.
			continue
		case !errors.Is(err, page.ErrCorruptPage):
			return r, fmt.Errorf("cache: doublewrite recovery of page %s: %w", id, err)
		case !sound:
			return r, d.damaged("page %s in the store fails its checksum and its copy in slot %d does not verify: %v", id, i, err)
		}
		if err := st.WritePage(id, slot); err != nil {
			return r, fmt.Errorf("cache: restore page %s from doublewrite file %s: %w", id, d.path, err)
		}
		r.Restored++
	}
	if r.Restored > 0 {
		if err := st.Sync(); err != nil {
			return r, fmt.Errorf("cache: restore pages from doublewrite file %s: %w", d.path, err)
		}
	}
	return r, nil
}

// syncDir syncs directory dir, so that a file created, renamed or removed
// in it stays so after a crash.
func syncDir(fs vfs.FS, dir string) error {
	df, err := fs.OpenDir(dir)
	if err != nil {
		return fmt.Errorf("cache: sync directory %s: %w", dir, err)
	}
	err = df.Sync()
	if cerr := df.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cache: sync directory %s: %w", dir, err)
	}
	return nil
}
