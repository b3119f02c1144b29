package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"

	"github.com/spf13/cobra"
)

func getCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get PATH...",
		Short: "Read statistics as one statset",
		Long: "Read the named statistics at once. With --interval and --count, read them\n" +
			"again every interval and print counters as rates per second (their change\n" +
			"divided by the elapsed time; times in 1/100 s as percent of time) and\n" +
			"quantities as levels. --wait waits for a daemon or supplier just started.\n\n" +
			"A path that names no statistic is reported with the nearest path that\n" +
			"exists; the others are read all the same, and the exit status is 1.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := clientConfig(cmd)
			if err != nil {
				return err
			}
			interval, _ := cmd.Flags().GetDuration("interval")
			count, _ := cmd.Flags().GetInt("count")
			wait, _ := cmd.Flags().GetDuration("wait")
			if interval < 0 || (interval == 0 && cmd.Flags().Changed("count")) {
				return fmt.Errorf("--count needs a positive --interval")
			}
			if count < 1 {
				return fmt.Errorf("--count %d: must be at least 1", count)
			}
			if wait < 0 {
				return fmt.Errorf("--wait %v: must not be negative", wait)
			}
			paths := args // the daemon gives each its one spelling
			deadline := time.Now().Add(wait)
			if wait > 0 {
				waitForDaemon(cmd.Context(), cfg.RunDir, deadline)
			}
			r, err := openReader(cmd, cfg)
			if err != nil {
				return err
			}
			defer r.Close()
			ss, first, unknown, err := readFirst(cmd.Context(), r, paths, deadline)
			if err != nil {
				return err
			}
			// One unknown path does not hide the others' values.
			for _, it := range unknown {
				fmt.Fprintf(os.Stderr, "subagent: %v%s\n", it.Err, nearestHint(cmd.Context(), r, it))
			}
			switch {
			case ss == nil:
			case interval == 0:
				err = printOnce(os.Stdout, first)
			default:
				err = printRates(cmd, os.Stdout, ss, interval, count)
			}
			if err == nil && len(unknown) > 0 {
				err = &exitErr{code: 1, msg: fmt.Sprintf("%d of %d paths name no statistic", len(unknown), len(paths))}
			}
			return err
		},
	}
	cmd.Flags().Duration("interval", 0, "read again every interval and print rates")
	cmd.Flags().Int("count", 1, "number of readings with --interval")
	cmd.Flags().Duration("wait", 0, "wait up to this long for the daemon to answer and every statistic to have a value")
	addLocalFlag(cmd)
	return cmd
}

// waitForDaemon polls the control socket until it answers or deadline.
func waitForDaemon(ctx context.Context, runDir string, deadline time.Time) {
	if runDir == "" {
		return
	}
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if c, err := consumer.Dial(runDir); err == nil {
			c.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// readFirst makes the statset of the paths that name statistics and
// reads it once; the others come back with their errors (SiNotFound,
// SiBadArgument for a context). Until deadline it tries again while a
// path names nothing or a statistic has no value. The statset is nil when
// no path names a statistic.
func readFirst(ctx context.Context, r consumer.Source, paths []string, deadline time.Time) (*consumer.PathSet, consumer.Reading, []spmiwire.Item, error) {
	for {
		ss, first, unknown, err := readKnown(ctx, r, paths)
		missing := len(unknown) > 0
		var se *spmierr.Error
		if errors.As(err, &se) && se.Code == spmierr.SiNotFound {
			missing = true // gone between the check and the read
		}
		if err == nil {
			for _, v := range first.Values {
				missing = missing || v.Err != nil
			}
		}
		if !missing || !time.Now().Before(deadline) || ctx.Err() != nil {
			return ss, first, unknown, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// readKnown is one try of readFirst.
func readKnown(ctx context.Context, r consumer.Source, paths []string) (*consumer.PathSet, consumer.Reading, []spmiwire.Item, error) {
	ss, err := consumer.NewPathSet(ctx, r, paths...)
	var se *spmierr.Error
	var unknown []spmiwire.Item
	if errors.As(err, &se) {
		// Some path was refused: which ones, and a statset of the rest.
		s, err := r.Read(ctx, paths)
		if err != nil {
			return nil, consumer.Reading{}, nil, err
		}
		var known []string
		for i, it := range s.Items {
			if it.Err != nil && it.Err.Code != spmierr.SiNoValue {
				unknown = append(unknown, it)
			} else {
				known = append(known, paths[i])
			}
		}
		if len(known) == 0 {
			return nil, consumer.Reading{}, unknown, nil
		}
		ss, err = consumer.NewPathSet(ctx, r, known...)
		if err != nil {
			return nil, consumer.Reading{}, unknown, err
		}
	} else if err != nil {
		return nil, consumer.Reading{}, nil, err
	}
	first, err := ss.Read(ctx)
	return ss, first, unknown, err
}

func printOnce(out io.Writer, r consumer.Reading) error {
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	failed := 0
	for _, v := range r.Values {
		if why, ok := notYet(v); ok {
			fmt.Fprintf(w, "%s\t-\t%s\n", v.Path, why)
			continue
		}
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

// notYet tells a statistic that has no value because nothing was measured
// yet (a host created a moment ago) from one whose source failed.
func notYet(v consumer.StatValue) (string, bool) {
	if !v.NotYet || v.Err == nil {
		return "", false
	}
	return v.Err.Msg, true // the daemon's reason: no reply yet, or why not
}

// statKind is the statistic's value type as a reader sees it: a text, a
// counter or a quantity, integer or float.
func statKind(d *spmiwire.StatDesc) string {
	if d.Data == spmiwire.SiText {
		return "text"
	}
	return spmiwire.ValText(d.Val)
}

func describe(d *spmiwire.StatDesc) string {
	s := statKind(d)
	if d.Data == spmiwire.SiFloat {
		s += ", float"
	}
	if d.Units != "" {
		s += ", " + d.Units
	}
	if percentOfTime(d) {
		s += " (rate: percent of time)"
	}
	return s
}

// percentOfTime is a counter of time in hundredths of a second (CPU time,
// disk busy; docs/TREE.md, Units): its rate per second is a percent.
func percentOfTime(d *spmiwire.StatDesc) bool {
	return d.Val == ddswire.SiCounter && d.Data != spmiwire.SiText && d.Units == "1/100 s"
}

func printRates(cmd *cobra.Command, out io.Writer, ss *consumer.PathSet, interval time.Duration, count int) error {
	// Full paths head the columns; each column is as wide as its path.
	paths := ss.Paths()
	width := make([]int, len(paths))
	fmt.Fprintf(out, "%-8s", "time")
	for i, p := range paths {
		width[i] = max(len(p), 12)
		fmt.Fprintf(out, "  %*s", width[i], p)
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
		for j, v := range r.Values {
			fmt.Fprintf(out, "  %*s", width[j], rateText(v))
		}
		fmt.Fprintln(out)
	}
	return nil
}

func rateText(v consumer.StatValue) string {
	switch {
	case v.Err != nil:
		return "-"
	case v.Stat.Val == ddswire.SiCounter && v.Stat.Data == spmiwire.SiText:
		return v.Value.String()
	case percentOfTime(v.Stat) && v.HasRate:
		return fmt.Sprintf("%.2f%%", v.Rate)
	case v.Stat.Val == ddswire.SiCounter && v.HasRate:
		return fmt.Sprintf("%.2f/s", v.Rate)
	case v.Stat.Val == ddswire.SiCounter:
		return "-"
	}
	return valueText(v.Stat, v.Value)
}

// valueText shows floats with the decimals they keep on the wire.
func valueText(d *spmiwire.StatDesc, v spmiwire.Value) string {
	if d.Data == spmiwire.SiFloat && !v.IsText() {
		return strconv.FormatFloat(v.Float64(), 'f', int(d.Scale), 64)
	}
	if v.IsText() && v.String() == "" {
		return `""` // an empty text is a value: the columns stay readable
	}
	return v.String()
}
