package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// DiskFullBelow is the free space under which a data directory counts as
// full: records are small, but the stores (JetStream among them) write in
// blocks and fail before the last byte is used.
const DiskFullBelow = 1 << 20

// diskEvery is how often a DiskSpace looks at the free space.
const diskEvery = time.Second

// DiskSpace watches the free space of the file system holding a data
// directory, so that a full disk is named as such (with the path) and
// trading calls are refused at once rather than after each store has
// failed in its own way.
type DiskSpace struct {
	path string
	log  *slog.Logger
	full atomic.Pointer[error]
}

// WatchDisk looks at path's file system now and every second until ctx ends.
func WatchDisk(ctx context.Context, path string, log *slog.Logger) *DiskSpace {
	d := &DiskSpace{path: path, log: log}
	d.refresh()
	repeat(ctx, diskEvery, d.refresh)
	return d
}

// Err says the disk is full, naming the path, or is nil.
func (d *DiskSpace) Err() error {
	if e := d.full.Load(); e != nil {
		return *e
	}
	return nil
}

// Check is Err as a readiness check.
func (d *DiskSpace) Check(context.Context) error { return d.Err() }

func (d *DiskSpace) refresh() {
	var st syscall.Statfs_t
	if err := syscall.Statfs(d.path, &st); err != nil {
		return // no verdict: the stores report their own errors
	}
	free := st.Bavail * uint64(st.Bsize)
	var verdict error
	if free < DiskFullBelow {
		verdict = DiskFullError(d.path, free)
	}
	was := d.full.Swap(ptrOrNil(verdict))
	switch {
	case verdict != nil && was == nil:
		d.log.Error("disk full: trading calls are refused", "path", d.path, "free_bytes", free)
	case verdict == nil && was != nil:
		d.log.Info("disk has room again: trading calls are served", "path", d.path, "free_bytes", free)
	}
}

// DiskFullError says that the disk holding path is full.
func DiskFullError(path string, free uint64) error {
	return fmt.Errorf("the disk holding %s is full (%d KiB free), so nothing can be recorded: free space on it or make it larger",
		path, free>>10)
}

// DiskFullPath returns the file a write failed on when err is "no space
// left on device".
func DiskFullPath(err error) (string, bool) {
	if !errors.Is(err, syscall.ENOSPC) {
		return "", false
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Path, true
	}
	return "the data directory", true
}
