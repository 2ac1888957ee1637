package archive

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
)

// Zip record signatures and sizes (APPNOTE.TXT 4.3).
const (
	sigCentral     = 0x02014b50
	sigEnd         = 0x06054b50
	sigEnd64       = 0x06064b50
	sigEnd64Loc    = 0x07064b50
	centralLen     = 46
	endLen         = 22
	end64LocLen    = 20
	end64Len       = 56
	maxCommentTail = 65 * 1024
)

// countZipEntries walks a zip's central directory, header by header without
// keeping any, and refuses the archive once it holds more than max entries.
// archive/zip reads every header into memory before a caller sees one, and
// checks the declared count only modulo 65,536, so the count has to be taken
// first. The walk starts where archive/zip starts (the offset the end
// record gives, corrected for data prepended to the archive the same way)
// and counts every header archive/zip would accept and more, never fewer.
// Structural errors are left to archive/zip to report.
func countZipEntries(r io.ReaderAt, size int64, max int) error {
	start, ok := centralStart(r, size)
	if !ok {
		return nil
	}
	br := bufio.NewReaderSize(io.NewSectionReader(r, start, size-start), 64<<10)
	var hdr [centralLen]byte
	n := 0
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return nil
		}
		if binary.LittleEndian.Uint32(hdr[:4]) != sigCentral {
			return nil
		}
		n++
		if n > max {
			return unsafe("more than %d entries (files, directories and links)", max)
		}
		skip := int64(binary.LittleEndian.Uint16(hdr[28:])) + int64(binary.LittleEndian.Uint16(hdr[30:])) + int64(binary.LittleEndian.Uint16(hdr[32:]))
		if _, err := br.Discard(int(skip)); err != nil {
			return nil
		}
	}
}

// centralStart finds where the central directory starts, as archive/zip
// does; false when the archive is not one it would open.
func centralStart(r io.ReaderAt, size int64) (int64, bool) {
	tail := min(size, maxCommentTail)
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil && !errors.Is(err, io.EOF) {
		return 0, false
	}
	p := -1
	for i := len(buf) - endLen; i >= 0; i-- {
		if binary.LittleEndian.Uint32(buf[i:]) == sigEnd {
			if int(binary.LittleEndian.Uint16(buf[i+endLen-2:]))+endLen+i > len(buf) {
				return 0, false // archive/zip refuses it too
			}
			p = i
			break
		}
	}
	if p < 0 {
		return 0, false
	}
	endOff := size - tail + int64(p)
	end := buf[p:]
	records := uint64(binary.LittleEndian.Uint16(end[10:]))
	dirSize := uint64(binary.LittleEndian.Uint32(end[12:]))
	dirOff := uint64(binary.LittleEndian.Uint32(end[16:]))
	if records == 0xffff || dirSize == 0xffff || dirOff == 0xffffffff {
		if off, s, o, ok := zip64End(r, endOff); ok {
			endOff, dirSize, dirOff = off, s, o
		}
	}
	if dirSize > 1<<62 || dirOff > 1<<62 {
		return 0, false
	}
	base := endOff - int64(dirSize) - int64(dirOff)
	if o := base + int64(dirOff); o < 0 || o >= size {
		return 0, false
	}
	if base > 0 {
		var sig [4]byte
		if _, err := r.ReadAt(sig[:], int64(dirOff)); err == nil && binary.LittleEndian.Uint32(sig[:]) == sigCentral {
			base = 0
		}
	}
	return base + int64(dirOff), true
}

// zip64End reads the zip64 end record the locator before endOff points at.
func zip64End(r io.ReaderAt, endOff int64) (off int64, dirSize, dirOff uint64, ok bool) {
	if endOff < end64LocLen {
		return 0, 0, 0, false
	}
	var loc [end64LocLen]byte
	if _, err := r.ReadAt(loc[:], endOff-end64LocLen); err != nil {
		return 0, 0, 0, false
	}
	if binary.LittleEndian.Uint32(loc[:]) != sigEnd64Loc {
		return 0, 0, 0, false
	}
	p := binary.LittleEndian.Uint64(loc[8:])
	if p > 1<<62 {
		return 0, 0, 0, false
	}
	var rec [end64Len]byte
	if _, err := r.ReadAt(rec[:], int64(p)); err != nil || binary.LittleEndian.Uint32(rec[:]) != sigEnd64 {
		return 0, 0, 0, false
	}
	return int64(p), binary.LittleEndian.Uint64(rec[40:]), binary.LittleEndian.Uint64(rec[48:]), true
}
