//go:build unix

package connector

import (
	"os"
	"syscall"
)

// fileID is the device and inode of the file fi describes.
func fileID(fi os.FileInfo) (dev, ino uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Ino), true // Dev is int32 on some systems
}
