package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// chunks yields its pieces one Read at a time.
type chunks struct{ parts []string }

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.parts[0])
	if n < len(c.parts[0]) {
		c.parts[0] = c.parts[0][n:]
	} else {
		c.parts = c.parts[1:]
	}
	return n, nil
}

// writes records each Write.
type writes struct{ got []string }

func (w *writes) Write(p []byte) (int, error) {
	w.got = append(w.got, string(p))
	return len(p), nil
}

func TestCopy(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", bufSize+10)
	tests := []struct {
		name   string
		parts  []string
		want   string
		writes []string // when set, the exact writes
	}{
		{"empty", nil, "", nil},
		{"one line", []string{"hello\n"}, "[p] hello\n", []string{"[p] hello\n"}},
		{"several lines in one read", []string{"a\nb\nc\n"}, "[p] a\n[p] b\n[p] c\n", []string{"[p] a\n[p] b\n[p] c\n"}},
		{"a line split across reads waits for its end", []string{"ab", "c\nd", "e\n"}, "[p] abc\n[p] de\n", []string{"[p] abc\n", "[p] de\n"}},
		{"last line without newline", []string{"a\nb"}, "[p] a\n[p] b", nil},
		{"empty lines", []string{"\n\n"}, "[p] \n[p] \n", nil},
		{"line longer than the buffer", []string{long + "\nz\n"}, "[p] " + long + "\n[p] z\n", nil},
		{"carriage returns are kept", []string{"a\r\n"}, "[p] a\r\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := &writes{}
			require.NoError(t, Copy(w, &chunks{parts: append([]string(nil), tc.parts...)}, "[p] ", 0))
			require.Equal(t, tc.want, strings.Join(w.got, ""))
			if tc.writes != nil {
				require.Equal(t, tc.writes, w.got)
			}
			for _, wr := range w.got[:max(0, len(w.got)-1)] {
				if len(wr) < bufSize {
					require.True(t, strings.HasSuffix(wr, "\n"), "write %q ends mid-line", wr)
				}
			}
		})
	}
}

// TestCopyGathersBursts writes a burst of lines into a pipe one at a time,
// as a logging process does, and checks that they arrive complete in fewer
// writes than lines.
func TestCopyGathersBursts(t *testing.T) {
	t.Parallel()
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer func() { _ = pr.Close() }()
	w := &writes{}
	done := make(chan error, 1)
	go func() { done <- Copy(w, pr, "[p] ", 5*time.Millisecond) }()
	var want strings.Builder
	for i := range 2000 {
		line := fmt.Sprintf("line %d\n", i)
		want.WriteString("[p] " + line)
		_, err := pw.Write([]byte(line))
		require.NoError(t, err)
		if i%100 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	require.NoError(t, pw.Close())
	require.NoError(t, <-done)
	require.Equal(t, want.String(), strings.Join(w.got, ""))
	require.Less(t, len(w.got), 200, "2000 lines in %d writes", len(w.got))
}

// logLines is a slog-style log of n lines, as a busy service writes it.
func logLines(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		b.WriteString(`time=2026-11-23T10:00:00.000Z level=INFO msg=request method=GET path=/v1/credits status=200 duration=1.2ms request_id=`)
		b.WriteString(strings.Repeat("a", 20+i%7))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// BenchmarkCopy measures prefixing a service log against copying it
// unchanged (the floor), in MB/s; the log arrives in 4 KiB reads, as from
// a pipe under load.
func BenchmarkCopy(b *testing.B) {
	data := logLines(20000)
	var parts []string
	for off := 0; off < len(data); off += 4096 {
		parts = append(parts, string(data[off:min(off+4096, len(data))]))
	}
	for _, mode := range []string{"plain-copy", "prefix"} {
		b.Run(mode, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				r := &chunks{parts: append([]string(nil), parts...)}
				if mode == "prefix" {
					if err := Copy(io.Discard, r, "[gateway] ", 0); err != nil {
						b.Fatal(err)
					}
				} else if _, err := io.Copy(io.Discard, io.Reader(r)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
