// Command consumer is the outside program of docs/CONSUMERS.md: it walks
// one level of the daemon's hierarchy, reads a statset twice (counters
// as rates: the second read waits for values newer than the first) and a runtime hotset, as the SPMI guide's examples do.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		var se *spmierr.Error
		if errors.As(err, &se) {
			os.Exit(int(se.Code)) // the guide's code, for scripts
		}
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	c, err := consumer.Open("") // SpmiInit: finds the daemon as libSpmi does
	if err != nil {
		return err
	}
	defer c.Close() // SpmiExit

	cpus, err := c.Children(ctx, "CPU") // SpmiFirstCx, SpmiNextCx
	if err != nil {
		return err
	}
	for _, cx := range cpus {
		fmt.Printf("context %s: %s\n", cx.Path, cx.Descr)
	}

	ss, err := c.NewStatSet(ctx, "CPU/cpu0/idle", "Mem/Real/%free") // SpmiCreateStatSet, SpmiPathAddSetStat
	if err != nil {
		return err
	}
	defer ss.Free(ctx)
	for range 2 {
		r, err := ss.Read(ctx) // SpmiGetStatSet
		if err != nil {
			return err
		}
		for _, v := range r.Values { // SpmiFirstVals, SpmiNextVals
			if v.HasRate {
				fmt.Printf("stat %s = %v, %.2f/s\n", v.Path, v.Value, v.Rate)
			} else {
				fmt.Printf("stat %s = %v\n", v.Path, v.Value)
			}
		}
	}

	hs, err := c.NewHotSet(ctx) // SpmiCreateHotSet
	if err != nil {
		return err
	}
	defer hs.Free(ctx)
	if _, err := hs.Add(ctx, spmiwire.HotDef{Stat: "Disk/*/busy", Feed: "always", MaxResp: 2}); err != nil { // SpmiAddSetHot
		return err
	}
	res, err := hs.Read(ctx) // SpmiGetHotSet
	if err != nil {
		return err
	}
	for _, ps := range res.PeerSets { // SpmiFirstHot, SpmiNextHot
		for _, g := range ps.Groups {
			for _, it := range g.Items { // SpmiNextHotItem
				fmt.Printf("hot %s = %g\n", it.Path, it.Value)
			}
		}
	}
	return nil
}
