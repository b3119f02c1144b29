package hoststats

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// readVMStat reads /proc/vmstat, "name value" per line. procfs v0.23.0
// has no parser for this file (its FS.VM reads /proc/sys/vm, and its
// key-value helpers are internal), so this one is written here; it is
// strict, and names the line it cannot read.
func readVMStat(path string) (map[string]uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := make(map[string]uint64, 200)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("%s line %d: want \"name value\", got %q", path, n, sc.Text())
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: value of %s is not a counter: %q", path, n, f[0], f[1])
		}
		m[f[0]] = v
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("%s is empty", path)
	}
	return m, sc.Err()
}
