// Command supplier publishes one DDS statistic and measures one ARM
// transaction: a program of another module using the client module.
package main

import (
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/perfagent/subagent/client/arm"
	"github.com/perfagent/subagent/client/ddsclient"
)

func main() {
	v := ddsclient.NewVendor("Example", "Example Corp. suppliers", 32473)
	orders := v.Context("Shop", "The web shop", 1).Counter("orders", "Orders taken", 1)
	s, err := ddsclient.Start(v, filepath.Join(os.TempDir(), "example-supplier.dds"), &ddsclient.Options{Watch: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Exit()

	ag := arm.Open(nil)
	defer ag.Close()
	order := ag.App("Example Shop", "*").Transaction("Take order", "one order")
	for !s.GoAway() {
		h := order.Start()
		s.Update(func() { orders.Inc() })
		h.Stop(arm.Good)
		time.Sleep(time.Second)
	}
}
