//go:build !linux

package appendlog

import (
	"errors"
	"os"
)

var errCannotAllocate = errors.New("appendlog: the file system cannot allocate ahead")

// allocate: there is no portable call to allocate ahead here, so a
// preallocated log appends as any other.
func allocate(*os.File, int64, int64) error { return errCannotAllocate }

func dataSyncOf(f *os.File) func() error { return f.Sync }
