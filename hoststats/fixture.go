package hoststats

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// FixtureConfig reads the fixed fake host in <root>/testdata (root is the
// hoststats directory), with fixed file system sizes and a fixed page
// size, so that every package builds the same reference hierarchy.
func FixtureConfig(root string) Config {
	return Config{
		ProcRoot:      filepath.Join(root, "testdata", "proc"),
		SysRoot:       filepath.Join(root, "testdata", "sys"),
		StatfsTimeout: time.Second,
		Statfs:        FixtureStatfs,
		pageSize:      4096,
	}
}

// fixtureFS are the statfs answers for the mount points of the fixture's
// mountinfo; the sizes are plausible for the disks in its diskstats.
var fixtureFS = map[string]unix.Statfs_t{
	"/":               {Bsize: 4096, Frsize: 4096, Blocks: 61022208, Bfree: 23456789, Bavail: 20345678, Files: 15261696, Ffree: 13876543},
	"/boot":           {Bsize: 4096, Frsize: 4096, Blocks: 249830, Bfree: 187654, Bavail: 174321, Files: 65536, Ffree: 65210},
	"/boot/efi":       {Bsize: 4096, Frsize: 4096, Blocks: 130812, Bfree: 128996, Bavail: 128996},
	"/home":           {Bsize: 4096, Frsize: 4096, Blocks: 244059136, Bfree: 98765432, Bavail: 98765432, Files: 488364032, Ffree: 487654321},
	"/run":            {Bsize: 4096, Frsize: 4096, Blocks: 407586, Bfree: 405432, Bavail: 405432, Files: 2037930, Ffree: 2036789},
	"/srv/backup set": {Bsize: 1048576, Frsize: 4096, Blocks: 8589934592, Bfree: 3221225472, Bavail: 3221225472, Files: 274877906944, Ffree: 274877000000},
}

// FixtureStatfs answers statfs for the fixture's mount points and
// ENOENT for every other path.
func FixtureStatfs(path string, st *unix.Statfs_t) error {
	v, ok := fixtureFS[path]
	if !ok {
		return unix.ENOENT
	}
	*st = v
	return nil
}

// AddFixtureProcs adds n processes, PIDs 10000 to 9999+n, to the /proc at
// dst: each the fixture's java process (root/testdata/proc/1187)
// renumbered. The benchmarks' host of many processes.
func AddFixtureProcs(root, dst string, n int) error {
	stat, err := os.ReadFile(filepath.Join(root, "testdata", "proc", "1187", "stat"))
	if err != nil {
		return err
	}
	rest := strings.TrimPrefix(string(stat), "1187 ")
	for pid := 10000; pid < 10000+n; pid++ {
		dir := filepath.Join(dst, strconv.Itoa(pid))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(strconv.Itoa(pid)+" "+rest), 0o644); err != nil {
			return err
		}
	}
	return nil
}
