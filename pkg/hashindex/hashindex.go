// Package hashindex provides a read-only index of 64-bit key hashes kept
// on disk, for look-ups into logs whose records live for a time (24 h of
// idempotency records, closed orders) and must not be indexed in the Go
// heap as they pile up.
//
// A Run is one file of entries sorted by key. Memory holds a Bloom filter
// (about 10 bits an entry, so most look-ups of an absent key read nothing)
// and every 64th key; a look-up reads one block of 64 entries with pread.
// The file is read, never mapped: mapped pages would count in the
// process's resident memory.
package hashindex

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// Entry is one indexed record: its key's hash and three values the
// caller gives meaning to (typically where the record is and a time or
// sequence).
type Entry struct {
	Key uint64
	Off uint64
	N   uint32
	Aux uint64
}

// entrySize is an Entry on disk; block is how many entries a look-up reads.
const (
	entrySize = 28
	block     = 64
)

// Run is an immutable sorted index file. Its methods are safe for
// concurrent use.
type Run struct {
	f     *os.File
	path  string
	n     int
	fence []uint64 // the key of every block-th entry
	bloom bloom
}

// Write sorts entries by key (in place), writes them to path through a
// temporary file, an fsync and a rename, and opens the result.
func Write(path string, entries []Entry) (*Run, error) {
	slices.SortFunc(entries, func(a, b Entry) int {
		switch {
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("hash index: %w", err)
	}
	r := &Run{f: f, path: path, n: len(entries), bloom: newBloom(len(entries))}
	w := bufio.NewWriterSize(f, 64<<10)
	var b [entrySize]byte
	for i, e := range entries {
		put(b[:], e)
		_, _ = w.Write(b[:])
		r.add(i, e.Key)
	}
	err = w.Flush()
	if err == nil {
		err = f.Sync() // the rename must not publish a file whose content a crash lost
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		f.Close()
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("hash index: %w", err)
	}
	return r, nil
}

// Open opens the index file at path, reading it once for the memory part.
func Open(path string) (*Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hash index: %w", err)
	}
	st, err := f.Stat()
	if err != nil || st.Size()%entrySize != 0 {
		f.Close()
		return nil, fmt.Errorf("hash index %s: size %d is not whole entries: %v", path, st.Size(), err)
	}
	n := int(st.Size() / entrySize)
	r := &Run{f: f, path: path, n: n, bloom: newBloom(n)}
	err = r.Scan(func(i int, e Entry) bool {
		r.add(i, e.Key)
		return true
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func (r *Run) add(i int, key uint64) {
	if i%block == 0 {
		r.fence = append(r.fence, key)
	}
	r.bloom.add(key)
}

// Len is how many entries the run holds.
func (r *Run) Len() int { return r.n }

// Find calls fn with each entry whose key is key, until fn returns false.
func (r *Run) Find(key uint64, fn func(Entry) bool) error {
	if r.n == 0 || !r.bloom.has(key) {
		return nil
	}
	// The first block whose fence is at least key may hold key's first
	// entry only from its start; equal keys may begin in the block before.
	b, _ := slices.BinarySearch(r.fence, key)
	b = max(b-1, 0)
	buf := make([]byte, block*entrySize)
	for ; b < len(r.fence); b++ {
		from := b * block
		cnt := min(block, r.n-from)
		if _, err := r.f.ReadAt(buf[:cnt*entrySize], int64(from)*entrySize); err != nil {
			return fmt.Errorf("hash index %s: %w", r.path, err)
		}
		for i := range cnt {
			e := get(buf[i*entrySize:])
			if e.Key > key {
				return nil
			}
			if e.Key == key && !fn(e) {
				return nil
			}
		}
	}
	return nil
}

// Scan calls fn with every entry in key order, until fn returns false.
func (r *Run) Scan(fn func(i int, e Entry) bool) error {
	br := bufio.NewReaderSize(io.NewSectionReader(r.f, 0, int64(r.n)*entrySize), 64<<10)
	var b [entrySize]byte
	for i := range r.n {
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return fmt.Errorf("hash index %s: %w", r.path, err)
		}
		if !fn(i, get(b[:])) {
			return nil
		}
	}
	return nil
}

// Close closes the file.
func (r *Run) Close() error {
	if r == nil {
		return nil
	}
	return r.f.Close()
}

// Remove closes and deletes the file.
func (r *Run) Remove() error {
	if r == nil {
		return nil
	}
	return errors.Join(r.f.Close(), os.Remove(r.path))
}

func put(b []byte, e Entry) {
	binary.LittleEndian.PutUint64(b[0:], e.Key)
	binary.LittleEndian.PutUint64(b[8:], e.Off)
	binary.LittleEndian.PutUint32(b[16:], e.N)
	binary.LittleEndian.PutUint64(b[20:], e.Aux)
}

func get(b []byte) Entry {
	return Entry{Key: binary.LittleEndian.Uint64(b[0:]), Off: binary.LittleEndian.Uint64(b[8:]),
		N: binary.LittleEndian.Uint32(b[16:]), Aux: binary.LittleEndian.Uint64(b[20:])}
}

// bloom is a Bloom filter over keys that are already hashes: 10 bits and
// 7 probes an entry give about 1 % false positives.
type bloom []uint64

const bloomProbes = 7

func newBloom(n int) bloom { return make(bloom, max((n*10+63)/64, 1)) }

// probes mixes key (FNV hashes are weak in their low bits) into the two
// hashes the probes combine.
func probes(key uint64) (uint64, uint64) {
	key ^= key >> 30
	key *= 0xbf58476d1ce4e5b9
	key ^= key >> 27
	key *= 0x94d049bb133111eb
	key ^= key >> 31
	return key, (key>>32 | key<<32) | 1
}

func (f bloom) add(key uint64) {
	m := uint64(len(f) * 64)
	h1, h2 := probes(key)
	for i := range uint64(bloomProbes) {
		bit := (h1 + i*h2) % m
		f[bit/64] |= 1 << (bit % 64)
	}
}

func (f bloom) has(key uint64) bool {
	m := uint64(len(f) * 64)
	h1, h2 := probes(key)
	for i := range uint64(bloomProbes) {
		bit := (h1 + i*h2) % m
		if f[bit/64]&(1<<(bit%64)) == 0 {
			return false
		}
	}
	return true
}
