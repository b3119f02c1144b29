package agentx

import (
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/perfagent/subagent/asn1tree"
)

// startGated runs a Subagent on a pipe master whose current moment takes
// until gate closes (a reading of fresh values) for the calls block says
// (1 the first); calls counts them.
func startGated(t *testing.T, block func(call int32) bool) (c *masterConn, gate chan struct{}, calls *atomic.Int32) {
	m := newPipeMaster(t)
	cfg := testConfig(m.addr)
	gate, calls = make(chan struct{}), new(atomic.Int32)
	tree := testTree(t)()
	r := startSourceOn(t, m, cfg, func(any) (asn1tree.View, any) {
		if block(calls.Add(1)) {
			<-gate
		}
		return tree, nil
	})
	c = m.accept()
	c.handshake(cfg)
	settled(t, "Connected", r.sa.Connected)
	return c, gate, calls
}

// A Get waiting for fresh values is answered apart: the Set phases and
// the Get that come after it are answered, in order, before it, and its
// Response comes when its values do.
func TestWaitingReadAnsweredApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, gate, _ := startGated(t, func(n int32) bool { return n == 1 })

		get := func(tid, pid uint32) *packet {
			return &packet{header: header{typ: typeGet, flags: flagNetworkByteOrder, sessionID: c.sessionID,
				transactionID: tid, packetID: pid}, ranges: []searchRange{{start: b("2.0")}}}
		}
		c.send(get(1, 101))
		synctest.Wait() // the Get waits in the source
		// net.Pipe holds each write until it is read: one PDU at a time.
		for _, step := range []struct {
			p    *packet
			code ErrorCode
			vbs  string
		}{
			{&packet{header: header{typ: typeTestSet, transactionID: 2, packetID: 102},
				varbinds: []varbind{{typ: vbInteger, name: b("3.0"), num: 5}}}, NotWritable, ""},
			{&packet{header: header{typ: typeCommitSet, transactionID: 2, packetID: 103}}, CommitFailed, ""},
			{&packet{header: header{typ: typeCleanupSet, transactionID: 2, packetID: 104}}, 0, ""}, // no Response
			{get(3, 105), NoError, "2.0=Gauge32:42"},
		} {
			step.p.flags, step.p.sessionID = flagNetworkByteOrder, c.sessionID
			c.send(step.p)
			if step.p.typ == typeCleanupSet {
				continue
			}
			p := c.expect(typeResponse)
			if p.packetID != step.p.packetID || p.resError != step.code || vbStrings(p.varbinds) != step.vbs {
				t.Fatalf("Response %d %s %s, want %d %s %s (the waiting Get is 101)", p.packetID, p.resError,
					vbStrings(p.varbinds), step.p.packetID, step.code, step.vbs)
			}
		}
		close(gate)
		if p := c.expect(typeResponse); p.packetID != 101 || vbStrings(p.varbinds) != "2.0=Gauge32:42" {
			t.Fatalf("the waiting Get answered %d %s", p.packetID, vbStrings(p.varbinds))
		}
	})
}

// At most maxInFlight PDUs of a session are in hand: with as many
// waiting, the reader reads no further until one is answered; then all
// are answered.
func TestInFlightBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, gate, calls := startGated(t, func(int32) bool { return true })

		const n = maxInFlight + 4
		sent := make(chan error, 1)
		go func() { // the pipe blocks the writer while the reader waits
			for i := range uint32(n) {
				b, err := appendPacket(nil, &packet{header: header{version: version1, typ: typeGet, flags: flagNetworkByteOrder,
					sessionID: c.sessionID, transactionID: 10 + i, packetID: 100 + i}, ranges: []searchRange{{start: b("2.0")}}})
				if err == nil {
					_, err = c.c.Write(b)
				}
				if err != nil {
					sent <- err
					return
				}
			}
			sent <- nil
		}()
		synctest.Wait()
		if got := calls.Load(); got != maxInFlight {
			t.Fatalf("%d reads wait at once, want %d", got, maxInFlight)
		}
		close(gate)
		seen := map[uint32]bool{}
		for range n {
			p := c.expect(typeResponse)
			if vbStrings(p.varbinds) != "2.0=Gauge32:42" || seen[p.packetID] {
				t.Fatalf("Response %d: %s (seen before: %v)", p.packetID, vbStrings(p.varbinds), seen[p.packetID])
			}
			seen[p.packetID] = true
		}
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
	})
}
