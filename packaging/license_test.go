package packaging

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The samples reproduced from the guides: their text is the guides', not
// this project's to license.
var notOurs = map[string]bool{
	"samples/arm/sample.c":            true,
	"samples/spmi/SpmiSupl.c":         true,
	"samples/spmi/SpmiSupl1.c":        true,
	"samples/spmi/SpmiDataTraverse.c": true,
	"samples/spmi/SpmiDataUser.c":     true,
}

// TestCSourcesCarrySPDX: every C header and source a vendor may copy
// starts with the SPDX identifier of the repository's license, so a new
// file cannot ship without one.
func TestCSourcesCarrySPDX(t *testing.T) {
	const want = "/* SPDX-License-Identifier: Apache-2.0 */"
	if b, err := os.ReadFile(filepath.Join(repo, "LICENSE")); err != nil || !strings.Contains(string(b), "Apache License\n                           Version 2.0, January 2004") {
		t.Fatalf("LICENSE is not the Apache License 2.0: %v", err)
	}
	var files []string
	for _, g := range []string{"libspmi/include/*.h", "libspmi/include/sys/*.h", "libspmi/src/*.[ch]",
		"libspmi/src/*/*.[ch]", "libarm/arm.h", "libarm/src/*.[ch]", "samples/spmi/*.c", "samples/arm/*.c"} {
		m, err := filepath.Glob(filepath.Join(repo, g))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("only %d C files found", len(files))
	}
	for _, f := range files {
		rel, _ := filepath.Rel(repo, f)
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Scan()
		first := sc.Text()
		fh.Close()
		if has := first == want; has == notOurs[rel] {
			t.Errorf("%s: first line %q; want %q (none for the guides' samples)", rel, first, want)
		}
	}
}
