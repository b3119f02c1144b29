package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/perfagent/subagent/client/consumer"
)

func createCmd() *cobra.Command {
	return changeCmd("create", "Create contexts made on request, such as RTime/LAN/<host>",
		"Ask the running daemon to create the contexts that the paths name where\n"+
			"a provider makes them on request: RTime/LAN/<host> starts measuring the\n"+
			"round trip to <host>, and keeps it (with its ASN.1 number) across restarts.\n"+
			"Reads (get, peek) never create anything. Only root, the daemon's user and\n"+
			"control.admin_uids/admin_gids may create (docs/SECURITY.md).",
		(*consumer.Client).Create)
}

func deleteCmd() *cobra.Command {
	return changeCmd("delete", "Delete contexts made on request, such as RTime/LAN/<host> or RTime/ARM/<app>",
		"Ask the running daemon to delete contexts that were created on request\n"+
			"(RTime/LAN/<host>) or by programs that are gone (RTime/ARM/<app>). Hosts\n"+
			"listed in the configuration go with the configuration: remove them there\n"+
			"and reload (SIGHUP). Only root, the daemon's user and\n"+
			"control.admin_uids/admin_gids may delete (docs/SECURITY.md).",
		(*consumer.Client).Delete)
}

func changeCmd(op, short, long string, do func(*consumer.Client, context.Context, string) error) *cobra.Command {
	return &cobra.Command{
		Use:   op + " PATH...",
		Short: short,
		Long:  long,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withClient(cmd, func(c *consumer.Client) error {
				for _, p := range args {
					if err := do(c, cmd.Context(), p); err != nil {
						return fmt.Errorf("%s %s: %w", op, p, err)
					}
				}
				return nil
			})
		},
	}
}
