package hoststats

import (
	"fmt"
	"hash/fnv"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/internal/foldlog"
)

// fsName maps a mount point to an instance name: "/" is "root", otherwise
// the leading "/" is dropped and "/", blanks and control characters
// become "_" ("/var/log" is "var_log").
func fsName(mountPoint string) string {
	if mountPoint == "/" {
		return "root"
	}
	return cleanName(strings.Trim(mountPoint, "/"))
}

// swapName maps a swap device or file to the base name of its path.
func swapName(file string) string { return cleanName(path.Base(file)) }

func cleanName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r <= ' ' || r == 0x7f || r == utf8.RuneError {
			return '_'
		}
		return r
	}, s)
}

// uniqueNames names each of the distinct keys (mount points, swap files)
// by simple(key), deterministically from the set of keys alone:
//   - a name longer than spmi.MaxName, and
//   - a name shared with another key, for every key but the one that keeps
//     it (the shortest key, then the lexicographically smallest),
//
// become the first 22 bytes of the name, "~" and the 8 hex digits of the
// key's 32-bit FNV-1a hash. A name still shared after that (a hash
// collision) is "" and the caller leaves the key out.
func uniqueNames(keys []string, simple func(string) string) []string {
	names := make([]string, len(keys))
	owner := make(map[string]int, len(keys))
	for i, k := range keys {
		n := simple(k)
		names[i] = n
		if n == "" || len(n) > spmiwire.MaxName {
			names[i] = hashedName(n, k)
			continue
		}
		j, taken := owner[n]
		switch {
		case !taken:
			owner[n] = i
		case keeps(k, keys[j]):
			names[j] = hashedName(n, keys[j])
			owner[n] = i
		default:
			names[i] = hashedName(n, k)
		}
	}
	used := make(map[string]bool, len(names))
	for i, n := range names {
		if used[n] {
			names[i] = ""
		}
		used[n] = true
	}
	return names
}

func keeps(a, b string) bool { return len(a) < len(b) || len(a) == len(b) && a < b }

const hashSuffix = 9 // "~" and 8 hex digits

func hashedName(name, key string) string {
	h := fnv.New32a()
	h.Write([]byte(key))
	return fmt.Sprintf("%s~%08x", foldlog.Cut(name, spmiwire.MaxName-hashSuffix), h.Sum32())
}
