package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Tmpfs mounts a tmpfs of size bytes on a new temporary directory, so a
// test can fill a disk without touching the machine's, and unmounts it
// when the test ends. Mounting needs root (CAP_SYS_ADMIN): without it t
// is skipped (or fails with PERPGATE_REQUIRE_SERVICES=1).
func Tmpfs(t testing.TB, size int64) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "perpgate-tmpfs-")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
		_ = os.Remove(dir)
		Unavailable(t, "a tmpfs mount", err, "run the test as root (mount needs CAP_SYS_ADMIN)")
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("testenv: unmount %s: %v", dir, err)
		}
		_ = os.Remove(dir)
	})
	return dir
}

// FillDisk writes the file fill in dir until its file system has no room
// left, and returns the file's path (remove it to free the space).
func FillDisk(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "fill")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		if _, err := f.Write(block); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return path
			}
			t.Fatal(err)
		}
	}
}
