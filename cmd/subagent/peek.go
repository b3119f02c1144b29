package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/perfagent/subagent/client/spmiwire"
)

func peekCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "peek [PATH]",
		Short: "List contexts and statistics, like xmpeek",
		Long: "List the data hierarchy from PATH down (all of it without PATH): one line per\n" +
			"context (its path ends with /) and statistic, with its description; --oid adds\n" +
			"the relative dotted-decimal id and the full OID.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := clientConfig(cmd)
			if err != nil {
				return err
			}
			r, err := openReader(cmd, cfg)
			if err != nil {
				return err
			}
			defer r.Close()
			path := ""
			if len(args) == 1 {
				path = args[0]
			}
			depth, _ := cmd.Flags().GetInt("depth")
			if depth < 0 {
				return fmt.Errorf("--depth %d: want 0 (all) or more levels below PATH", depth)
			}
			withOID, _ := cmd.Flags().GetBool("oid")
			withCell, _ := cmd.Flags().GetBool("table-oid")
			// A page at a time: the daemon answers at most
			// spmiwire.MaxPeekPage entries, so a tree of any size costs
			// one page of memory here and there; columns align per page.
			from := ""
			for {
				entries, more, err := r.PeekPage(cmd.Context(), path, depth, from, spmiwire.MaxPeekPage)
				if err != nil {
					return err
				}
				if err := writeEntries(entries, withOID, withCell); err != nil {
					return err
				}
				if !more || len(entries) == 0 {
					return nil
				}
				from = entries[len(entries)-1].Rel
			}
		},
	}
	cmd.Flags().Int("depth", 0, "list only this many levels below PATH (0: all)")
	cmd.Flags().Bool("oid", false, "show the relative dotted-decimal id and the full OID")
	cmd.Flags().Bool("table-oid", false, "with the ids, also show each statistic's OID in the table view (- when it is in no table)")
	addLocalFlag(cmd)
	return cmd
}

func writeEntries(entries []spmiwire.Entry, withOID, withCell bool) error {
	w := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', 0)
	for _, e := range entries {
		if withCell {
			cell := e.Cell
			if cell == "" {
				cell = "-"
			}
			w.Write([]byte(e.Path + "\t" + e.Rel + "\t" + e.OID + "\t" + cell + "\t" + e.Descr + "\n"))
		} else if withOID {
			w.Write([]byte(e.Path + "\t" + e.Rel + "\t" + e.OID + "\t" + e.Descr + "\n"))
		} else {
			w.Write([]byte(e.Path + "\t" + e.Descr + "\n"))
		}
	}
	return w.Flush()
}
