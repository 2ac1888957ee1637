// Command logprefix copies its standard input to its standard output with
// a prefix before every line, for `make run`, which interleaves the logs of
// several processes in one terminal:
//
//	some-process 2>&1 | logprefix NAME     # lines become "[NAME] line"
//
// It reads and writes in large blocks and writes only whole lines (a line
// longer than the buffer goes out in pieces, the prefix before the first),
// so that lines of different processes never mix. A line after a quiet
// spell is written at once; during a burst it reads at most every 20 ms, so
// that a busy process costs it a few system calls per block of lines
// rather than several per line (see Copy). It ignores SIGINT and SIGTERM,
// which a terminal or process group sends to the process it serves too, so
// that it keeps copying that process's shutdown logs; it exits when its
// input closes.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// gather is how long a burst of lines may collect before it is read.
const gather = 20 * time.Millisecond

func main() {
	if len(os.Args) != 2 || os.Args[1] == "" {
		fmt.Fprintln(os.Stderr, "usage: logprefix NAME < input")
		os.Exit(2)
	}
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
	if err := Copy(os.Stdout, os.Stdin, "["+os.Args[1]+"] ", gather); err != nil {
		fmt.Fprintln(os.Stderr, "logprefix:", err)
		os.Exit(1)
	}
}
