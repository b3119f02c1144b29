package main

import (
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"
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
			cfg, err := loadConfig(cmd)
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
				path = canonicalPaths(args)[0]
			}
			entries, err := r.Peek(cmd.Context(), path)
			if err != nil {
				return err
			}
			withOID, _ := cmd.Flags().GetBool("oid")
			withCell, _ := cmd.Flags().GetBool("table-oid")
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
		},
	}
	cmd.Flags().Bool("oid", false, "show the relative dotted-decimal id and the full OID")
	cmd.Flags().Bool("table-oid", false, "with the ids, also show each statistic's OID in the table view (- when it is in no table)")
	addLocalFlag(cmd)
	return cmd
}
