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
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/hashindex"
)

// An archive keeps the closed orders an account no longer holds in
// memory on disk, so look-ups by id and client order id keep answering
// (the 24 h promise) while the heap holds next to nothing per order.

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

// archiveSpan is how long an archived order is kept at least after it
// closed, so look-ups answer for the 24 hours the idempotency promise
// lasts. The archive is a series of segment files; the newest takes
// orders (indexed in memory) until it holds segmentOrders orders or spans
// segmentSpan, then it is sealed: its index goes to a sorted file beside
// it (hashindex), and a segment whose last order closed archiveSpan ago
// is deleted whole. So an order is kept 24 to about 25 hours and neither
// the heap nor the files grow with history.
const (
	archiveSpan   = 24 * time.Hour
	segmentSpan   = time.Hour
	segmentOrders = 1 << 14
)

// archiveRef locates one order of the newest segment: its line's offset
// and length, and its placement sequence (the newest order wins a client
// order id).
type archiveRef struct {
	off int64
	n   uint32
	seq uint64
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

// A segment file has a key file beside it (.idx) with a fixed-size entry
// per line, so that opening reads 44 bytes an order instead of decoding
// its JSON: id and client order id hashes (0: none), offset, length,
// sequence and close time. A sealed segment also has its sorted index
// (.run), rebuilt from the key file when missing.
const idxEntry = 44

// archiveFile is one segment's orders and their key file.
type archiveFile struct {
	num           int
	data, idx     *os.File
	size, idxSize int64
	count         int
	first, last   time.Time // when its first and last orders closed
	run           *hashindex.Run
}

// orderArchive is a series of append-only files of closed orders, one
// JSON line each, indexed by hash of account and id (and client order
// id): the newest segment in memory, sealed ones on disk.
type orderArchive struct {
	mu       sync.Mutex
	path     string
	cur      archiveFile
	sealed   []*archiveFile // oldest first
	byID     map[uint64]archiveRef
	byClient map[uint64]archiveRef
	dirty    bool
	span     time.Duration
	segSpan  time.Duration
	segMax   int
}

func archiveKey(account, key string) uint64 {
	h := fnv.New64a()
	_, _ = io.WriteString(h, account)
	_, _ = h.Write([]byte{0})
	_, _ = io.WriteString(h, key)
	return h.Sum64()
}

func (a *orderArchive) segPath(num int) string { return fmt.Sprintf("%s.%06d", a.path, num) }

// openArchive opens (or creates) the archive whose segments are
// path.NNNNNN and indexes it; a torn last line is cut off. The files of
// the archive before segments (path, and path.1 the previous span's) are
// renamed into segments.
func openArchive(path string) (*orderArchive, error) {
	a := &orderArchive{path: path, span: archiveSpan, segSpan: segmentSpan, segMax: segmentOrders}
	if err := a.open(); err != nil {
		a.close()
		return nil, fmt.Errorf("paper order archive %s: %w", path, err)
	}
	return a, nil
}

func (a *orderArchive) open() error {
	nums, err := a.segments()
	if err != nil {
		return err
	}
	next := 1
	if len(nums) > 0 {
		next = nums[len(nums)-1] + 1
	}
	for _, old := range []string{a.path + ".1", a.path} { // oldest first
		if _, err := os.Stat(old); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		for _, suffix := range []string{".idx", ""} { // the data file last: it marks the segment
			if err := os.Rename(old+suffix, a.segPath(next)+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		nums = append(nums, next)
		next++
	}
	if len(nums) == 0 {
		nums = []int{1}
	}
	for i, num := range nums {
		if i < len(nums)-1 {
			if f := a.openSealed(num); f != nil {
				a.sealed = append(a.sealed, f)
				continue
			}
		}
		f, err := a.openFile(num)
		if err != nil {
			return err
		}
		if i == len(nums)-1 {
			a.cur = *f
			break
		}
		a.sealed = append(a.sealed, f)
		if err := a.sealFile(f); err != nil {
			return err
		}
	}
	return nil
}

// openSealed opens a sealed segment from its sorted index, reading of its
// key file only the first and last entries; nil when either is missing
// or unreadable (the segment is then indexed from its files).
func (a *orderArchive) openSealed(num int) *archiveFile {
	path := a.segPath(num)
	run, err := hashindex.Open(path + ".run")
	if err != nil {
		return nil
	}
	data, err := os.Open(path)
	if err != nil {
		run.Close()
		return nil
	}
	f := &archiveFile{num: num, data: data, run: run}
	if f.idx, err = os.Open(path + ".idx"); err != nil {
		f.close()
		return nil
	}
	defer func() {
		f.idx.Close()
		f.idx = nil
	}()
	st, err := f.idx.Stat()
	if err != nil || st.Size() == 0 || st.Size()%idxEntry != 0 { // sealed: whole entries
		f.close()
		return nil
	}
	var first, last [idxEntry]byte
	_, err1 := f.idx.ReadAt(first[:], 0)
	_, err2 := f.idx.ReadAt(last[:], st.Size()-idxEntry)
	if err1 != nil || err2 != nil {
		f.close()
		return nil
	}
	at := func(e []byte) time.Time { return time.Unix(int64(binary.LittleEndian.Uint64(e[36:])), 0).UTC() }
	f.count = int(st.Size() / idxEntry)
	f.first, f.last = at(first[:]), at(last[:])
	return f
}

// segments lists the numbers of the segment files, in order.
func (a *orderArchive) segments() ([]int, error) {
	names, err := filepath.Glob(a.path + ".[0-9]*")
	if err != nil {
		return nil, err
	}
	var nums []int
	for _, name := range names {
		num, err := strconv.Atoi(strings.TrimPrefix(name, a.path+"."))
		if err == nil && len(name) == len(a.path)+7 {
			nums = append(nums, num)
		}
	}
	slices.Sort(nums)
	return nums, nil
}

// openFile opens and indexes one segment into fresh maps (the newest
// keeps them; a sealed one's go to its run).
func (a *orderArchive) openFile(num int) (*archiveFile, error) {
	path := a.segPath(num)
	data, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	f := &archiveFile{num: num, data: data}
	if f.idx, err = os.OpenFile(path+".idx", os.O_CREATE|os.O_RDWR, 0o600); err != nil {
		data.Close()
		return nil, err
	}
	a.byID, a.byClient = map[uint64]archiveRef{}, map[uint64]archiveRef{}
	if err := a.index(f); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

// index adds f's orders to the maps from its key file, then from the
// lines the key file lacks (a crash between the two writes), and cuts
// both after the last whole line.
func (a *orderArchive) index(f *archiveFile) error {
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
		ref := archiveRef{off: int64(binary.LittleEndian.Uint64(e[16:])), n: binary.LittleEndian.Uint32(e[24:]),
			seq: binary.LittleEndian.Uint64(e[28:])}
		if ref.off != off || ref.off+int64(ref.n) > st.Size() {
			break
		}
		f.note(time.Unix(int64(binary.LittleEndian.Uint64(e[36:])), 0).UTC())
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
		if err := a.indexLine(f, k.Account, k.Order.ID, k.Order.ClientOrderID, k.Order.UpdatedAt, k.Seq, int64(len(line))); err != nil {
			return err
		}
	}
	return f.data.Truncate(f.size)
}

// note counts an order closed at t into f.
func (f *archiveFile) note(t time.Time) {
	if f.count == 0 {
		f.first = t
	}
	f.last = t
	f.count++
}

// indexLine indexes the line at the end of f and writes its key entry.
func (a *orderArchive) indexLine(f *archiveFile, account, id, clientOrderID string, at time.Time, seq uint64, n int64) error {
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
	f.note(at)
	a.add(idKey, clientKey, archiveRef{off: f.size, n: uint32(n), seq: seq})
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
	if a.has(archiveKey(account, o.ID), seq) {
		return nil
	}
	if err := a.expire(o.UpdatedAt); err != nil {
		return err
	}
	if err := a.openCur(); err != nil { // a seal that could not open the next segment
		return err
	}
	if a.cur.count > 0 && (a.cur.count >= a.segMax || o.UpdatedAt.Sub(a.cur.first) >= a.segSpan) {
		if err := a.seal(); err != nil {
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
	if err := a.indexLine(&a.cur, account, o.ID, o.ClientOrderID, o.UpdatedAt, seq, int64(len(b))); err != nil {
		return fmt.Errorf("paper order archive: %w", err)
	}
	a.dirty = true
	return nil
}

// has reports whether the order with id hash idKey and sequence seq is
// archived; a.mu is held.
func (a *orderArchive) has(idKey, seq uint64) bool {
	if ref, ok := a.byID[idKey]; ok && ref.seq == seq {
		return true
	}
	found := false
	for _, f := range a.sealed {
		_ = f.run.Find(idKey, func(e hashindex.Entry) bool {
			found = e.Aux == seq
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// expire deletes the sealed segments whose last order closed a span
// before now; a.mu is held.
func (a *orderArchive) expire(now time.Time) error {
	for len(a.sealed) > 0 && now.Sub(a.sealed[0].last) >= a.span {
		f := a.sealed[0]
		a.sealed = a.sealed[1:]
		f.close()
		path := a.segPath(f.num)
		// The data file last: while it exists, the segment does.
		for _, p := range []string{path + ".run", path + ".idx", path} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("paper order archive: %w", err)
			}
		}
	}
	return nil
}

// seal makes the newest segment a sealed one and starts the next; a.mu
// is held.
func (a *orderArchive) seal() error {
	if err := a.syncLocked(); err != nil {
		return err
	}
	f := a.cur
	if err := a.sealFile(&f); err != nil {
		return fmt.Errorf("paper order archive: %w", err)
	}
	a.sealed = append(a.sealed, &f)
	a.cur = archiveFile{num: f.num + 1} // without files until they open
	return a.openCur()
}

// openCur opens the newest segment's files when they are not; a.mu is
// held.
func (a *orderArchive) openCur() error {
	if a.cur.data != nil {
		return nil
	}
	next, err := a.openFile(a.cur.num)
	if err != nil {
		return fmt.Errorf("paper order archive: %w", err)
	}
	a.cur = *next
	return nil
}

// sealFile moves f's index, in the maps, to its sorted file (reading the
// one written before if whole) and closes its key file; the maps are
// then f's no more.
func (a *orderArchive) sealFile(f *archiveFile) error {
	path := a.segPath(f.num) + ".run"
	var err error
	entries := make([]hashindex.Entry, 0, len(a.byID)+len(a.byClient))
	for _, index := range []map[uint64]archiveRef{a.byID, a.byClient} {
		for k, ref := range index {
			entries = append(entries, hashindex.Entry{Key: k, Off: uint64(ref.off), N: ref.n, Aux: ref.seq})
		}
	}
	if f.run, err = hashindex.Open(path); err != nil || f.run.Len() != len(entries) {
		f.run.Close()
		if f.run, err = hashindex.Write(path, entries); err != nil {
			return err
		}
	}
	a.byID, a.byClient = nil, nil
	err = f.idx.Close()
	f.idx = nil
	return err
}

// read finds the order key names (an id, or a client order id) in the
// newest segment's index, then in the sealed ones newest first; match
// tells the order from another whose key's hash is the same. byClient
// wants the newest order of all.
func (a *orderArchive) read(byClient bool, account, key string, match func(Order) bool) (Order, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	h := archiveKey(account, key)
	var best Order
	var bestSeq uint64
	found := false
	try := func(f *archiveFile, off int64, n uint32, seq uint64) bool {
		if found && seq <= bestSeq {
			return false
		}
		buf := make([]byte, n)
		if _, err := f.data.ReadAt(buf, off); err != nil {
			return false
		}
		var l archiveLine
		if json.Unmarshal(buf, &l) != nil || l.Account != account || !match(l.Order) {
			return false // a hash collision
		}
		best, bestSeq, found = l.Order, seq, true
		return true
	}
	index := a.byID
	if byClient {
		index = a.byClient
	}
	if ref, ok := index[h]; ok && try(&a.cur, ref.off, ref.n, ref.seq) && !byClient {
		return best, true
	}
	for i := len(a.sealed) - 1; i >= 0; i-- {
		f := a.sealed[i]
		_ = f.run.Find(h, func(e hashindex.Entry) bool {
			try(f, int64(e.Off), e.N, e.Aux)
			return true
		})
		if found && !byClient {
			break
		}
	}
	return best, found
}

func (a *orderArchive) archivedByID(account, id string) (Order, bool, error) {
	o, ok := a.read(false, account, id, func(o Order) bool { return o.ID == id })
	return o, ok, nil
}

func (a *orderArchive) archivedByClient(account, c string) (Order, bool, error) {
	if c == "" {
		return Order{}, false, nil
	}
	o, ok := a.read(true, account, c, func(o Order) bool { return o.ClientOrderID == c })
	return o, ok, nil
}

// indexed is how many orders the archive holds.
func (a *orderArchive) indexed() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := a.cur.count
	for _, f := range a.sealed {
		n += f.count
	}
	return n
}

func (a *orderArchive) syncArchive() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.syncLocked()
}

func (a *orderArchive) syncLocked() error {
	if !a.dirty || a.cur.data == nil {
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
	return errors.Join(err, f.run.Close())
}

func (a *orderArchive) close() error {
	if a == nil {
		return nil
	}
	err := a.cur.close()
	for _, f := range a.sealed {
		err = errors.Join(err, f.close())
	}
	return err
}
