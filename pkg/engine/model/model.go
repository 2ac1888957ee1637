// Package model holds library behaviour as data: for each language, YAML
// files under model/<language>/ describe library types, sources, sanitizers,
// propagation summaries, containers, setters and entry points, and the rule
// files under sast/rules/<language>/ describe sinks. The analysis (package
// dataflow) interprets them; no library knowledge lives in Go code.
//
// # Targets
//
// A target names a callable or a global:
//
//	java.sql.Statement#executeQuery   method executeQuery on a receiver of type java.sql.Statement
//	                                  or any subtype, or a static method of that class
//	java.io.File#<init>               constructor
//	os#system                         function system of module os (Python), also `import os; os.system`
//	subprocess#*                      every function of module subprocess
//	*#executeQuery                    a call named executeQuery on any receiver, typed or not
//	?#executeQuery                    a call named executeQuery whose receiver type is unknown
//	                                  (dynamic languages; a receiver known to be another type does not match)
//	#eval                             a plain call of the built-in or global function eval
//
// Types are matched through the subtype table of the language's models
// (`types:`) and of the repository's own classes.
//
// # Classes
//
// Taint is tracked per vulnerability class (sqli, cmdi, xss, path, ...; see
// Classes). A source taints every class except those listed in
// OptInClasses unless it names its classes; a sanitizer removes the classes
// it names (all when none).
package model

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Classes are the vulnerability classes taint is tracked for. A rule's
// `class` must be one of them for taint rules.
var Classes = []string{
	"sqli", "cmdi", "xss", "path", "ssrf", "redirect", "ldapi", "xpathi", "nosqli", "ssti",
	"code", "deser", "xxe", "header", "log", "trustbound", "weakrand", "crypto", "regex", "mail",
	"reflection", "cookie",
}

// OptInClasses are only tainted by sources that name them (a weakly random
// number is not attacker-controlled input).
var OptInClasses = []string{"weakrand"}

// ClassBit returns the bit of a class in a taint mask, or 0 when unknown.
func ClassBit(class string) uint32 {
	for i, c := range Classes {
		if c == class {
			return 1 << uint(i)
		}
	}
	return 0
}

// Mask returns the bits of the given classes; none means every class that is
// not opt-in.
func Mask(classes []string) (uint32, error) {
	if len(classes) == 0 {
		var m uint32
		for i, c := range Classes {
			opt := false
			for _, o := range OptInClasses {
				opt = opt || o == c
			}
			if !opt {
				m |= 1 << uint(i)
			}
		}
		return m, nil
	}
	var m uint32
	for _, c := range classes {
		b := ClassBit(c)
		if b == 0 {
			return 0, fmt.Errorf("unknown class %q", c)
		}
		m |= b
	}
	return m, nil
}

// Set is the models of one language.
type Set struct {
	Language string
	// Types maps a library type to its supertypes.
	Types map[string][]string `yaml:"types"`
	// Returns maps a target to the type of its result, for type inference
	// (java.sql.Connection#createStatement: java.sql.Statement). A target
	// of a global (`global:flask.request`) gives the global's type.
	Returns map[string]string `yaml:"returns"`
	// Aliases maps names a file may use to qualified ones when imports do
	// not say it (java.lang types, PHP/Ruby built-in classes, JS globals).
	Aliases map[string]string `yaml:"aliases"`
	// Constants gives library constants a value the analysis can test
	// (CURLOPT_URL, ssl.CERT_NONE, Cipher.ENCRYPT_MODE): a load of the
	// qualified global yields the string.
	Constants   map[string]string `yaml:"constants"`
	Sources     []Source          `yaml:"sources"`
	Sanitizers  []Sanitizer       `yaml:"sanitizers"`
	Propagators []Propagator      `yaml:"propagators"`
	Containers  []Container       `yaml:"containers"`
	Setters     []Setter          `yaml:"setters"`
	Evaluators  []Evaluator       `yaml:"evaluators"`
	EntryPoints []EntryPoint      `yaml:"entrypoints"`
	// NoReturn lists calls that never return normally (abort, exit, halt):
	// the path ends there, so a check that aborts protects what follows.
	NoReturn []string `yaml:"noreturn"`
}

// Source makes values attacker-controlled (or otherwise interesting).
type Source struct {
	Kind    string   `yaml:"kind"`    // remote, weakrand, env, file, database: shown in traces
	Targets []string `yaml:"targets"` // calls whose result (see Taints) is tainted
	Globals []string `yaml:"globals"` // qualified globals whose value is tainted (flask.request, $_GET, process.argv)
	// ParamAnnotations, ParamTypes, ParamNames: parameters carrying one of
	// these annotations, declared with one of these types (subtypes included),
	// or (dynamic languages) with one of these names, in any function, are
	// tainted. Prefer the narrowest: a servlet request parameter is not a
	// source, its getters are.
	ParamAnnotations []string `yaml:"param_annotations"`
	ParamTypes       []string `yaml:"param_types"`
	ParamNames       []string `yaml:"param_names"`
	Taints           []string `yaml:"taints"`  // ret (default), recv, argN: what the call taints
	Classes          []string `yaml:"classes"` // default: every class not opt-in
}

// Sanitizer removes taint classes from a call's result.
type Sanitizer struct {
	Targets []string `yaml:"targets"`
	Classes []string `yaml:"classes"` // default: all
	// Args: the sanitized value is the result computed from these args
	// (default: the call's result is clean of the classes whatever the inputs).
	// Arg (with When) sanitizes the argument in place instead, for checks
	// such as `if (!allowed.contains(x)) return` — see Guards.
	Guard bool `yaml:"guard"` // the call is a boolean check: on its true branch Arg is clean of the classes
	Arg   int  `yaml:"arg"`   // the checked argument for guards (-1: receiver)
}

// Propagator summarises how taint moves through a library call. Calls with
// no model propagate from receiver and arguments to the result; a
// propagator is needed to say more (into the receiver, into an argument) or
// less (clean results).
type Propagator struct {
	Targets []string `yaml:"targets"`
	From    []string `yaml:"from"`  // recv, argN, args (all arguments), argN.. (N and later); default recv and args
	To      []string `yaml:"to"`    // ret, recv, argN; default ret
	Clean   bool     `yaml:"clean"` // the result carries no taint (lengths, booleans, hashes, numeric conversions)
}

// Container binds library calls to the precise container operations the
// heap model implements.
type Container struct {
	Targets []string `yaml:"targets"`
	// Op is one of:
	//   append        recv gets the last argument appended (with two arguments and a
	//                 constant integer first: inserted at that index)
	//   insert        recv[arg0] inserted with arg1 (later elements shift)
	//   get_index     ret = recv[arg0]
	//   set_index     recv[arg0] = arg1
	//   remove_index  ret = recv[arg0], later elements shift down
	//   put           recv[key arg0] = arg1
	//   get_key       ret = recv[key arg0], or arg1 when given and the key is absent
	//   remove_key    ret = recv[key arg0], the key is removed
	//   any_element   ret = some element of recv (next, pop, first, values iteration)
	//   alias         ret is recv itself (iterator(), values(), stream(), toArray())
	//   add_all       recv gets every element of arg0
	//   clear         recv becomes empty
	//   new           ret is a new empty container (constructor), or a copy of arg0
	Op   string `yaml:"op"`
	Kind string `yaml:"kind"` // list or map (for new)
}

// Setter stores an argument into a named property of the receiver, so that
// rules can test it at a sink (Cookie#setSecure stores arg0 into "secure").
type Setter struct {
	Targets []string `yaml:"targets"`
	Field   string   `yaml:"field"`
	Arg     int      `yaml:"arg"`
	// Value: store this constant instead of the argument ("true" for
	// cookie.httpOnly = true forms of an API without argument).
	Value string `yaml:"value"`
}

// Evaluator folds a call on constant operands into a constant, with one of
// the engine's built-in string and number functions:
//
//	concat, char_at, substring (start[, end]), to_upper, to_lower, trim,
//	length, equals, equals_ignore_case, index_of, replace, value_of (string
//	of its argument), parse_int, identity (ret = recv or arg0), property
//	(a lookup of arg0 in the repository's own .properties/.env/.ini/.yaml
//	configuration, default arg1), starts_with, ends_with, contains, split_get.
//
// Recv, when present, is the first operand; arguments follow.
type Evaluator struct {
	Targets []string `yaml:"targets"`
	Fn      string   `yaml:"fn"`
}

// EntryPoint makes functions reachable request handlers: their parameters
// selected by Params become sources of kind remote.
type EntryPoint struct {
	Name string `yaml:"name"` // framework, shown in findings ("Spring MVC", "Express")
	// Annotations on the function (decorators, attributes).
	Annotations []string `yaml:"annotations"`
	// Overrides: methods that override or implement one of these targets
	// (javax.servlet.http.HttpServlet#doGet).
	Overrides []string `yaml:"overrides"`
	// Registrations: calls that register a callback as a handler
	// (express.Router#get); Callback is the argument index (-1: last).
	Registrations []string `yaml:"registrations"`
	Callback      int      `yaml:"callback"`
	// Params selects the tainted parameters: "all", "none", indexes ("0",
	// "1"), or annotation names; default all.
	Params []string `yaml:"params"`
}

//go:embed */*.yaml
var builtin embed.FS

// Builtin returns the embedded models of a language (empty when none).
func Builtin(lang string) (*Set, error) {
	return Load(builtin, lang)
}

// Load reads and merges every YAML file of fsys under dir lang.
func Load(fsys fs.FS, lang string) (*Set, error) {
	out := &Set{Language: lang, Types: map[string][]string{}, Returns: map[string]string{}, Aliases: map[string]string{}}
	entries, err := fs.ReadDir(fsys, lang)
	if err != nil {
		return out, nil //nolint:nilerr // a language without models has an empty set
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".yaml") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		data, err := fs.ReadFile(fsys, path.Join(lang, n))
		if err != nil {
			return nil, err
		}
		var s Set
		dec := yaml.NewDecoder(strings.NewReader(string(data)))
		dec.KnownFields(true)
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("model %s/%s: %w", lang, n, err)
		}
		for k, v := range s.Types {
			out.Types[k] = append(out.Types[k], v...)
		}
		for k, v := range s.Returns {
			out.Returns[k] = v
		}
		for k, v := range s.Aliases {
			out.Aliases[k] = v
		}
		for k, v := range s.Constants {
			if out.Constants == nil {
				out.Constants = map[string]string{}
			}
			out.Constants[k] = v
		}
		out.Sources = append(out.Sources, s.Sources...)
		out.Sanitizers = append(out.Sanitizers, s.Sanitizers...)
		out.Propagators = append(out.Propagators, s.Propagators...)
		out.Containers = append(out.Containers, s.Containers...)
		out.Setters = append(out.Setters, s.Setters...)
		out.Evaluators = append(out.Evaluators, s.Evaluators...)
		out.EntryPoints = append(out.EntryPoints, s.EntryPoints...)
		out.NoReturn = append(out.NoReturn, s.NoReturn...)
	}
	return out, out.check()
}

func (s *Set) check() error {
	for _, src := range s.Sources {
		if _, err := Mask(src.Classes); err != nil {
			return fmt.Errorf("model %s source %v: %w", s.Language, src.Targets, err)
		}
	}
	for _, san := range s.Sanitizers {
		if _, err := Mask(san.Classes); err != nil {
			return fmt.Errorf("model %s sanitizer %v: %w", s.Language, san.Targets, err)
		}
	}
	ops := map[string]bool{"append": true, "insert": true, "get_index": true, "set_index": true, "remove_index": true, "put": true,
		"get_key": true, "remove_key": true, "any_element": true, "alias": true, "add_all": true, "clear": true, "new": true}
	for _, c := range s.Containers {
		if !ops[c.Op] {
			return fmt.Errorf("model %s container %v: unknown op %q", s.Language, c.Targets, c.Op)
		}
	}
	fns := map[string]bool{"concat": true, "char_at": true, "substring": true, "to_upper": true, "to_lower": true, "trim": true,
		"length": true, "equals": true, "equals_ignore_case": true, "index_of": true, "replace": true, "value_of": true,
		"parse_int": true, "identity": true, "property": true, "starts_with": true, "ends_with": true, "contains": true, "split_get": true}
	for _, e := range s.Evaluators {
		if !fns[e.Fn] {
			return fmt.Errorf("model %s evaluator %v: unknown fn %q", s.Language, e.Targets, e.Fn)
		}
	}
	return nil
}
