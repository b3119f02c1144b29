package spmi

import (
	"runtime/debug"
	"sync/atomic"
	"time"
	"weak"
)

// returnMemory collects garbage and returns free memory to the system now,
// a moment later, and then every few seconds until the parts gone (those
// this refresh replaced) are collected, at most returnFor: front ends hold
// the snapshots that reference them a while (requests being answered; an
// AgentX session keeps its transactions' views until the master's next
// response, a ping's answer at the latest), and a daemon that allocates
// little may not collect again for minutes, so its resident set would stay
// that of the largest tree it ever served.
// Each return is counted in returns.
func returnMemory(gone []*part, returns *atomic.Int32) {
	ws := make([]weak.Pointer[part], len(gone))
	for i, p := range gone {
		ws[i] = weak.Make(p)
	}
	free := func() { returns.Add(1); debug.FreeOSMemory() }
	go func() {
		free()
		wait := returnAgain
		for elapsed := time.Duration(0); elapsed < returnFor; elapsed += wait {
			time.Sleep(wait)
			free() // collects, then returns what it freed
			if !anyAlive(ws) {
				return
			}
			wait = returnEvery
		}
	}()
}

func anyAlive(ws []weak.Pointer[part]) bool {
	for _, w := range ws {
		if w.Value() != nil {
			return true
		}
	}
	return false
}

const (
	returnAgain = 2 * time.Second
	returnEvery = 5 * time.Second
	returnFor   = time.Minute
)
