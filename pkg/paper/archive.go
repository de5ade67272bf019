package paper

import (
	"bufio"
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
	// false when none is archived.
	archivedByID(account, id string) (Order, bool)
	archivedByClient(account, clientOrderID string) (Order, bool)
	// syncArchive makes every archived order durable (before a snapshot
	// forgets them).
	syncArchive() error
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

// archiveKeys is what indexing reads of a line: decoding whole orders
// (decimals, times) made opening 100,000 of them take seconds.
type archiveKeys struct {
	Account string `json:"a"`
	Seq     uint64 `json:"s"`
	Order   struct {
		ID, ClientOrderID string
		UpdatedAt         time.Time
	} `json:"o"`
}

// orderArchive is an append-only file of closed orders, one JSON line
// each, indexed in memory by hash of account and id (and client order id).
type orderArchive struct {
	mu       sync.Mutex
	path     string
	f, prev  *os.File // prev: path.1, the previous span's orders; may be nil
	size     int64
	began    time.Time // when the first order in f closed
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
	prev, err := os.OpenFile(path+".1", os.O_RDWR, 0o600)
	if err == nil {
		a.prev = prev
		_, err = a.index(prev, true)
	} else if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if err == nil {
		if a.f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600); err == nil {
			a.size, err = a.index(a.f, false)
		}
	}
	if err != nil {
		a.close()
		return nil, fmt.Errorf("paper order archive %s: %w", path, err)
	}
	return a, nil
}

// index adds f's orders to the index and returns its length.
func (a *orderArchive) index(f *os.File, prev bool) (int64, error) {
	r := bufio.NewReaderSize(f, 256<<10)
	var off int64
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return 0, fmt.Errorf("a line at offset %d is too long", off)
		}
		if err != nil { // io.EOF: a torn or empty tail
			break
		}
		var k archiveKeys
		if json.Unmarshal(line, &k) != nil {
			return 0, fmt.Errorf("line at offset %d is unreadable", off)
		}
		if off == 0 && !prev {
			a.began = k.Order.UpdatedAt
		}
		a.add(k.Account, k.Order.ID, k.Order.ClientOrderID, archiveRef{off: off, n: uint32(len(line)), prev: prev, seq: k.Seq})
		off += int64(len(line))
	}
	return off, f.Truncate(off)
}

func (a *orderArchive) add(account, id, clientOrderID string, ref archiveRef) {
	a.byID[archiveKey(account, id)] = ref
	if c := clientOrderID; c != "" {
		k := archiveKey(account, c)
		if old, ok := a.byClient[k]; !ok || old.seq < ref.seq {
			a.byClient[k] = ref
		}
	}
}

func (a *orderArchive) archive(account string, o Order, seq uint64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ref, ok := a.byID[archiveKey(account, o.ID)]; ok && ref.seq == seq {
		return nil
	}
	if a.size > 0 && o.UpdatedAt.Sub(a.began) >= a.span {
		if err := a.turn(); err != nil {
			return err
		}
	}
	if a.size == 0 {
		a.began = o.UpdatedAt
	}
	l := archiveLine{Account: account, Seq: seq, Order: o}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := a.f.WriteAt(b, a.size); err != nil {
		return fmt.Errorf("paper order archive: %w", err)
	}
	a.add(account, o.ID, o.ClientOrderID, archiveRef{off: a.size, n: uint32(len(b)), seq: seq})
	a.size += int64(len(b))
	a.dirty = true
	return nil
}

// turn makes the current file the previous one, deleting the one before
// with its orders' index entries; a.mu is held.
func (a *orderArchive) turn() error {
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("paper order archive: %w", err)
	}
	if a.prev != nil {
		a.prev.Close()
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
	if err := os.Rename(a.path, a.path+".1"); err != nil {
		return fmt.Errorf("paper order archive: %w", err)
	}
	f, err := os.OpenFile(a.path, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("paper order archive: %w", err)
	}
	a.prev, a.f, a.size, a.dirty = a.f, f, 0, false
	return nil
}

func (a *orderArchive) read(index map[uint64]archiveRef, account, key string, match func(Order) bool) (Order, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ref, ok := index[archiveKey(account, key)]
	if !ok {
		return Order{}, false
	}
	f := a.f
	if ref.prev {
		f = a.prev
	}
	buf := make([]byte, ref.n)
	if _, err := f.ReadAt(buf, ref.off); err != nil {
		return Order{}, false
	}
	var l archiveLine
	if json.Unmarshal(buf, &l) != nil || l.Account != account || !match(l.Order) {
		return Order{}, false // a hash collision: the order is not archived
	}
	return l.Order, true
}

func (a *orderArchive) archivedByID(account, id string) (Order, bool) {
	return a.read(a.byID, account, id, func(o Order) bool { return o.ID == id })
}

func (a *orderArchive) archivedByClient(account, c string) (Order, bool) {
	if c == "" {
		return Order{}, false
	}
	return a.read(a.byClient, account, c, func(o Order) bool { return o.ClientOrderID == c })
}

func (a *orderArchive) syncArchive() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.dirty {
		return nil
	}
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("paper order archive: %w", err)
	}
	a.dirty = false
	return nil
}

func (a *orderArchive) close() error {
	if a == nil {
		return nil
	}
	var err error
	for _, f := range []*os.File{a.f, a.prev} {
		if f != nil {
			err = errors.Join(err, f.Close())
		}
	}
	return err
}
