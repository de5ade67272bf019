package paper

import (
	"bufio"
	"bytes"
	"fmt"
	"os"

	"github.com/perpgate/perpgate/pkg/appendlog"
)

// FileJournal is a Journal in one file: a JSON record per line. Records
// reach the file in Write order and Sync shares one fsync among concurrent
// callers (appendlog group commit), so a crash leaves a prefix of them.
// After a failed write or fsync it refuses every later record.
type FileJournal struct {
	log *appendlog.File
}

// OpenFileJournal opens (or creates, mode 0600) the journal at path and
// returns it with the records it already holds, oldest first. A last line
// torn by a crash is dropped: its change never took effect.
func OpenFileJournal(path string) (*FileJournal, [][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, nil, fmt.Errorf("paper journal: %w", err)
	}
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
		return nil, nil, fmt.Errorf("paper journal %s: %w", path, err)
	}
	if n := bytes.LastIndexByte(data, '\n'); n+1 < len(data) {
		// Cut the torn tail so new records start on their own line. Truncate
		// never touches the records before it, as rewriting the file would.
		if err := os.Truncate(path, int64(n+1)); err != nil {
			return nil, nil, fmt.Errorf("paper journal: %w", err)
		}
	}
	log, err := appendlog.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("paper journal: %w", err)
	}
	return &FileJournal{log: log}, records, nil
}

// Write implements Journal.
func (j *FileJournal) Write(record []byte) (uint64, error) {
	return j.log.Write(record)
}

// Sync implements Journal.
func (j *FileJournal) Sync(pos uint64) error {
	return j.log.Sync(pos)
}

// Close closes the file. Records written but not yet synced are left to
// the operating system.
func (j *FileJournal) Close() error {
	return j.log.Close()
}
