package paper

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"sync"
)

// FileJournal is a Journal in one file: a JSON record per line, each
// synced to disk before Append returns.
type FileJournal struct {
	mu sync.Mutex
	f  *os.File
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
	if n := bytes.LastIndexByte(data, '\n'); n+1 < len(data) {
		data = data[:n+1] // cut the torn tail so new records start on their own line
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, nil, fmt.Errorf("paper journal: %w", err)
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("paper journal: %w", err)
	}
	return &FileJournal{f: f}, records, nil
}

// Append implements Journal.
func (j *FileJournal) Append(record []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(append(record, '\n')); err != nil {
		return err
	}
	return j.f.Sync()
}

// Close closes the file.
func (j *FileJournal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.f.Close()
}
