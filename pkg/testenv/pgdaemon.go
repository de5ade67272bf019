package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

const postgresInstall = "apt-get install postgresql"

// PostgresDaemon runs a Postgres of the test's own: a cluster made by
// initdb in a temporary directory (trust authentication, fsync off) on a
// free port, as the postgres user when the test runs as root (Postgres
// refuses root). Its URL is the DSN of the database postgres. Stop is a
// fast shutdown, Kill an immediate one (as a crash); Pause hangs only the
// postmaster, not the backends of open connections.
func PostgresDaemon(t testing.TB) *Daemon {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(bins) == 0 {
		Unavailable(t, "the postgres binary", errors.New("not in /usr/lib/postgresql/*/bin"), postgresInstall)
	}
	bin := bins[len(bins)-1]
	dir, err := os.MkdirTemp("", "perpgate-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) }) // runs after the daemon's cleanup kills it
	asUser := runAsPostgres(t, dir)
	initdb := exec.Command(filepath.Join(filepath.Dir(bin), "initdb"), "-D", dir, "-U", "postgres", "-A", "trust", "--no-sync")
	asUser(initdb)
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("testenv: initdb: %v\n%s", err, out)
	}
	port := FreePort(t)
	return newDaemon(t, "postgres", bin, port, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
		[]string{"-D", dir, "-p", strconv.Itoa(port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
			"-c", "fsync=off"},
		func(d *Daemon) { d.run, d.stopSig, d.killSig = asUser, syscall.SIGINT, syscall.SIGQUIT })
}

// runAsPostgres returns what makes a command run as the postgres user
// (when the test is root; dir is handed to that user) in dir.
func runAsPostgres(t testing.TB, dir string) func(*exec.Cmd) {
	t.Helper()
	if os.Geteuid() != 0 {
		return func(cmd *exec.Cmd) { cmd.Dir = dir }
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		Unavailable(t, "the postgres user", err, postgresInstall)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	return func(cmd *exec.Cmd) {
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
}
