package paper

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/appendlog"
)

// FileJournal is a Journal in one file: a JSON record per line. Records
// reach the file in Write order and Sync shares one fsync among concurrent
// callers (appendlog group commit), so a crash leaves a prefix of them.
// After a failed write or fsync it refuses every later record.
//
// It keeps snapshots: once the records since the last one outweigh it
// (snapshotDue) the engine's whole state goes to path.snap and the journal starts afresh (the file is
// rotated to path.old, removed once the new one begins with a start record
// naming the snapshot), so opening restores the snapshot and replays only
// the records written since.
//
// Closed orders an account no longer keeps in memory go to path.orders
// (orderArchive), where look-ups by id and client order id find them.
type FileJournal struct {
	log  *appendlog.File
	path string
	*orderArchive

	mu     sync.Mutex
	snap   []byte // the state the records start from, until Snapshot hands it over
	snapID uint64
	since  int // records written since the last snapshot (or in the file at open)
	// sinceBytes is what those records weigh; snapBytes what the last
	// snapshot's state does.
	sinceBytes, snapBytes int
	every                 int
	// beforeCompact (BeforeCompact) runs before a snapshot drops records.
	beforeCompact func() error
}

// BeforeCompact has f run before every snapshot, which drops the records
// before it: a caller whose log relies on its notes in those records
// (Engine.Notes) makes that log durable first. A snapshot waits for f and
// is not taken when f fails.
func (j *FileJournal) BeforeCompact(f func() error) {
	j.mu.Lock()
	j.beforeCompact = f
	j.mu.Unlock()
}

// snapshotEvery is the most records the journal takes between snapshots:
// a restart replays at most that many. snapshotAtLeast is the fewest: a
// snapshot is due in between once the records weigh twice the last
// snapshot, so a small state (a bot that places and cancels) is
// snapshotted often and restarts replay little, while a large one (tens of
// thousands of resting orders) is not rewritten more than the records it
// saves: a snapshot costs at most half the bytes its records did.
const (
	snapshotEvery   = 50_000
	snapshotAtLeast = 5_000
)

// snapshotDue is the rule above.
func snapshotDue(since, sinceBytes, snapBytes, every int) bool {
	return since >= every || (since >= min(snapshotAtLeast, every) && sinceBytes >= 2*snapBytes)
}

// journalChunk is how far ahead the journal's file is allocated: each
// placement's sync then writes its record alone, not the file's length
// too (appendlog.OpenPreallocated); about 2,000 records.
const journalChunk = 1 << 20

// snapFile is path.snap: a snapshot and what the records after it are.
type snapFile struct {
	ID    uint64          `json:"id"`
	Seed  int64           `json:"seed"`
	State json.RawMessage `json:"state"`
}

// OpenFileJournal opens (or creates, mode 0600) the journal at path and
// returns it with the records it already holds, oldest first. A last line
// torn by a crash is dropped: its change never took effect.
func OpenFileJournal(path string) (*FileJournal, [][]byte, error) {
	snap, err := readSnap(path + ".snap")
	if err != nil {
		return nil, nil, err
	}
	records, err := readRecords(path)
	if err != nil {
		return nil, nil, err
	}
	j := &FileJournal{path: path, every: snapshotEvery, since: len(records)}
	for _, r := range records {
		j.sinceBytes += len(r) + 1
	}
	if snap != nil {
		j.snap, j.snapID, j.snapBytes = snap.State, snap.ID, len(snap.State)
		var first record
		if len(records) == 0 || json.Unmarshal(records[0], &first) != nil || first.Snap != snap.ID {
			// A crash between writing the snapshot and starting the journal
			// afresh: the snapshot holds every record the file does.
			start, err := json.Marshal(record{Op: opStart, Time: time.Now(), Seed: snap.Seed, Snap: snap.ID})
			if err != nil {
				return nil, nil, fmt.Errorf("paper journal: %w", err)
			}
			if err := os.WriteFile(path, append(start, '\n'), 0o600); err != nil {
				return nil, nil, fmt.Errorf("paper journal: %w", err)
			}
			records = [][]byte{start}
		}
	}
	if err := os.Remove(path + ".old"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("paper journal: %w", err)
	}
	if j.orderArchive, err = openArchive(path + ".orders"); err != nil {
		return nil, nil, err
	}
	if j.log, err = appendlog.OpenPreallocated(path, journalChunk); err != nil {
		j.orderArchive.close()
		return nil, nil, fmt.Errorf("paper journal: %w", err)
	}
	return j, records, nil
}

func readSnap(path string) (*snapFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("paper journal snapshot: %w", err)
	}
	var s snapFile
	if err := json.Unmarshal(data, &s); err != nil || s.ID == 0 {
		return nil, fmt.Errorf("paper journal snapshot %s is unreadable: %v", path, err)
	}
	return &s, nil
}

func readRecords(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("paper journal: %w", err)
	}
	size := len(data)
	data = appendlog.Records(data)
	var records [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if line := sc.Bytes(); len(line) > 0 && line[len(line)-1] == '}' {
			records = append(records, append([]byte(nil), line...))
		}
	}
	if err := sc.Err(); err != nil {
		// Replaying only the records before a line too long to read would
		// append new ones after records the engine never saw.
		return nil, fmt.Errorf("paper journal %s: %w", path, err)
	}
	if n := bytes.LastIndexByte(data, '\n'); n+1 < size {
		// Cut the torn tail (and the space allocated past it) so new
		// records start on their own line. Truncate never touches the
		// records before it, as rewriting the file would.
		if err := os.Truncate(path, int64(n+1)); err != nil {
			return nil, fmt.Errorf("paper journal: %w", err)
		}
	}
	return records, nil
}

// Write implements Journal.
func (j *FileJournal) Write(record []byte) (uint64, error) {
	pos, err := j.log.Write(record)
	if err == nil {
		j.mu.Lock()
		j.since++
		j.sinceBytes += len(record) + 1
		j.mu.Unlock()
	}
	return pos, err
}

// Sync implements Journal.
func (j *FileJournal) Sync(pos uint64) error {
	return j.log.Sync(pos)
}

// Snapshot returns the state the records start from, once.
func (j *FileJournal) Snapshot() []byte {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.snap
	j.snap = nil
	return s
}

// CompactDue reports whether a snapshot is due.
func (j *FileJournal) CompactDue() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return snapshotDue(j.since, j.sinceBytes, j.snapBytes, j.every)
}

// Compact writes state as the new snapshot, then starts the journal
// afresh with a start record naming it. The engine's lock is held, so no
// record comes in between.
func (j *FileJournal) Compact(seed int64, state []byte) error {
	j.mu.Lock()
	before := j.beforeCompact
	j.mu.Unlock()
	if before != nil {
		if err := before(); err != nil {
			return fmt.Errorf("paper journal snapshot: %w", err)
		}
	}
	// The snapshot no longer holds the orders archived since the last one.
	if err := j.syncArchive(); err != nil {
		return err
	}
	j.mu.Lock()
	id := j.snapID + 1
	j.mu.Unlock()
	raw, err := json.Marshal(snapFile{ID: id, Seed: seed, State: state})
	if err != nil {
		return err
	}
	if err := appendlog.WriteFile(j.path+".snap", raw); err != nil {
		return fmt.Errorf("paper journal snapshot: %w", err)
	}
	j.mu.Lock()
	j.snapID, j.since, j.sinceBytes, j.snapBytes = id, 0, 0, len(state)
	j.mu.Unlock()
	if err := j.log.Rotate(j.path + ".old"); err != nil {
		// The snapshot holds every record: opening starts the journal afresh.
		return fmt.Errorf("paper journal: %w", err)
	}
	start, _ := json.Marshal(record{Op: opStart, Time: time.Now(), Seed: seed, Snap: id})
	pos, err := j.log.Write(start)
	if err == nil {
		err = j.log.Sync(pos)
	}
	if err != nil {
		return fmt.Errorf("paper journal: %w", err)
	}
	return os.Remove(j.path + ".old")
}

// Close closes the file. Records written but not yet synced are left to
// the operating system.
func (j *FileJournal) Close() error {
	return errors.Join(j.log.Close(), j.orderArchive.close())
}
