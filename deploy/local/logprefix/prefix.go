package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// bufSize is the size of the read and write buffers.
const bufSize = 64 << 10

// Copy copies r to w, writing prefix before every line. Each Write to w
// holds whole lines only, except for a line longer than bufSize, which is
// written in pieces. What has been read is written before the next Read.
//
// A busy process writes its log a line at a time, and reading each line as
// it comes would cost a wake-up, a read and a write per line. So after
// writing what a read brought, Copy waits gather before reading again,
// letting the lines of a burst collect in the pipe to be read and written
// as one block. A line after a quiet spell is written at once; within a
// burst, lines are at most gather late.
func Copy(w io.Writer, r io.Reader, prefix string, gather time.Duration) error {
	in := make([]byte, bufSize)
	out := make([]byte, 0, 2*bufSize)
	atLineStart := true
	pending := 0 // bytes of in holding the start of an unfinished line
	for {
		n, rerr := r.Read(in[pending:])
		data := in[:pending+n]
		// Whole lines go out; an unfinished line waits for its end, unless
		// the buffer is full of it or the input ended.
		end := bytes.LastIndexByte(data, '\n') + 1
		if end == 0 && (len(data) == len(in) || rerr != nil) {
			end = len(data)
		}
		if rerr != nil {
			end = len(data)
		}
		for rest := data[:end]; len(rest) > 0; {
			if atLineStart {
				out = append(out, prefix...)
			}
			i := bytes.IndexByte(rest, '\n') + 1
			if i == 0 {
				out, rest, atLineStart = append(out, rest...), nil, false
				break
			}
			out, rest, atLineStart = append(out, rest[:i]...), rest[i:], true
		}
		if len(out) > 0 {
			if _, err := w.Write(out); err != nil {
				return fmt.Errorf("write: %w", err)
			}
			out = out[:0]
		}
		pending = copy(in, data[end:])
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return nil
			}
			return fmt.Errorf("read: %w", rerr)
		}
		if n > 0 && pending+n < len(in) && gather > 0 {
			time.Sleep(gather)
		}
	}
}
