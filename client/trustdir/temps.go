package trustdir

import (
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tempSuffix and tempHex spell the names tempName makes: ".<base>.tmp-"
// and 16 hexadecimal digits.
const (
	tempSuffix = ".tmp-"
	tempHex    = 16
)

// IsTemp tells whether name is one WriteFile gives its temporary file for
// base ("" any base): what a crash before its rename leaves behind.
func IsTemp(name, base string) bool {
	i := strings.LastIndex(name, tempSuffix)
	if i < 2 || name[0] != '.' || len(name)-i-len(tempSuffix) != tempHex {
		return false
	}
	if _, err := hex.DecodeString(name[i+len(tempSuffix):]); err != nil {
		return false
	}
	return base == "" || name[1:i] == base
}

// RemoveTemps removes the temporary files WriteFile left in dir when a
// crash interrupted it, those of the given bases (none: of any), and
// returns their paths. Only the caller may write in dir (the daemon holds
// its lock): a file being written by another process would be lost.
// Directories are left alone; a link is removed, never followed.
func RemoveTemps(dir string, bases ...string) (removed []string, err error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, de := range des {
		if de.IsDir() || !isTempOf(de.Name(), bases) {
			continue
		}
		p := filepath.Join(dir, de.Name())
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}

func isTempOf(name string, bases []string) bool {
	if len(bases) == 0 {
		return IsTemp(name, "")
	}
	for _, b := range bases {
		if IsTemp(name, b) {
			return true
		}
	}
	return false
}
