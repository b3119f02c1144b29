package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

func holesMain(args []string) error {
	fs := flag.NewFlagSet("holes", flag.ExitOnError)
	walks := fs.Int("walks", 20, "runs of the table command")
	rate := fs.Int("churn", 50, "processes started a second (each `sleep LIFE`) while the command runs; 0: none")
	life := fs.Duration("life", time.Second, "how long each started process lives")
	warm := fs.Duration("warm", 6*time.Second, "churn before the first run")
	every := fs.Duration("every", 0, "a run starts this long after the previous one started (or when it ends); 0: back to back")
	sep := fs.String("sep", "|", "the command's field separator (snmptable -Cf)")
	name := fs.String("name", "", "name of the run in the output")
	show := fs.Int("show", 3, "rows with holes printed as examples")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: pollage holes [flags] -- snmptable ... -Ci -CH -Cf'|' TABLE")
		fs.PrintDefaults()
	}
	_ = fs.Parse(args)
	cmdline := fs.Args()
	if len(cmdline) == 0 || *walks < 1 {
		fs.Usage()
		os.Exit(2)
	}
	stop := churn(*rate, *life)
	defer stop()
	time.Sleep(*warm)
	start := time.Now()
	var rows, holes, walksWithHoles, shown, changes int
	var perWalk, durs []float64
	var prevRows string // the indexes of the previous walk's rows
	for i := 1; i <= *walks; i++ {
		time.Sleep(time.Until(start.Add(time.Duration(i-1) * *every)))
		t0 := time.Now()
		var out, errb bytes.Buffer
		c := exec.Command(cmdline[0], cmdline[1:]...)
		c.Stdout, c.Stderr = &out, &errb
		if err := c.Run(); err != nil {
			return fmt.Errorf("walk %d: %v: %s", i, err, errb.String())
		}
		durs = append(durs, time.Since(t0).Seconds())
		n, h := 0, 0
		var idx strings.Builder
		for _, line := range strings.Split(out.String(), "\n") {
			cells := strings.Split(line, *sep)
			if len(cells) < 2 {
				continue
			}
			n++
			idx.WriteString(cells[0] + " ")
			for _, c := range cells {
				if c == "?" { // snmptable's mark of a cell the walk did not return
					h++
					if shown < *show {
						fmt.Printf("%-22s walk %d, a row with a hole: %s\n", *name, i, line)
						shown++
					}
					break
				}
			}
		}
		if n == 0 {
			return fmt.Errorf("walk %d returned no rows: %s%s", i, out.String(), errb.String())
		}
		if i > 1 && idx.String() != prevRows {
			changes++
		}
		prevRows = idx.String()
		rows += n
		holes += h
		perWalk = append(perWalk, float64(n))
		if h > 0 {
			walksWithHoles++
		}
	}
	elapsed := time.Since(start).Seconds()
	stop()
	var busy float64
	for _, d := range durs {
		busy += d
	}
	// A walk's rows are one snapshot's processes: a walk whose rows differ
	// from the previous one's tells that the processes were read again
	// between the two walks' starts, most likely during a walk when the
	// walks fill most of the time.
	fmt.Printf("%-22s %d walks, %s rows a walk (median), %.3f s a walk (median), walking %.0f %% of %.1f s; rows changed between walks %d times: %d rows of %d with a hole, in %d walks\n",
		*name, *walks, strconv.FormatFloat(median(perWalk), 'f', -1, 64), median(durs), 100*busy/elapsed, elapsed, changes, holes, rows, walksWithHoles)
	return nil
}

// churn starts rate processes a second, each living life, until the
// returned function is called; it returns once they have all exited.
func churn(rate int, life time.Duration) func() {
	if rate <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		arg := strconv.FormatFloat(life.Seconds(), 'f', -1, 64)
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			c := exec.Command("sleep", arg)
			if err := c.Start(); err != nil {
				fmt.Fprintln(os.Stderr, "pollage: churn:", err)
				continue
			}
			wg.Add(1)
			go func() { defer wg.Done(); _ = c.Wait() }()
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}
