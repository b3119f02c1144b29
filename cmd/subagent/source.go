package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/perfagent/subagent/client/spmiwire"

	"github.com/spf13/cobra"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/daemon"
	"github.com/perfagent/subagent/spmi"
)

// reader is what peek and get read from: the running daemon, or the host
// directly when no daemon runs.
type reader interface {
	consumer.Source
	Peek(ctx context.Context, path string) ([]spmiwire.Entry, error)
	// PeekPage is a page of a listing (consumer.Client.PeekPage).
	PeekPage(ctx context.Context, path string, depth int, from string, limit int) ([]spmiwire.Entry, bool, error)
	io.Closer
}

type localReader struct{ h *spmi.Hierarchy }

func (l localReader) Read(ctx context.Context, paths []string) (spmiwire.Sample, error) {
	return l.h.Read(ctx, paths)
}

// ReadAfter makes localReader a consumer.AfterSource, so that statsets read
// closer than refresh.min_age still give rates.
func (l localReader) ReadAfter(ctx context.Context, paths []string, t time.Time) (spmiwire.Sample, error) {
	return l.h.ReadAfter(ctx, paths, t)
}
func (l localReader) Peek(_ context.Context, path string) ([]spmiwire.Entry, error) {
	return spmi.Peek(l.h.Fresh(), path)
}
func (l localReader) PeekPage(_ context.Context, path string, depth int, from string, limit int) ([]spmiwire.Entry, bool, error) {
	return spmi.PeekPage(l.h.Fresh(), path, depth, from, limit)
}
func (l localReader) Close() error { return nil }

func openReader(cmd *cobra.Command, cfg *config.Config) (reader, error) {
	if local, _ := cmd.Flags().GetBool("local"); !local {
		c, err := consumer.Open(cfg.RunDir)
		if err == nil {
			return c, nil
		}
		if !noDaemon(err) {
			return nil, fmt.Errorf("%w; --local reads this host directly instead", daemonError(cfg.RunDir, err))
		}
		fmt.Fprintf(os.Stderr, "subagent: no daemon at %s; reading this host directly\n", spmiwire.SocketPath(cfg.RunDir))
	}
	// Numbers of disks and file systems come from the daemon's state when
	// it is readable, so that local and daemon output agree.
	var num *spmi.Numbering
	if cfg.StateDir != "" {
		num, _ = spmi.LoadNumbering(cfg.StateDir + "/" + daemon.NumberingFile)
	}
	if num != nil {
		num = readOnly(num)
	}
	h, _, err := daemon.NewHierarchy(cfg, num, nil)
	if err != nil {
		return nil, err
	}
	return localReader{h: h}, nil
}

// readOnly keeps a local reader from writing the daemon's state file.
func readOnly(n *spmi.Numbering) *spmi.Numbering { return n.Detached() }

func addLocalFlag(cmd *cobra.Command) {
	cmd.Flags().Bool("local", false, "read the host directly even when a daemon runs")
}
