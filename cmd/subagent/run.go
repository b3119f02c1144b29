package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/daemon"
)

func runCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "run",
		Short: "Start the daemon",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			log := newLogger(cfg)
			d, err := daemon.New(cfg, log)
			if err != nil {
				return err
			}
			if err := addFrontends(d, cfg, log); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			log.Info("starting", "version", daemon.Version, "pid", os.Getpid(), "config", cfg.File,
				"run_dir", cfg.RunDir, "state_dir", cfg.StateDir, "agentx", cfg.AgentX, "listen", cfg.Listen)
			return d.Run(ctx)
		},
	}
}

func newLogger(c *config.Config) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.Log.Level))
	opts := &slog.HandlerOptions{Level: lvl}
	if c.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}
