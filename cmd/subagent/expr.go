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

// exprCmd lists, creates and deletes derived statistics and alarms
// through the control socket (docs/EXPRESSIONS.md).
func exprCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "expr",
		Short: "List, create and delete derived statistics and alarms",
		Long: "List the running daemon's derived statistics and alarms, or create and delete\n" +
			"them: those created here are checked as the configuration file's are, kept\n" +
			"across restarts, and are the rows of derivedDefTable and alarmDefTable that\n" +
			"managers see and write over SNMP, within expressions.max_snmp_derived and\n" +
			"max_snmp_alarms. Only root, the daemon's user and control.admin_uids/admin_gids\n" +
			"may create and delete (docs/SECURITY.md).",
	}
	cmd.AddCommand(exprListCmd(), exprCreateCmd(), exprDeleteCmd())
	return cmd
}

// withClient runs do with a connection to the daemon of cmd's settings.
func withClient(cmd *cobra.Command, do func(*consumer.Client) error) error {
	cfg, err := clientConfig(cmd)
	if err != nil {
		return err
	}
	c, err := consumer.Dial(cfg.RunDir)
	if err != nil && noDaemon(err) {
		return fmt.Errorf("no daemon at %s: %w", spmiwire.SocketPath(cfg.RunDir), err)
	} else if err != nil {
		return daemonError(cfg.RunDir, err)
	}
	defer c.Close()
	return do(c)
}

func exprListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the derived statistics and alarms, with where each comes from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withClient(cmd, func(c *consumer.Client) error {
				defs, err := c.ExprList(cmd.Context())
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "KIND\tNAME\tSTORAGE\tEXPR\tSETTINGS")
				for _, d := range defs {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", d.Kind, d.Name, d.Storage, d.Expr, exprSettings(d))
				}
				return w.Flush()
			})
		},
	}
}

// exprSettings is a definition's settings other than its expression.
func exprSettings(d spmiwire.ExprDef) string {
	if d.Kind == "alarm" {
		s := fmt.Sprintf("for=%d keep=%d severity=%d cleared=%t", d.For, d.Keep, d.Severity, d.Cleared)
		if d.Frequency > 0 {
			s += " frequency=" + (time.Duration(d.Frequency) * time.Second).String()
		}
		if d.Rising != nil {
			s += " rising=" + strconv.FormatFloat(*d.Rising, 'g', -1, 64)
		}
		if d.Falling != nil {
			s += " falling=" + strconv.FormatFloat(*d.Falling, 'g', -1, 64)
		}
		if d.TrapNo > 0 {
			s += " trap_no=" + strconv.Itoa(d.TrapNo)
		}
		return s
	}
	return fmt.Sprintf("units=%q scale=%d signed=%t", d.Units, d.Scale, d.Signed)
}

func exprCreateCmd() *cobra.Command {
	var d spmiwire.ExprDef
	var rising, falling float64
	var freq time.Duration
	cmd := &cobra.Command{
		Use:   "create derived|alarm NAME EXPR",
		Short: "Create or replace a derived statistic or an alarm",
		Long: "Create, or replace, a derived statistic or an alarm with the configuration\n" +
			"file's settings as flags: --description, --units, --scale and --signed for a\n" +
			"derived statistic; --for, --keep, --severity, --rising, --falling, --cleared,\n--frequency " +
			"and --trap-no for an alarm. A flag of the other kind is refused.",
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			d.Kind, d.Name, d.Expr = args[0], args[1], args[2]
			other := []string{"for", "keep", "severity", "rising", "falling", "cleared", "frequency", "trap-no"}
			if d.Kind == "alarm" {
				other = []string{"description", "units", "scale", "signed"}
			}
			for _, f := range other {
				if cmd.Flags().Changed(f) {
					return fmt.Errorf("--%s is not a setting of a %s", f, d.Kind)
				}
			}
			if cmd.Flags().Changed("rising") {
				d.Rising = &rising
			}
			if cmd.Flags().Changed("falling") {
				d.Falling = &falling
			}
			if freq%time.Second != 0 {
				return fmt.Errorf("--frequency %v is not whole seconds", freq)
			}
			d.Frequency = int(freq / time.Second)
			return withClient(cmd, func(c *consumer.Client) error { return c.ExprCreate(cmd.Context(), d) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&d.Description, "description", "", "the derived statistic's description")
	f.StringVar(&d.Units, "units", "", "the derived statistic's units")
	f.IntVar(&d.Scale, "scale", 0, "decimal places served (0 to 6)")
	f.BoolVar(&d.Signed, "signed", false, "served as an Integer32 that may be negative")
	f.IntVar(&d.For, "for", 1, "evaluations the alarm's condition must hold before it fires")
	f.IntVar(&d.Keep, "keep", 1, "evaluations it must be false before it clears")
	f.IntVar(&d.Severity, "severity", 0, "the alarm's severity (0 to 32767)")
	f.Float64Var(&rising, "rising", 0, "fire from this value up (a value's alarm)")
	f.Float64Var(&falling, "falling", 0, "with --rising: clear at this value or below")
	f.BoolVar(&d.Cleared, "cleared", false, "send alarmCleared back at inactive")
	f.DurationVar(&freq, "frequency", 0, "the least time between two notified raises of one instance (0: none)")
	f.IntVar(&d.TrapNo, "trap-no", 0, "raise with alarmTrapN (base.0.N), N this number, instead of alarmRaised (0: alarmRaised)")
	return cmd
}

func exprDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete derived|alarm NAME",
		Short: "Delete a derived statistic or an alarm created here or over SNMP",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withClient(cmd, func(c *consumer.Client) error { return c.ExprDelete(cmd.Context(), args[0], args[1]) })
		},
	}
}
