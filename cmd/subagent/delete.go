package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/perfagent/subagent/control"
)

func deleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete PATH...",
		Short: "Delete contexts created by reference, such as RTime/LAN/<host>",
		Long: "Ask the running daemon to delete contexts that a reference by path\n" +
			"created (RTime/LAN/<host>). Hosts listed in the configuration go with\n" +
			"the configuration: remove them there and reload (SIGHUP).",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			c, err := control.Dial(cfg.RunDir)
			if err != nil {
				return fmt.Errorf("no daemon at %s: %w", control.SocketPath(cfg.RunDir), err)
			}
			defer c.Close()
			for _, p := range args {
				if err := c.Delete(cmd.Context(), p); err != nil {
					return fmt.Errorf("delete %s: %w", p, err)
				}
			}
			return nil
		},
	}
}
