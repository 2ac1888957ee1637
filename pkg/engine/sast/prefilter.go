package sast

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// maxNeeded bounds the literals kept for one regex: more alternatives than
// that filter too little to pay for the search.
const maxNeeded = 16

// requiredLiterals returns literals one of which every match of the regex
// contains, compared without regard to ASCII case, or nil when it cannot
// tell (then the regex always runs). The regex's own flags are kept, so a
// case-sensitive literal is only checked case-insensitively: a weaker
// filter, never a wrong one. Literals with non-ASCII runes are given up,
// and containsAnyFold lets every non-ASCII text through, as Unicode case
// folding maps some non-ASCII runes to ASCII letters (the Kelvin sign to k,
// ſ to s).
func requiredLiterals(expr string) []string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	lits := needed(re)
	if len(lits) == 0 || len(lits) > maxNeeded {
		return nil
	}
	return lits
}

// needed is requiredLiterals on a parsed regex.
func needed(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		var sb strings.Builder
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf {
				return nil
			}
			sb.WriteByte(lower(byte(r)))
		}
		if sb.Len() == 0 {
			return nil
		}
		return []string{sb.String()}
	case syntax.OpCapture:
		return needed(re.Sub[0])
	case syntax.OpPlus:
		return needed(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return needed(re.Sub[0])
		}
		return nil
	case syntax.OpConcat:
		// any part's literals will do: keep the part whose shortest
		// literal is longest
		var best []string
		bestLen := 0
		for _, sub := range re.Sub {
			lits := needed(sub)
			if len(lits) == 0 || len(lits) > maxNeeded {
				continue
			}
			if l := shortest(lits); l > bestLen {
				best, bestLen = lits, l
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			lits := needed(sub)
			if len(lits) == 0 {
				return nil
			}
			all = append(all, lits...)
		}
		return all
	}
	return nil
}

func shortest(lits []string) int {
	n := len(lits[0])
	for _, l := range lits[1:] {
		n = min(n, len(l))
	}
	return n
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// containsAnyFold reports whether text contains one of lits (lower case
// ASCII) regardless of ASCII case; true when lits is empty, and for text
// with non-ASCII bytes, which case folding could match in ways this byte
// comparison does not.
func containsAnyFold(text string, lits []string) bool {
	if len(lits) == 0 {
		return true
	}
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			return true
		}
	}
	for _, l := range lits {
		for i := 0; i+len(l) <= len(text); i++ {
			if lower(text[i]) != l[0] {
				continue
			}
			j := 1
			for j < len(l) && lower(text[i+j]) == l[j] {
				j++
			}
			if j == len(l) {
				return true
			}
		}
	}
	return false
}
