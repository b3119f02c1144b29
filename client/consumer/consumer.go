// Package consumer is the SPMI guide's data-consumer API in Go: walk the
// daemon's hierarchy (SpmiPathGetCx, SpmiFirstCx/NextCx,
// SpmiFirstStat/NextStat), read statistics in sets (SpmiCreateStatSet,
// SpmiPathAddSetStat, SpmiGetStatSet: one round trip however many
// statistics, counters with their change and rate per second) and watch
// peer statistics in hotsets created at run time (SpmiCreateHotSet,
// SpmiAddSetHot, SpmiGetHotSet).
//
// It talks to a running daemon through its control socket, under the
// permissions docs/SECURITY.md describes. Statsets are paths kept here, so
// they stay valid across a daemon restart; hotsets live in the daemon's
// session and are created again on the new connection after a restart, as
// the supplier libraries replay their registrations. A restart costs at
// most the read that meets it.
package consumer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/rundir"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// Consumer is a connection to the daemon of one run directory. It is safe
// for concurrent use.
type Consumer struct {
	runDir string

	mu  sync.Mutex
	c   *Client
	gen int // connections made, so hotsets know when to replay
}

// Open connects to the daemon whose run directory is runDir; "" finds it
// as libSpmi and every client library do (client/rundir:
// $SUBAGENT_RUN_DIR, else this user's default, then /run/subagent). No
// daemon there is SiInitFailed, as SpmiInit's.
func Open(runDir string) (*Consumer, error) {
	if runDir == "" {
		runDir = rundir.Find(spmiwire.SocketName)
	}
	c, err := Dial(runDir)
	if err != nil {
		return nil, initFailed(runDir, err)
	}
	return &Consumer{runDir: runDir, c: c, gen: 1}, nil
}

// Close ends the connection; the session's hotsets go with it.
func (c *Consumer) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return nil
	}
	err := c.c.Close()
	c.c = nil
	return err
}

// client returns the connection, dialling again after a failure.
func (c *Consumer) client() (*Client, int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		cl, err := Dial(c.runDir)
		if err != nil {
			return nil, c.gen, initFailed(c.runDir, err)
		}
		c.c = cl
		c.gen++
	}
	return c.c, c.gen, nil
}

// initFailed is the guide's SiInitFailed for a daemon that cannot be
// reached, with the cause (errors.Is sees fs.ErrNotExist, ECONNREFUSED,
// fs.ErrPermission).
func initFailed(runDir string, err error) error {
	return &spmierr.Error{Code: spmierr.SiInitFailed, Msg: fmt.Sprintf("cannot reach the daemon at %s: %v", spmiwire.SocketPath(runDir), err), Err: err}
}

// failed drops a connection that broke, so that the next call dials again.
func (c *Consumer) failed(cl *Client, err error) {
	var se *spmierr.Error
	if errors.As(err, &se) {
		return // the daemon answered: the connection is fine
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == cl {
		c.c.Close()
		c.c = nil
	}
}

// do runs f on the connection; a broken one is dropped for the next call.
func do[T any](c *Consumer, f func(*Client) (T, error)) (T, error) {
	cl, _, err := c.client()
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := f(cl)
	if err != nil {
		c.failed(cl, err)
		var se *spmierr.Error
		if !errors.As(err, &se) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			err = initFailed(c.runDir, err) // the connection broke: the daemon went away
		}
	}
	return v, err
}

// Context is a context of the hierarchy (the guide's SpmiCx).
type Context struct {
	Path     string // "CPU/cpu0/"
	Name     string
	Descr    string
	Inst     ddswire.InstFreq
	Instance bool // made by instantiation
	OID      string
}

// Stat is a statistic of a context (the guide's SpmiStat).
type Stat struct {
	Path string // "CPU/cpu0/idle"
	spmiwire.StatDesc
	OID string
}

// PathGetCx returns the context at path (SpmiPathGetCx); "" is Top. A
// path that is not there is SiNotFound: reading creates nothing.
func (c *Consumer) PathGetCx(ctx context.Context, path string) (Context, error) {
	if spmiwire.CleanPath(path) == "" {
		return Context{Name: "Top", Descr: "Top of the data hierarchy"}, nil
	}
	es, err := c.level(ctx, path, true)
	if err != nil {
		return Context{}, err
	}
	if len(es) == 0 || es[0].Stat != nil {
		return Context{}, spmierr.Errorf(spmierr.SiBadArgument, "%q is a statistic, not a context", path)
	}
	return contextOf(es[0]), nil
}

// Children lists the direct subcontexts of the context at path
// (SpmiFirstCx, SpmiNextCx); instantiable contexts show the instances the
// daemon has now.
func (c *Consumer) Children(ctx context.Context, path string) ([]Context, error) {
	es, err := c.level(ctx, path, false)
	if err != nil {
		return nil, err
	}
	var out []Context
	for _, e := range direct(es, path) {
		if e.Stat == nil {
			out = append(out, contextOf(e))
		}
	}
	return out, nil
}

// Stats lists the statistics of the context at path (SpmiFirstStat,
// SpmiNextStat).
func (c *Consumer) Stats(ctx context.Context, path string) ([]Stat, error) {
	es, err := c.level(ctx, path, false)
	if err != nil {
		return nil, err
	}
	var out []Stat
	for _, e := range direct(es, path) {
		if e.Stat != nil {
			out = append(out, Stat{Path: e.Path, StatDesc: *e.Stat, OID: e.OID})
		}
	}
	return out, nil
}

// Instantiate brings the instances of the context at path up to date
// (SpmiInstantiate): the next listing reflects processors, disks,
// processes and suppliers as they are now.
func (c *Consumer) Instantiate(ctx context.Context, path string) error {
	_, err := do(c, func(cl *Client) (spmiwire.Sample, error) {
		return cl.ReadAfter(ctx, []string{"Agent/uptime"}, time.Now())
	})
	if err != nil {
		return err
	}
	_, err = c.PathGetCx(ctx, path)
	return err
}

func (c *Consumer) peek(ctx context.Context, path string) ([]spmiwire.Entry, error) {
	return do(c, func(cl *Client) ([]spmiwire.Entry, error) { return cl.Peek(ctx, path) })
}

// level lists path and the entries one level below it, a page at a time,
// so that a context of 20,000 processes costs pages, not the subtree; a
// node alone is one small page (only).
func (c *Consumer) level(ctx context.Context, path string, only bool) ([]spmiwire.Entry, error) {
	var out []spmiwire.Entry
	from := ""
	for {
		limit := 0
		if only {
			limit = 1
		}
		page, more, err := c.PeekPage(ctx, path, 1, from, limit)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if !more || only || len(page) == 0 {
			return out, nil
		}
		from = page[len(page)-1].Rel
	}
}

// PeekPage lists depth levels below path (0: all) a page at a time: the
// entries after the relative id from ("": from path itself), at most
// limit (spmiwire.MaxPeekPage when 0); more says entries remain.
func (c *Consumer) PeekPage(ctx context.Context, path string, depth int, from string, limit int) ([]spmiwire.Entry, bool, error) {
	var more bool
	es, err := do(c, func(cl *Client) ([]spmiwire.Entry, error) {
		es, m, err := cl.PeekPage(ctx, path, depth, from, limit)
		more = m
		return es, err
	})
	return es, more, err
}

// direct keeps the entries one level below path.
func direct(es []spmiwire.Entry, path string) []spmiwire.Entry {
	p := spmiwire.CleanPath(path)
	depth := 0
	if p != "" {
		depth = strings.Count(p, "/") + 1
	}
	var out []spmiwire.Entry
	for _, e := range es {
		if ep := spmiwire.CleanPath(e.Path); strings.Count(ep, "/") == depth && ep != p {
			out = append(out, e)
		}
	}
	return out
}

func contextOf(e spmiwire.Entry) Context {
	t := strings.TrimSuffix(e.Path, "/")
	c := Context{Path: e.Path, Name: t[strings.LastIndexByte(t, '/')+1:], Descr: e.Descr, Instance: e.Instance, OID: e.OID}
	c.Inst, _ = spmiwire.ParseInst(e.Inst) // a statistic's is "": SiNoInst
	return c
}

// Peek lists the context or statistic at path and everything below it,
// in OID order (the listing `subagent peek` prints).
func (c *Consumer) Peek(ctx context.Context, path string) ([]spmiwire.Entry, error) {
	return c.peek(ctx, path)
}

// Read reads the statistics at paths (at most spmiwire.MaxPaths) from
// the freshest snapshot; it makes a Consumer a Source, for a PathSet.
func (c *Consumer) Read(ctx context.Context, paths []string) (spmiwire.Sample, error) {
	return do(c, func(cl *Client) (spmiwire.Sample, error) { return cl.Read(ctx, paths) })
}

// ReadAfter reads from a snapshot newer than t (AfterSource).
func (c *Consumer) ReadAfter(ctx context.Context, paths []string, t time.Time) (spmiwire.Sample, error) {
	return do(c, func(cl *Client) (spmiwire.Sample, error) { return cl.ReadAfter(ctx, paths, t) })
}
