package consumer

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/client/trustdir"
)

// Client talks to a running daemon. It is a AfterSource.
type Client struct {
	mu   sync.Mutex
	conn net.Conn
	rd   *bufio.Reader
	path string
}

// Dial connects to the daemon of runDir; an error means none is running
// there, or that another user could have put the socket there (trustdir).
func Dial(runDir string) (*Client, error) {
	path := spmiwire.SocketPath(runDir)
	if err := trustdir.Check(runDir); err != nil {
		return nil, fmt.Errorf("not asking %s: %w", path, err)
	}
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return nil, err
	}
	return &Client{conn: c, rd: bufio.NewReaderSize(c, 64<<10), path: path}, nil
}

// Close ends the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Path is the socket the client is connected to.
func (c *Client) Path() string { return c.path }

func (c *Client) call(ctx context.Context, req spmiwire.Request) (*spmiwire.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	dl := time.Now().Add(30 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	c.conn.SetDeadline(dl)
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if len(b) >= spmiwire.MaxRequest {
		return nil, fmt.Errorf("a %s request of %d bytes is over the control socket's %d; ask for fewer paths at a time", req.Op, len(b), spmiwire.MaxRequest)
	}
	if _, err := c.conn.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("daemon at %s: %w", c.path, err)
	}
	line, err := readLine(c.rd)
	if err != nil {
		return nil, fmt.Errorf("daemon at %s: %w", c.path, err)
	}
	var resp spmiwire.Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return nil, fmt.Errorf("daemon at %s sent a malformed answer: %w", c.path, err)
	}
	return &resp, resp.Failure()
}

func readLine(r *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		part, isPrefix, err := r.ReadLine()
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
		if len(out) > spmiwire.MaxLine {
			return nil, fmt.Errorf("answer longer than %d bytes", spmiwire.MaxLine)
		}
		if !isPrefix {
			return out, nil
		}
	}
}

// Peek lists the hierarchy the daemon serves, from path down.
func (c *Client) Peek(ctx context.Context, path string) ([]spmiwire.Entry, error) {
	r, err := c.call(ctx, spmiwire.Request{Op: "peek", Path: path})
	if err != nil {
		return nil, err
	}
	return r.Peek, nil
}

// PeekPage lists depth levels below path (0: all), the entries after the
// relative id from ("": from path itself), at most limit (spmiwire.MaxPeekPage
// when 0); more says entries remain (ask again from the last one's Rel).
func (c *Client) PeekPage(ctx context.Context, path string, depth int, from string, limit int) ([]spmiwire.Entry, bool, error) {
	if limit <= 0 {
		limit = spmiwire.MaxPeekPage
	}
	r, err := c.call(ctx, spmiwire.Request{Op: "peek", Path: path, Depth: depth, From: from, Limit: limit})
	if err != nil {
		return nil, false, err
	}
	return r.Peek, r.More, nil
}

// Read implements Source.
func (c *Client) Read(ctx context.Context, paths []string) (spmiwire.Sample, error) {
	return c.ReadAfter(ctx, paths, time.Time{})
}

// ReadAfter implements AfterSource: the daemon refreshes unless its
// snapshot is newer than t.
func (c *Client) ReadAfter(ctx context.Context, paths []string, t time.Time) (spmiwire.Sample, error) {
	r, err := c.call(ctx, spmiwire.Request{Op: "get", Paths: paths, After: t})
	if err != nil {
		return spmiwire.Sample{}, err
	}
	if r.Sample == nil {
		return spmiwire.Sample{}, fmt.Errorf("daemon at %s answered get without values", c.path)
	}
	return *r.Sample, nil
}

// Create creates the context a path names where a provider makes them on
// request (RTime/LAN/<host>); the daemon allows it to admins only.
func (c *Client) Create(ctx context.Context, path string) error {
	_, err := c.call(ctx, spmiwire.Request{Op: "create", Path: path})
	return err
}

// Delete deletes a context created on request (spmi.Deleter).
func (c *Client) Delete(ctx context.Context, path string) error {
	_, err := c.call(ctx, spmiwire.Request{Op: "delete", Path: path})
	return err
}

// ExprList lists the daemon's derived statistics and alarms.
func (c *Client) ExprList(ctx context.Context) ([]spmiwire.ExprDef, error) {
	r, err := c.call(ctx, spmiwire.Request{Op: "expr.list"})
	if err != nil {
		return nil, err
	}
	return r.Defs, nil
}

// ExprCreate creates or replaces a derived statistic or an alarm, kept
// across restarts (admins only).
func (c *Client) ExprCreate(ctx context.Context, d spmiwire.ExprDef) error {
	_, err := c.call(ctx, spmiwire.Request{Op: "expr.create", Def: &d})
	return err
}

// ExprDelete deletes one created with ExprCreate or over SNMP (admins only).
func (c *Client) ExprDelete(ctx context.Context, kind, name string) error {
	_, err := c.call(ctx, spmiwire.Request{Op: "expr.delete", Def: &spmiwire.ExprDef{Kind: kind, Name: name}})
	return err
}

// SLOList lists the daemon's service level objectives.
func (c *Client) SLOList(ctx context.Context) ([]spmiwire.ObjectiveDef, error) {
	r, err := c.call(ctx, spmiwire.Request{Op: "slo.list"})
	if err != nil {
		return nil, err
	}
	return r.Objectives, nil
}

// SLOCreate creates or replaces an objective, kept across restarts
// (admins only).
func (c *Client) SLOCreate(ctx context.Context, o spmiwire.ObjectiveDef) error {
	_, err := c.call(ctx, spmiwire.Request{Op: "slo.create", Objective: &o})
	return err
}

// SLODelete deletes one created with SLOCreate or over SNMP (admins only).
func (c *Client) SLODelete(ctx context.Context, name string) error {
	_, err := c.call(ctx, spmiwire.Request{Op: "slo.delete", Objective: &spmiwire.ObjectiveDef{Name: name}})
	return err
}

// Status describes the daemon.
func (c *Client) Status(ctx context.Context) (*spmiwire.Status, error) {
	r, err := c.call(ctx, spmiwire.Request{Op: "status"})
	if err != nil {
		return nil, err
	}
	return r.Status, nil
}

// HotsetCreate makes an empty hotset in this connection's session.
func (c *Client) HotsetCreate(ctx context.Context) (int, error) {
	r, err := c.call(ctx, spmiwire.Request{Op: "hotset.create"})
	if err != nil {
		return 0, err
	}
	return r.ID, nil
}

// HotsetAdd adds a peer set to hotset id and returns its index.
func (c *Client) HotsetAdd(ctx context.Context, id int, d spmiwire.HotDef) (int, error) {
	r, err := c.call(ctx, spmiwire.Request{Op: "hotset.add", ID: id, Hot: &d})
	if err != nil {
		return 0, err
	}
	return r.ID, nil
}

// HotsetDel removes peer set index from hotset id.
func (c *Client) HotsetDel(ctx context.Context, id, index int) error {
	_, err := c.call(ctx, spmiwire.Request{Op: "hotset.del", ID: id, Index: index})
	return err
}

// HotsetGet reads every peer set of hotset id from a snapshot newer than
// after.
func (c *Client) HotsetGet(ctx context.Context, id int, after time.Time) (*spmiwire.HotResult, error) {
	r, err := c.call(ctx, spmiwire.Request{Op: "hotset.get", ID: id, After: after})
	if err != nil {
		return nil, err
	}
	if r.Hot == nil {
		return nil, fmt.Errorf("daemon at %s answered hotset.get without values", c.path)
	}
	return r.Hot, nil
}

// HotsetFree deletes hotset id.
func (c *Client) HotsetFree(ctx context.Context, id int) error {
	_, err := c.call(ctx, spmiwire.Request{Op: "hotset.free", ID: id})
	return err
}

// StatSetCreate makes an empty statset in this connection's session.
func (c *Client) StatSetCreate(ctx context.Context) (int, error) {
	r, err := c.call(ctx, spmiwire.Request{Op: "statset.create"})
	if err != nil {
		return 0, err
	}
	return r.ID, nil
}

// StatSetAdd adds up to MaxPaths statistics to statset id, all or none,
// and returns how many it holds. Each must name a statistic, unless keep
// (a set made again after a restart: a path that names nothing now has
// that error for value).
func (c *Client) StatSetAdd(ctx context.Context, id int, paths []string, keep bool) (int, error) {
	r, err := c.call(ctx, spmiwire.Request{Op: "statset.add", ID: id, Paths: paths, Keep: keep})
	if err != nil {
		return 0, err
	}
	return r.ID, nil
}

// StatSetGet reads statset id from a snapshot newer than after: one
// value a statistic, in the order added, without paths or descriptions.
func (c *Client) StatSetGet(ctx context.Context, id int, after time.Time) (spmiwire.Sample, error) {
	r, err := c.call(ctx, spmiwire.Request{Op: "statset.get", ID: id, After: after})
	if err != nil {
		return spmiwire.Sample{}, err
	}
	if r.Sample == nil {
		return spmiwire.Sample{}, fmt.Errorf("daemon at %s answered statset.get without values", c.path)
	}
	return *r.Sample, nil
}

// StatSetFree deletes statset id.
func (c *Client) StatSetFree(ctx context.Context, id int) error {
	_, err := c.call(ctx, spmiwire.Request{Op: "statset.free", ID: id})
	return err
}
