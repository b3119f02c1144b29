package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// genManCmd writes the man pages of every command from their own help, for
// `make man`; hidden because operators read the pages, not write them.
func genManCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "gen-man DIR",
		Short:  "Write the man pages (section 1) of every command into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return err
			}
			root := cmd.Root()
			date, err := manDate()
			if err != nil {
				return err
			}
			// No Title: each page is titled by its command (SUBAGENT-RUN).
			hdr := &doc.GenManHeader{Section: "1", Source: "subagent " + root.Version,
				Manual: "subagent manual", Date: &date}
			root.DisableAutoGenTag = true
			if err := doc.GenManTree(root, hdr, args[0]); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			return nil
		},
	}
}

// manDate is SOURCE_DATE_EPOCH when set (reproducible builds: the same
// source gives the same pages and package), else now.
func manDate() (time.Time, error) {
	v := os.Getenv("SOURCE_DATE_EPOCH")
	if v == "" {
		return time.Now().UTC(), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", v, err)
	}
	return time.Unix(n, 0).UTC(), nil
}
