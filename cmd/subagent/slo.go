package main

import (
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/spmiwire"
)

// sloCmd lists, creates and deletes service level objectives through the
// control socket (docs/ARM.md, "Service levels").
func sloCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "slo",
		Short: "List, create and delete service level objectives of ARM transactions",
		Long: "List the running daemon's service level objectives, or create and delete\n" +
			"them: those created here are checked as the configuration file's are, kept\n" +
			"across restarts, and are the rows of sloDefTable that managers see and write\n" +
			"over SNMP, within slo.max_snmp_objectives. Only root, the daemon's user and\n" +
			"control.admin_uids/admin_gids may create and delete (docs/SECURITY.md).",
	}
	cmd.AddCommand(sloListCmd(), sloCreateCmd(), sloDeleteCmd())
	return cmd
}

func sloListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the objectives, with where each comes from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withClient(cmd, func(c *consumer.Client) error {
				objs, err := c.SLOList(cmd.Context())
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "NAME\tSTORAGE\tAPPLICATION\tTRANSACTION\tTHRESHOLD\tTARGET\tWINDOW")
				for _, o := range objs {
					th := "availability"
					if o.Threshold > 0 {
						th = (time.Duration(o.Threshold) * time.Microsecond).String()
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", o.Name, o.Storage, o.Application, o.Transaction, th,
						strconv.FormatFloat(o.Target, 'f', -1, 64), time.Duration(o.Window)*time.Second)
				}
				return w.Flush()
			})
		},
	}
}

func sloCreateCmd() *cobra.Command {
	var o spmiwire.ObjectiveDef
	var threshold, window time.Duration
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create or replace an objective",
		Long: "Create, or replace, an objective with the configuration file's settings as\n" +
			"flags: --application and --transaction (patterns), --threshold (absent: an\n" +
			"availability objective), --target (a ratio: 0.999 is 99.9 %) and --window.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if threshold%time.Microsecond != 0 {
				return fmt.Errorf("--threshold %v is not whole microseconds", threshold)
			}
			if window%time.Second != 0 {
				return fmt.Errorf("--window %v is not whole seconds", window)
			}
			o.Threshold, o.Window = int64(threshold/time.Microsecond), int64(window/time.Second)
			return withClient(cmd, func(c *consumer.Client) error { return c.SLOCreate(cmd.Context(), o) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Application, "application", "", "pattern of the application keys (* ? [...])")
	f.StringVar(&o.Transaction, "transaction", "", "pattern of the transaction keys")
	f.DurationVar(&threshold, "threshold", 0, "latency threshold, 1us to 1h (0: availability)")
	f.Float64Var(&o.Target, "target", 0, "target ratio of good completions, 0.5 to 0.99999")
	f.DurationVar(&window, "window", 720*time.Hour, "the window, 1h to 2160h")
	return cmd
}

func sloDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete an objective created here or over SNMP",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withClient(cmd, func(c *consumer.Client) error { return c.SLODelete(cmd.Context(), args[0]) })
		},
	}
}
