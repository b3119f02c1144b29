// Command subagent is the SPMI performance subagent: it serves the host's
// statistics as an SNMP subtree and lets people look at them locally.
package main

import (
	"fmt"
	"github.com/perfagent/subagent/client/spmiwire"
	"os"

	"github.com/spf13/cobra"

	"github.com/perfagent/subagent/client/rundir"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/daemon"
)

func main() {
	if err := rootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "subagent:", err)
		os.Exit(exitCode(err))
	}
}

// exitErr carries an exit status for errors already reported.
type exitErr struct {
	code int
	msg  string
}

func (e *exitErr) Error() string { return e.msg }

func exitCode(err error) int {
	if e, ok := err.(*exitErr); ok {
		return e.code
	}
	return 1
}

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "subagent",
		Short:         "SNMP subagent serving SPMI performance statistics",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       daemon.Version,
	}
	config.AddFlags(root.PersistentFlags())
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return config.FlagError(c.Flags(), err) })
	root.AddCommand(runCmd(), peekCmd(), getCmd(), createCmd(), deleteCmd(), exprCmd(), sloCmd(), mibCmd(), genManCmd())
	return root
}

// loadConfig loads the configuration and checks it by the domain
// packages' rules as well (daemon.Check): run, a reload and every command
// refuse the same settings.
func loadConfig(cmd *cobra.Command) (*config.Config, error) {
	cfg, err := config.Load(cmd.Flags())
	if err != nil {
		return nil, err
	}
	if err := daemon.Check(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// clientConfig is the configuration of a command that asks the daemon: a
// run directory not configured is found as every client library finds
// it (rundir.Find: this user's default, then the system daemon's).
func clientConfig(cmd *cobra.Command) (*config.Config, error) {
	cfg, err := loadConfig(cmd)
	if err == nil && cfg.RunDirDefault {
		cfg.RunDir = rundir.Find(spmiwire.SocketName)
	}
	return cfg, err
}
