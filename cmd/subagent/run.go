package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/daemon"
	"github.com/perfagent/subagent/internal/sdnotify"
)

func runCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Start the daemon",
		// Markdown for the man page: code spans keep underscores.
		Long: "Start the daemon: serve the host's statistics as an AgentX subagent of\n" +
			"snmpd (--agentx) and through the standalone SNMP responder (--listen), with\n" +
			"the control, DDS and ARM sockets in the run directory.\n\n" +
			"Settings come from the configuration file (--config, or `SUBAGENT_CONFIG`),\n" +
			"then `SUBAGENT_*` environment variables, then flags; the defaults are built in.\n\n" +
			"SIGHUP rereads the configuration; SIGTERM and SIGINT stop the daemon. Under\n" +
			"systemd (Type=notify) it reports READY=1 once it serves, RELOADING=1 and\n" +
			"READY=1 around a reload, and STOPPING=1.\n\n" +
			"The installed service (subagent.service) runs it as the user subagent with\n" +
			"--config /etc/subagent/subagent.yaml, --run-dir /run/subagent and\n" +
			"--state-dir /var/lib/subagent, attached to snmpd through\n" +
			"/etc/snmp/snmpd.conf.d/subagent.conf.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			var level slog.LevelVar
			log := newLogger(cfg, &level)
			gc := daemon.TuneGC()
			d, err := daemon.NewServing(cfg, log, &level)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if f, _ := cmd.Flags().GetString("cpuprofile"); f != "" {
				out, err := os.Create(f)
				if err != nil {
					d.Discard()
					return err
				}
				defer out.Close()
				if err := pprof.StartCPUProfile(out); err != nil {
					d.Discard()
					return err
				}
				defer pprof.StopCPUProfile()
			}
			// Under systemd (Type=notify): ready once serving, stopping at
			// the first signal; reloads are announced in reloadOnHangup.
			d.OnReady = func() { notify(log, sdnotify.Ready) }
			stopping := make(chan struct{})
			go func() {
				<-ctx.Done()
				notify(log, sdnotify.Stopping)
				close(stopping)
			}()
			go reloadOnHangup(ctx, cmd, d, log)
			log.Info("starting", "version", daemon.Version, "pid", os.Getpid(), "config", cfg.File,
				"run_dir", cfg.RunDir, "state_dir", cfg.StateDir, "agentx", cfg.AgentX, "listen", cfg.Listen, "gc_percent", gc)
			err = d.Run(ctx)
			// STOPPING=1 is sent before the process exits, also when Run
			// failed on its own.
			stop()
			<-stopping
			return err
		},
	}
	cmd.Flags().String("cpuprofile", "", "write a CPU profile of the daemon to this file until it stops")
	cmd.Flags().MarkHidden("cpuprofile")
	return cmd
}

// reloadOnHangup rereads the configuration on SIGHUP; a file that does not
// load is refused as a whole and the running settings stay.
func reloadOnHangup(ctx context.Context, cmd *cobra.Command, d *daemon.Daemon, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			notify(log, sdnotify.ReloadingNow())
			if cfg, err := loadConfig(cmd); err != nil {
				log.Error("reload refused; the running settings stay", "err", err)
			} else {
				if cfg.File == "" {
					// make run: an edited configs/subagent.yaml is not reread.
					log.Warn("reload: no configuration file (--config or SUBAGENT_CONFIG), so the built-in defaults are reloaded; start the daemon with --config FILE to reload a file")
				}
				_ = d.Reload(cfg) // logs either way
			}
			// Either way the daemon serves again: systemd must not wait.
			notify(log, sdnotify.Ready)
		}
	}
}

// notify tells systemd the daemon's state when it runs the daemon; a
// failure is logged and changes nothing else.
func notify(log *slog.Logger, state string) {
	sent, err := sdnotify.Notify(state)
	if err != nil {
		log.Warn("sd_notify failed", "state", state, "err", err)
	} else if sent {
		log.Debug("sd_notify", "state", state)
	}
}

// newLogger logs at level, set here from c and by reloads.
func newLogger(c *config.Config, level *slog.LevelVar) *slog.Logger {
	level.Set(daemon.LogLevel(c))
	opts := &slog.HandlerOptions{Level: level}
	if c.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}
