package paper

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"
)

// An archive keeps the closed orders an account no longer holds in
// memory on disk, so look-ups by id and client order id keep answering
// (the 24 h promise) while the heap holds only a small index per order.

// archiver is a Journal that archives closed orders.
type archiver interface {
	// archive stores o, closed on account, unless an order with its id
	// already is (a replay archives the same orders again).
	archive(account string, o Order, seq uint64) error
	// archivedByID and archivedByClient return an archived order, or
	// false when none is archived; an error when the archive cannot tell.
	archivedByID(account, id string) (Order, bool, error)
	archivedByClient(account, clientOrderID string) (Order, bool, error)
}

// keepClosedArchived is how many closed orders an account keeps in memory
// when older ones go to an archive.
const keepClosedArchived = 1000

// archiveSpan is how long an archive file takes orders before it becomes
// the previous one, which is deleted at the next turn: an archived order
// is kept between one and two spans after it closed, so look-ups answer
// for the 24 hours the idempotency promise lasts and the index does not
// grow with history.
const archiveSpan = 24 * time.Hour

// archiveRef locates one archived order: its file (current or previous),
// its line's offset and length, and its placement sequence (the newest
// order wins a client order id).
type archiveRef struct {
	off  int64
	n    uint32
	prev bool
	seq  uint64
}

// archiveLine is one archived order on disk.
type archiveLine struct {
	Account string `json:"a"`
	Seq     uint64 `json:"s"`
	Order   Order  `json:"o"`
}

// archiveKeys is what indexing reads of a line it has no index entry for.
type archiveKeys struct {
	Account string `json:"a"`
	Seq     uint64 `json:"s"`
	Order   struct {
		ID, ClientOrderID string
		UpdatedAt         time.Time
	} `json:"o"`
}

// An archive file has a key file beside it (path.idx) with a fixed-size
// entry per line, so that opening reads 44 bytes an order instead of
// decoding its JSON: id and client order id hashes (0: none), offset,
// length, sequence and close time.
const idxEntry = 44

// archiveFile is one span's orders and their key file.
type archiveFile struct {
	data, idx     *os.File
	size, idxSize int64
	first         time.Time // when its first order closed
}

// orderArchive is an append-only file of closed orders, one JSON line
// each, indexed in memory by hash of account and id (and client order id).
type orderArchive struct {
	mu       sync.Mutex
	path     string
	cur      archiveFile
	prev     *archiveFile // path.1: the previous span's orders; nil if none
	byID     map[uint64]archiveRef
	byClient map[uint64]archiveRef
	dirty    bool
	span     time.Duration
}

func archiveKey(account, key string) uint64 {
	h := fnv.New64a()
	_, _ = io.WriteString(h, account)
	_, _ = h.Write([]byte{0})
	_, _ = io.WriteString(h, key)
	return h.Sum64()
}

// openArchive opens (or creates) the archive at path (and path.1, the
// previous span's) and indexes it; a torn last line is cut off.
func openArchive(path string) (*orderArchive, error) {
	a := &orderArchive{path: path, byID: map[uint64]archiveRef{}, byClient: map[uint64]archiveRef{}, span: archiveSpan}
	err := a.openFile(path+".1", true)
	if err == nil {
		err = a.openFile(path, false)
	}
	if err != nil {
		a.close()
		return nil, fmt.Errorf("paper order archive %s: %w", path, err)
	}
	return a, nil
}

// openFile opens and indexes one span's file; the previous one only if
// it exists.
func (a *orderArchive) openFile(path string, prev bool) error {
	flag := os.O_RDWR
	if !prev {
		flag |= os.O_CREATE
	}
	data, err := os.OpenFile(path, flag, 0o600)
	if prev && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	f := &archiveFile{data: data}
	if prev {
		a.prev = f
	} else {
		a.cur = *f
		f = &a.cur
	}
	if f.idx, err = os.OpenFile(path+".idx", os.O_CREATE|os.O_RDWR, 0o600); err != nil {
		return err
	}
	return a.index(f, prev)
}

// index adds f's orders to the index from its key file, then from the
// lines the key file lacks (a crash between the two writes), and cuts
// both after the last whole line.
func (a *orderArchive) index(f *archiveFile, prev bool) error {
	st, err := f.data.Stat()
	if err != nil {
		return err
	}
	keys, err := io.ReadAll(f.idx)
	if err != nil {
		return err
	}
	var off int64
	for i := 0; i+idxEntry <= len(keys); i += idxEntry {
		e := keys[i : i+idxEntry]
		ref := archiveRef{off: int64(binary.LittleEndian.Uint64(e[16:])), n: binary.LittleEndian.Uint32(e[24:]), prev: prev,
			seq: binary.LittleEndian.Uint64(e[28:])}
		if ref.off != off || ref.off+int64(ref.n) > st.Size() {
			break
		}
		if off == 0 {
			f.first = time.Unix(int64(binary.LittleEndian.Uint64(e[36:])), 0).UTC()
		}
		a.add(binary.LittleEndian.Uint64(e), binary.LittleEndian.Uint64(e[8:]), ref)
		off += int64(ref.n)
		f.idxSize += idxEntry
	}
	if err := f.idx.Truncate(f.idxSize); err != nil {
		return err
	}
	f.size = off
	r := bufio.NewReaderSize(io.NewSectionReader(f.data, off, st.Size()-off), 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return fmt.Errorf("a line at offset %d is too long", f.size)
		}
		if err != nil { // io.EOF: a torn or empty tail
			break
		}
		var k archiveKeys
		if json.Unmarshal(line, &k) != nil {
			return fmt.Errorf("line at offset %d is unreadable", f.size)
		}
		if err := a.indexLine(f, k.Account, k.Order.ID, k.Order.ClientOrderID, k.Order.UpdatedAt, k.Seq, int64(len(line)), prev); err != nil {
			return err
		}
	}
	return f.data.Truncate(f.size)
}

// indexLine indexes the line at the end of f and writes its key entry.
func (a *orderArchive) indexLine(f *archiveFile, account, id, clientOrderID string, at time.Time, seq uint64, n int64, prev bool) error {
	idKey, clientKey := archiveKey(account, id), uint64(0)
	if clientOrderID != "" {
		clientKey = archiveKey(account, clientOrderID)
	}
	var e [idxEntry]byte
	binary.LittleEndian.PutUint64(e[0:], idKey)
	binary.LittleEndian.PutUint64(e[8:], clientKey)
	binary.LittleEndian.PutUint64(e[16:], uint64(f.size))
	binary.LittleEndian.PutUint32(e[24:], uint32(n))
	binary.LittleEndian.PutUint64(e[28:], seq)
	binary.LittleEndian.PutUint64(e[36:], uint64(at.Unix()))
	if _, err := f.idx.WriteAt(e[:], f.idxSize); err != nil {
		return err
	}
	if f.size == 0 {
		f.first = at
	}
	a.add(idKey, clientKey, archiveRef{off: f.size, n: uint32(n), prev: prev, seq: seq})
	f.size += n
	f.idxSize += idxEntry
	return nil
}

func (a *orderArchive) add(idKey, clientKey uint64, ref archiveRef) {
	a.byID[idKey] = ref
	if clientKey != 0 {
		if old, ok := a.byClient[clientKey]; !ok || old.seq < ref.seq {
			a.byClient[clientKey] = ref
		}
	}
}

func (a *orderArchive) archive(account string, o Order, seq uint64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ref, ok := a.byID[archiveKey(account, o.ID)]; ok && ref.seq == seq {
		return nil
	}
	if a.cur.size > 0 && o.UpdatedAt.Sub(a.cur.first) >= a.span {
		if err := a.turn(); err != nil {
			return err
		}
	}
	b, err := json.Marshal(archiveLine{Account: account, Seq: seq, Order: o})
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := a.cur.data.WriteAt(b, a.cur.size); err != nil {
		return fmt.Errorf("paper order archive: %w", err)
	}
	if err := a.indexLine(&a.cur, account, o.ID, o.ClientOrderID, o.UpdatedAt, seq, int64(len(b)), false); err != nil {
		return fmt.Errorf("paper order archive: %w", err)
	}
	a.dirty = true
	return nil
}

// turn makes the current file the previous one, deleting the one before
// with its orders' index entries; a.mu is held.
func (a *orderArchive) turn() error {
	if err := a.syncLocked(); err != nil {
		return err
	}
	if a.prev != nil {
		a.prev.close()
		a.prev = nil
	}
	for _, index := range []map[uint64]archiveRef{a.byID, a.byClient} {
		for k, ref := range index {
			if ref.prev {
				delete(index, k)
			} else {
				ref.prev = true
				index[k] = ref
			}
		}
	}
	for _, suffix := range []string{"", ".idx"} {
		if err := os.Rename(a.path+suffix, a.path+".1"+suffix); err != nil {
			return fmt.Errorf("paper order archive: %w", err)
		}
	}
	old := a.cur
	a.prev, a.cur = &old, archiveFile{}
	var err error
	if a.cur.data, err = os.OpenFile(a.path, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o600); err == nil {
		a.cur.idx, err = os.OpenFile(a.path+".idx", os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o600)
	}
	if err != nil {
		return fmt.Errorf("paper order archive: %w", err)
	}
	return nil
}

func (a *orderArchive) read(index map[uint64]archiveRef, account, key string, match func(Order) bool) (Order, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ref, ok := index[archiveKey(account, key)]
	if !ok {
		return Order{}, false
	}
	f := &a.cur
	if ref.prev {
		f = a.prev
	}
	buf := make([]byte, ref.n)
	if _, err := f.data.ReadAt(buf, ref.off); err != nil {
		return Order{}, false
	}
	var l archiveLine
	if json.Unmarshal(buf, &l) != nil || l.Account != account || !match(l.Order) {
		return Order{}, false // a hash collision: the order is not archived
	}
	return l.Order, true
}

func (a *orderArchive) archivedByID(account, id string) (Order, bool, error) {
	o, ok := a.read(a.byID, account, id, func(o Order) bool { return o.ID == id })
	return o, ok, nil
}

func (a *orderArchive) archivedByClient(account, c string) (Order, bool, error) {
	if c == "" {
		return Order{}, false, nil
	}
	o, ok := a.read(a.byClient, account, c, func(o Order) bool { return o.ClientOrderID == c })
	return o, ok, nil
}

func (a *orderArchive) syncArchive() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.syncLocked()
}

func (a *orderArchive) syncLocked() error {
	if !a.dirty {
		return nil
	}
	if err := errors.Join(a.cur.data.Sync(), a.cur.idx.Sync()); err != nil {
		return fmt.Errorf("paper order archive: %w", err)
	}
	a.dirty = false
	return nil
}

func (f *archiveFile) close() error {
	var err error
	for _, x := range []*os.File{f.data, f.idx} {
		if x != nil {
			err = errors.Join(err, x.Close())
		}
	}
	return err
}

func (a *orderArchive) close() error {
	if a == nil {
		return nil
	}
	err := a.cur.close()
	if a.prev != nil {
		err = errors.Join(err, a.prev.close())
	}
	return err
}
