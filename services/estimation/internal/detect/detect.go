// Package detect finds the applications in a repository's files and prices
// them. It reads a Source (a git tree, an unpacked archive), classifies files
// with go-enry, finds applications from their build manifests (go.mod,
// package.json, pyproject.toml, pom.xml, build.gradle, Gemfile,
// composer.json, *.csproj, Cargo.toml…), describes each one's architecture
// from its dependencies, and falls back to container and infrastructure
// definitions when a repository holds no application code.
//
// Credits follow a fixed, documented model (see Credits): the same files
// always cost the same.
package detect

import (
	"bytes"
	"path"
	"sort"
	"strings"

	"github.com/go-enry/go-enry/v2"

	"github.com/vulnscan/vulnscan/pkg/wiretext"
)

// MaxReadBytes is the most read from one file; larger files are counted by
// size only.
const MaxReadBytes = 1 << 20

// File is one regular file of a Source.
type File struct {
	Path string // slash-separated, relative, no leading "./"
	Size int64
}

// Source is a tree of files to analyse.
type Source interface {
	Files() []File
	// ReadFile returns at most MaxReadBytes of the file.
	ReadFile(p string) ([]byte, error)
}

// App is one detected application.
type App struct {
	Name         string         `json:"app_name"`
	Root         string         `json:"app_root_path"`
	Architecture string         `json:"architecture"`
	CodeLines    int            `json:"code_lines"`
	SourceFiles  int            `json:"source_files"`
	Languages    map[string]int `json:"languages,omitempty"` // code lines per language
	Credits      int            `json:"credits"`
}

// Result is the analysis of a repository.
type Result struct {
	Apps      []App          `json:"applications"`
	Languages map[string]int `json:"languages"` // code lines per language, whole repository
	Files     int            `json:"files"`
	Credits   int            `json:"credits"`
}

// Credit model constants: an application costs 1 credit, plus 1 per
// LinesPerCredit lines of code, plus 1 per FilesPerCredit source files.
const (
	LinesPerCredit = 5000
	FilesPerCredit = 250
)

// Credits is the price of one application:
// 1 + code_lines/LinesPerCredit + source_files/FilesPerCredit (integer
// division). Code lines are the non-blank lines of programming-language
// files in the application's directory, excluding deeper applications,
// vendored, generated and documentation files.
func Credits(codeLines, sourceFiles int) int {
	return 1 + codeLines/LinesPerCredit + sourceFiles/FilesPerCredit
}

// fileInfo is what the scan of one file leaves behind.
type fileInfo struct {
	path      string
	dir       string
	lang      string
	codeLines int
	markers   uint32
}

const (
	mGoMain uint32 = 1 << iota
	mHTTPServe
	mGRPC
	mK8s
	mCloudFormation
	mPythonMain
)

// Analyze detects the applications of src. repoName names an application
// at the root when no manifest gives a better name.
func Analyze(src Source, repoName string) Result {
	a := &analysis{src: src, repoName: repoName, files: map[string]*fileInfo{}, byDir: map[string][]string{}}
	a.scan()
	a.findApps()
	a.attribute()
	res := Result{Languages: map[string]int{}, Files: len(a.all)}
	for _, f := range a.files {
		if f.lang != "" && f.codeLines > 0 {
			res.Languages[f.lang] += f.codeLines
		}
	}
	for _, app := range a.apps {
		// Names and paths come from the repository's manifests and tree,
		// whatever their bytes: made fit to store and send (wiretext).
		x := app.App
		x.Name, x.Root, x.Architecture = wiretext.Clean(x.Name), wiretext.Clean(x.Root), wiretext.Clean(x.Architecture)
		res.Apps = append(res.Apps, x)
		res.Credits += app.Credits
	}
	if res.Apps == nil {
		res.Apps = []App{}
	}
	return res
}

type analysis struct {
	src      Source
	repoName string
	all      []File
	files    map[string]*fileInfo // classified, non-vendored files
	byDir    map[string][]string  // dir -> file base names (all files)
	apps     []*found
}

type found struct {
	App
	eco string
}

func dirOf(p string) string {
	d := path.Dir(p)
	if d == "" {
		return "."
	}
	return d
}

func skipped(p string) bool {
	if enry.IsVendor(p) || enry.IsDocumentation(p) || enry.IsImage(p) {
		return true
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "node_modules", "vendor", "testdata", ".git", "third_party", "dist", "build", "target", "__pycache__":
			return true
		}
	}
	return false
}

func (a *analysis) scan() {
	a.all = a.src.Files()
	sort.Slice(a.all, func(i, j int) bool { return a.all[i].Path < a.all[j].Path })
	for _, f := range a.all {
		d := dirOf(f.Path)
		a.byDir[d] = append(a.byDir[d], path.Base(f.Path))
		if skipped(f.Path) {
			continue
		}
		fi := &fileInfo{path: f.Path, dir: d}
		a.files[f.Path] = fi
		lang, safe := enry.GetLanguageByExtension(f.Path)
		if !safe {
			if l, ok := enry.GetLanguageByFilename(f.Path); ok {
				lang = l
			}
		}
		interesting := lang != "" && enry.GetLanguageType(lang) == enry.Programming
		isYAML := lang == "YAML" || strings.HasSuffix(f.Path, ".yaml") || strings.HasSuffix(f.Path, ".yml")
		if !interesting && !isYAML && lang != "" {
			fi.lang = lang
			continue
		}
		if f.Size > MaxReadBytes*4 {
			continue
		}
		content, err := a.src.ReadFile(f.Path)
		if err != nil || enry.IsBinary(content) {
			continue
		}
		if lang == "" || !safe {
			lang = enry.GetLanguage(path.Base(f.Path), content)
		}
		if lang == "" || enry.IsGenerated(f.Path, content) {
			continue
		}
		fi.lang = lang
		if isYAML || lang == "YAML" {
			if bytes.Contains(content, []byte("apiVersion:")) && bytes.Contains(content, []byte("kind:")) {
				fi.markers |= mK8s
			}
			if bytes.Contains(content, []byte("AWSTemplateFormatVersion")) {
				fi.markers |= mCloudFormation
			}
			continue
		}
		if enry.GetLanguageType(lang) != enry.Programming {
			continue
		}
		fi.codeLines = countLines(content)
		switch lang {
		case "Go":
			if bytes.Contains(content, []byte("package main")) {
				fi.markers |= mGoMain
			}
			if bytes.Contains(content, []byte("ListenAndServe")) || bytes.Contains(content, []byte("http.Server{")) {
				fi.markers |= mHTTPServe
			}
			if bytes.Contains(content, []byte("grpc.NewServer")) {
				fi.markers |= mGRPC
			}
		case "Python":
			if bytes.Contains(content, []byte("__main__")) {
				fi.markers |= mPythonMain
			}
		}
	}
}

// countLines counts non-blank lines.
func countLines(b []byte) int {
	n := 0
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		line := b
		if i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
	return n
}

// under reports whether p is inside dir ("." is the root).
func under(p, dir string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}

// attribute gives every code file to the deepest application containing it
// and prices the applications.
func (a *analysis) attribute() {
	sort.Slice(a.apps, func(i, j int) bool { return a.apps[i].Root < a.apps[j].Root })
	for _, f := range a.files {
		if f.codeLines == 0 {
			continue
		}
		var best *found
		for _, app := range a.apps {
			if under(f.path, app.Root) && (best == nil || len(app.Root) > len(best.Root) || best.Root == ".") {
				best = app
			}
		}
		if best == nil {
			continue
		}
		best.CodeLines += f.codeLines
		best.SourceFiles++
		if best.Languages == nil {
			best.Languages = map[string]int{}
		}
		best.Languages[f.lang] += f.codeLines
	}
	for _, app := range a.apps {
		app.Credits = Credits(app.CodeLines, app.SourceFiles)
	}
}

// codeIn returns the code lines per language under dir.
func (a *analysis) codeIn(dir string) map[string]int {
	m := map[string]int{}
	for _, f := range a.files {
		if f.codeLines > 0 && under(f.path, dir) {
			m[f.lang] += f.codeLines
		}
	}
	return m
}

func (a *analysis) markersIn(dir string, shallow bool) uint32 {
	var m uint32
	for _, f := range a.files {
		if (shallow && f.dir == dir) || (!shallow && under(f.path, dir)) {
			m |= f.markers
		}
	}
	return m
}

func (a *analysis) read(p string) string {
	b, err := a.src.ReadFile(p)
	if err != nil {
		return ""
	}
	return string(b)
}

func (a *analysis) has(dir, base string) bool {
	for _, n := range a.byDir[dir] {
		if n == base {
			return true
		}
	}
	return false
}

func join(dir, base string) string {
	if dir == "." {
		return base
	}
	return dir + "/" + base
}

func (a *analysis) nameFor(dir, fromManifest string) string {
	if fromManifest != "" {
		return fromManifest
	}
	if dir == "." {
		return a.repoName
	}
	return path.Base(dir)
}
