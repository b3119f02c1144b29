// Command skipsum makes skipped tests visible: `go test` without -v says
// nothing of them. scripts/skips.sh runs every `go test` of `make test` as
// `go test -json | skipsum filter -log FILE`, which prints what go test
// without -v would (package results, failing tests' output) and records
// each skipped test with its reason in FILE; at the end `skipsum summary
// -log FILE` lists them. With -strict (CI) a skip not listed in the
// allowed file fails the run.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "filter":
		err = runFilter(os.Args[2:], os.Stdin, os.Stdout)
	case "summary":
		err = runSummary(os.Args[2:], os.Stdout)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "skipsum:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: go test -json ... | skipsum filter -log FILE\n       skipsum summary -log FILE [-allowed FILE] [-strict]")
	os.Exit(2)
}
