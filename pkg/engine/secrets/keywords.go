package secrets

import "fmt"

// keywords finds every occurrence of a set of lower-case ASCII keywords in
// a text, ignoring ASCII case, as gitleaks' keyword check does on the
// lower-cased text. A table of the keywords' first two bytes rejects most
// positions with one lookup.
type keywords struct {
	words  [][]byte
	first  [1 << 16]bool
	byPair map[uint16][]int // first two bytes → indexes into words
}

var lower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

// newKeywords indexes words, which must be lower-case ASCII of at least two
// bytes.
func newKeywords(words []string) (*keywords, error) {
	k := &keywords{byPair: map[uint16][]int{}}
	for i, w := range words {
		if len(w) < 2 {
			return nil, fmt.Errorf("keyword %q: shorter than two bytes", w)
		}
		for j := 0; j < len(w); j++ {
			if w[j] >= 0x80 || lower[w[j]] != w[j] {
				return nil, fmt.Errorf("keyword %q: not lower-case ASCII", w)
			}
		}
		k.words = append(k.words, []byte(w))
		pair := uint16(w[0])<<8 | uint16(w[1])
		k.first[pair] = true
		k.byPair[pair] = append(k.byPair[pair], i)
	}
	return k, nil
}

// find calls fn with the index of the keyword and the offset of every
// occurrence in text, in order of offset.
func (k *keywords) find(text []byte, fn func(word, pos int)) {
	for i := 0; i+1 < len(text); i++ {
		pair := uint16(lower[text[i]])<<8 | uint16(lower[text[i+1]])
		if !k.first[pair] {
			continue
		}
		for _, w := range k.byPair[pair] {
			word := k.words[w]
			if i+len(word) > len(text) {
				continue
			}
			j := 2
			for j < len(word) && lower[text[i+j]] == word[j] {
				j++
			}
			if j == len(word) {
				fn(w, i)
			}
		}
	}
}
