package main

import (
	"log/slog"

	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/daemon"
)

// addFrontends attaches the SNMP front ends the configuration asks for.
func addFrontends(d *daemon.Daemon, cfg *config.Config, log *slog.Logger) error {
	return nil
}
