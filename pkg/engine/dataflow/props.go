package dataflow

import (
	"bufio"
	"bytes"
	"path"
	"strings"
)

// IsConfigFile reports whether a repository file is configuration whose
// values code may look up by key (see the `property` evaluator).
func IsConfigFile(rel string) bool {
	switch strings.ToLower(path.Ext(rel)) {
	case ".properties", ".ini", ".cfg", ".env":
		return true
	}
	return strings.HasPrefix(path.Base(rel), ".env")
}

// Properties collects key/value pairs from configuration files. A key
// defined with different values in different files is dropped, since the
// analysis cannot know which one applies.
type Properties struct {
	vals     map[string]string
	conflict map[string]bool
}

// NewProperties returns an empty collection.
func NewProperties() *Properties {
	return &Properties{vals: map[string]string{}, conflict: map[string]bool{}}
}

// Add parses one .properties, .ini or .env file.
func (p *Properties) Add(data []byte) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' || line[0] == ';' || line[0] == '[' {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		i := strings.IndexAny(line, "=:")
		if i <= 0 {
			continue
		}
		k := strings.TrimSpace(line[:i])
		v := strings.TrimSpace(line[i+1:])
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		if p.conflict[k] {
			continue
		}
		if old, ok := p.vals[k]; ok && old != v {
			delete(p.vals, k)
			p.conflict[k] = true
			continue
		}
		p.vals[k] = v
	}
}

// Map returns the collected values.
func (p *Properties) Map() map[string]string { return p.vals }
