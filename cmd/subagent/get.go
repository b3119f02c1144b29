package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfagent/subagent/spmi"
)

func getCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get PATH...",
		Short: "Read statistics as one statset",
		Long: "Read the named statistics at once. With --interval and --count, read them\n" +
			"again every interval and print counters as rates per second (their change\n" +
			"divided by the elapsed time) and quantities as levels.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			interval, _ := cmd.Flags().GetDuration("interval")
			count, _ := cmd.Flags().GetInt("count")
			if interval < 0 || (interval == 0 && cmd.Flags().Changed("count")) {
				return fmt.Errorf("--count needs a positive --interval")
			}
			if count < 1 {
				return fmt.Errorf("--count %d: must be at least 1", count)
			}
			r, err := openReader(cmd, cfg)
			if err != nil {
				return err
			}
			defer r.Close()
			ss, err := spmi.NewStatSet(cmd.Context(), r, args...)
			if err != nil {
				return err
			}
			first, err := ss.Read(cmd.Context())
			if err != nil {
				return err
			}
			if interval == 0 {
				return printOnce(os.Stdout, first)
			}
			return printRates(cmd, os.Stdout, ss, interval, count)
		},
	}
	cmd.Flags().Duration("interval", 0, "read again every interval and print rates")
	cmd.Flags().Int("count", 1, "number of readings with --interval")
	addLocalFlag(cmd)
	return cmd
}

func printOnce(out io.Writer, r spmi.Reading) error {
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	failed := 0
	for _, v := range r.Values {
		if v.Err != nil {
			failed++
			fmt.Fprintf(w, "%s\t%s\n", v.Path, v.Err)
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", v.Path, valueText(v.Stat, v.Value), describe(v.Stat))
	}
	w.Flush()
	if failed > 0 {
		return &exitErr{code: 1, msg: fmt.Sprintf("%d of %d statistics have no value", failed, len(r.Values))}
	}
	return nil
}

func describe(d *spmi.StatDesc) string {
	s := d.Val.String()
	if d.Units != "" {
		s += ", " + d.Units
	}
	return s
}

func printRates(cmd *cobra.Command, out io.Writer, ss *spmi.StatSet, interval time.Duration, count int) error {
	fmt.Fprintf(out, "%-8s", "time")
	for _, p := range ss.Paths() {
		fmt.Fprintf(out, " %14s", lastPart(p))
	}
	fmt.Fprintln(out)
	t := time.NewTicker(interval)
	defer t.Stop()
	for i := 0; i < count; i++ {
		select {
		case <-cmd.Context().Done():
			return cmd.Context().Err()
		case <-t.C:
		}
		r, err := ss.Read(cmd.Context())
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%-8s", r.Time.Format("15:04:05"))
		for _, v := range r.Values {
			fmt.Fprintf(out, " %14s", rateText(v))
		}
		fmt.Fprintln(out)
	}
	return nil
}

func rateText(v spmi.StatValue) string {
	switch {
	case v.Err != nil:
		return "-"
	case v.Stat.Val == spmi.SiCounter && v.HasRate:
		return fmt.Sprintf("%.2f/s", v.Rate)
	case v.Stat.Val == spmi.SiCounter:
		return "-"
	}
	return valueText(v.Stat, v.Value)
}

// valueText shows floats with the decimals they keep on the wire.
func valueText(d *spmi.StatDesc, v spmi.Value) string {
	if d.Data == spmi.SiFloat && !v.IsText() {
		return strconv.FormatFloat(v.Float64(), 'f', int(d.Scale), 64)
	}
	return v.String()
}

func lastPart(p string) string {
	p = strings.Trim(p, "/")
	if i := strings.LastIndex(p, "/"); i >= 0 && len(p) > 14 {
		return p[i+1:]
	}
	return p
}
