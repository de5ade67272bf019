package appendlog

import (
	"errors"
	"os"
	"syscall"
)

// errCannotAllocate: the file system does not allocate ahead.
var errCannotAllocate = errors.New("appendlog: the file system cannot allocate ahead")

// allocate extends f by n zero bytes from off.
func allocate(f *os.File, off, n int64) error {
	_, err := f.WriteAt(make([]byte, n), off)
	return err
}

// dataSyncOf returns what makes f's data durable, with its metadata only
// where reading the data back needs it (a new length; within allocated
// space, none).
func dataSyncOf(f *os.File) func() error {
	return func() error {
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
		}
		return nil
	}
}
