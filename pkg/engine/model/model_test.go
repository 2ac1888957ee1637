package model_test

import (
	"math/bits"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/model"
)

func TestClassBit(t *testing.T) {
	t.Parallel()
	seen := map[uint32]string{}
	for i, c := range model.Classes {
		b := model.ClassBit(c)
		require.Equal(t, uint32(1)<<uint(i), b, c)
		require.NotContains(t, seen, b, "classes have distinct bits")
		seen[b] = c
	}
	for _, unknown := range []string{"", "SQLI", "sql", "xss ", "rce"} {
		require.Zero(t, model.ClassBit(unknown), "%q", unknown)
	}
	require.LessOrEqual(t, len(model.Classes), 32, "a mask is 32 bits")
}

func TestMask(t *testing.T) {
	t.Parallel()
	all := uint32(1)<<uint(len(model.Classes)) - 1
	weak := model.ClassBit("weakrand")
	cases := []struct {
		name    string
		classes []string
		want    uint32
		err     string
	}{
		{"none means every class but the opt-in ones", nil, all &^ weak, ""},
		{"empty slice likewise", []string{}, all &^ weak, ""},
		{"one class", []string{"sqli"}, model.ClassBit("sqli"), ""},
		{"several classes", []string{"xss", "path", "sqli"}, model.ClassBit("xss") | model.ClassBit("path") | model.ClassBit("sqli"), ""},
		{"repeated class", []string{"xss", "xss"}, model.ClassBit("xss"), ""},
		{"opt-in class named explicitly", []string{"weakrand"}, weak, ""},
		{"unknown class", []string{"sqli", "bogus"}, 0, `unknown class "bogus"`},
		{"empty name", []string{""}, 0, `unknown class ""`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := model.Mask(tc.classes)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.Zero(t, m)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, m)
		})
	}
}

func TestMaskDefaultExcludesEveryOptInClass(t *testing.T) {
	t.Parallel()
	m, err := model.Mask(nil)
	require.NoError(t, err)
	require.Equal(t, len(model.Classes)-len(model.OptInClasses), bits.OnesCount32(m))
	for _, c := range model.OptInClasses {
		require.Zero(t, m&model.ClassBit(c), c)
	}
}

func TestLoadMergesFilesInNameOrder(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"py/b.yaml": {Data: []byte(`
types:
  lib.Sub: [lib.Base]
returns:
  lib.Sub#get: str
aliases:
  L: lib.Sub
constants:
  lib.MODE: "b"
sources:
  - kind: remote
    targets: [lib.Req#arg]
sanitizers:
  - targets: [lib#escape]
    classes: [xss]
noreturn: [lib#abort]
`)},
		"py/a.yaml": {Data: []byte(`
types:
  lib.Sub: [lib.Mixin]
returns:
  lib.Sub#get: bytes
  lib.Sub#put: None
constants:
  lib.MODE: "a"
  lib.OTHER: "o"
sources:
  - kind: env
    globals: [os.environ]
propagators:
  - targets: [lib#join]
    from: [args]
    to: [ret]
containers:
  - targets: [list#append]
    op: append
setters:
  - targets: [lib.Cookie#secure]
    field: secure
    arg: 0
evaluators:
  - targets: [str#upper]
    fn: to_upper
entrypoints:
  - name: Flask
    annotations: [flask.Flask.route]
    params: [all]
`)},
		"py/notes.txt":    {Data: []byte("not a model: ignored")},
		"py/sub/x.yaml":   {Data: []byte("sources: [{bogus: true}]")},
		"java/other.yaml": {Data: []byte("sources: [{kind: remote, targets: [x#y]}]")},
	}
	s, err := model.Load(fsys, "py")
	require.NoError(t, err)
	require.Equal(t, "py", s.Language)
	require.Equal(t, []string{"lib.Mixin", "lib.Base"}, s.Types["lib.Sub"], "supertypes of every file, a.yaml first")
	require.Equal(t, "str", s.Returns["lib.Sub#get"], "a later file overrides a result type")
	require.Equal(t, "None", s.Returns["lib.Sub#put"])
	require.Equal(t, map[string]string{"L": "lib.Sub"}, s.Aliases)
	require.Equal(t, map[string]string{"lib.MODE": "b", "lib.OTHER": "o"}, s.Constants)
	require.Len(t, s.Sources, 2)
	require.Equal(t, "env", s.Sources[0].Kind)
	require.Equal(t, []string{"os.environ"}, s.Sources[0].Globals)
	require.Equal(t, "remote", s.Sources[1].Kind)
	require.Equal(t, []string{"lib.Req#arg"}, s.Sources[1].Targets)
	require.Equal(t, []model.Sanitizer{{Targets: []string{"lib#escape"}, Classes: []string{"xss"}}}, s.Sanitizers)
	require.Equal(t, []model.Propagator{{Targets: []string{"lib#join"}, From: []string{"args"}, To: []string{"ret"}}}, s.Propagators)
	require.Equal(t, []model.Container{{Targets: []string{"list#append"}, Op: "append"}}, s.Containers)
	require.Equal(t, []model.Setter{{Targets: []string{"lib.Cookie#secure"}, Field: "secure"}}, s.Setters)
	require.Equal(t, []model.Evaluator{{Targets: []string{"str#upper"}, Fn: "to_upper"}}, s.Evaluators)
	require.Equal(t, []model.EntryPoint{{Name: "Flask", Annotations: []string{"flask.Flask.route"}, Params: []string{"all"}}}, s.EntryPoints)
	require.Equal(t, []string{"lib#abort"}, s.NoReturn)
}

func TestLoadMissingLanguageIsEmpty(t *testing.T) {
	t.Parallel()
	s, err := model.Load(fstest.MapFS{"java/a.yaml": {Data: []byte("{}")}}, "cobol")
	require.NoError(t, err)
	require.Equal(t, "cobol", s.Language)
	require.Empty(t, s.Sources)
	require.NotNil(t, s.Types, "maps are ready to use")
	require.NotNil(t, s.Returns)
	require.NotNil(t, s.Aliases)
	require.Nil(t, s.Constants, "constants stay nil without any")
}

func TestLoadEmptyFile(t *testing.T) {
	t.Parallel()
	// An empty document decodes to nothing: yaml reports io.EOF.
	_, err := model.Load(fstest.MapFS{"go/empty.yaml": {Data: []byte("")}}, "go")
	require.ErrorContains(t, err, "model go/empty.yaml")
}

func TestLoadRejects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml, err string
	}{
		{"unknown top-level key", "sinks: []", "model go/m.yaml"},
		{"unknown source field", "sources: [{kind: remote, target: [a#b]}]", "field target not found"},
		{"malformed yaml", "sources: [", "model go/m.yaml"},
		{"wrong type", "types: [a, b]", "model go/m.yaml"},
		{"source with unknown class", "sources: [{kind: remote, targets: [a#b], classes: [nope]}]", `source [a#b]: unknown class "nope"`},
		{"sanitizer with unknown class", "sanitizers: [{targets: [a#c], classes: [xss, nope]}]", `sanitizer [a#c]: unknown class "nope"`},
		{"container with unknown op", "containers: [{targets: [l#push], op: push}]", `container [l#push]: unknown op "push"`},
		{"container without op", "containers: [{targets: [l#push]}]", `unknown op ""`},
		{"evaluator with unknown fn", "evaluators: [{targets: [s#rev], fn: reverse}]", `evaluator [s#rev]: unknown fn "reverse"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := model.Load(fstest.MapFS{"go/m.yaml": {Data: []byte(tc.yaml)}}, "go")
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func TestLoadAcceptsEveryContainerOpAndEvaluator(t *testing.T) {
	t.Parallel()
	ops := []string{"append", "insert", "get_index", "set_index", "remove_index", "put", "get_key", "remove_key",
		"any_element", "alias", "add_all", "clear", "new"}
	fns := []string{"concat", "char_at", "substring", "to_upper", "to_lower", "trim", "length", "equals",
		"equals_ignore_case", "index_of", "replace", "value_of", "parse_int", "identity", "property",
		"starts_with", "ends_with", "contains", "split_get"}
	doc := "containers:\n"
	for _, op := range ops {
		doc += "  - {targets: [t#" + op + "], op: " + op + "}\n"
	}
	doc += "evaluators:\n"
	for _, fn := range fns {
		doc += "  - {targets: [t#" + fn + "], fn: " + fn + "}\n"
	}
	s, err := model.Load(fstest.MapFS{"x/m.yaml": {Data: []byte(doc)}}, "x")
	require.NoError(t, err)
	require.Len(t, s.Containers, len(ops))
	require.Len(t, s.Evaluators, len(fns))
}

func TestBuiltinModelsLoad(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"go", "java", "javascript", "php", "python", "ruby"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			s, err := model.Builtin(lang)
			require.NoError(t, err)
			require.Equal(t, lang, s.Language)
			require.NotEmpty(t, s.Sources, "every language has sources")
			require.NotEmpty(t, s.EntryPoints, "every language has entry points")
			for _, src := range s.Sources {
				require.NotEmpty(t, src.Kind, "source %v has a kind", src.Targets)
				require.False(t, len(src.Targets)+len(src.Globals)+len(src.ParamAnnotations)+len(src.ParamTypes)+len(src.ParamNames) == 0,
					"source of kind %s selects something", src.Kind)
			}
			for _, e := range s.EntryPoints {
				require.NotEmpty(t, e.Name)
				require.False(t, len(e.Annotations)+len(e.Overrides)+len(e.Registrations) == 0, "entry point %s selects something", e.Name)
			}
			for _, c := range s.Containers {
				require.NotEmpty(t, c.Targets)
			}
		})
	}
}

func TestBuiltinUnknownLanguageIsEmpty(t *testing.T) {
	t.Parallel()
	s, err := model.Builtin("fortran")
	require.NoError(t, err)
	require.Empty(t, s.Sources)
	require.Empty(t, s.Sanitizers)
}

// Weak randomness is only ever tainted by sources that name it: a builtin
// source that names no classes must not taint weakrand.
func TestBuiltinWeakRandomSourcesNameTheirClass(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"go", "java", "javascript", "php", "python", "ruby"} {
		s, err := model.Builtin(lang)
		require.NoError(t, err)
		for _, src := range s.Sources {
			if src.Kind == "weakrand" {
				require.Contains(t, src.Classes, "weakrand", "%s weakrand source %v", lang, src.Targets)
			}
		}
	}
}

// Every target of the embedded models names a callable: "Type#method",
// "module#function", "*#name", "?#name", "#name" (a bare name reads the
// same).
func TestBuiltinTargetsAreWellFormed(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"go", "java", "javascript", "php", "python", "ruby"} {
		s, err := model.Builtin(lang)
		require.NoError(t, err)
		targets := map[string][]string{"noreturn": s.NoReturn}
		add := func(what string, tgs []string) { targets[what] = append(targets[what], tgs...) }
		for _, x := range s.Sources {
			add("source", x.Targets)
		}
		for _, x := range s.Sanitizers {
			add("sanitizer", x.Targets)
		}
		for _, x := range s.Propagators {
			add("propagator", x.Targets)
		}
		for _, x := range s.Containers {
			add("container", x.Targets)
		}
		for _, x := range s.Setters {
			add("setter", x.Targets)
		}
		for _, x := range s.Evaluators {
			add("evaluator", x.Targets)
		}
		for _, x := range s.EntryPoints {
			add("entry point", append(append([]string{}, x.Overrides...), x.Registrations...))
		}
		for what, tgs := range targets {
			for _, tg := range tgs {
				i := strings.LastIndex(tg, "#")
				require.Less(t, i, len(tg)-1, "%s %s target %q names no callable", lang, what, tg)
				require.NotContains(t, tg[:max(i, 0)], "#", "%s %s target %q", lang, what, tg)
				require.Equal(t, strings.TrimSpace(tg), tg, "%s %s target %q has spaces", lang, what, tg)
			}
		}
	}
}

// Propagators name only the positions the model language knows.
func TestBuiltinPropagatorPositions(t *testing.T) {
	t.Parallel()
	pos := regexp.MustCompile(`^(recv|ret|args|arg\d+(\.\.)?)$`)
	for _, lang := range []string{"go", "java", "javascript", "php", "python", "ruby"} {
		s, err := model.Builtin(lang)
		require.NoError(t, err)
		for _, p := range s.Propagators {
			for _, f := range append(append([]string{}, p.From...), p.To...) {
				require.Regexp(t, pos, f, "%s propagator %v", lang, p.Targets)
			}
		}
		for _, src := range s.Sources {
			for _, f := range src.Taints {
				require.Regexp(t, pos, f, "%s source %v", lang, src.Targets)
			}
		}
	}
}
