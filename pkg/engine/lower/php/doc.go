// Package php lowers PHP syntax trees into the engine's IR (package ir).
//
// It follows every convention of the ir package comment; the decisions that
// are specific to PHP are:
//
//   - Names. A file's Package is its (first) namespace. Classes, interfaces,
//     traits and enums are qualified with their namespace, with backslashes
//     and no leading backslash ("App\Http\UserController"). `use` imports of
//     classes, functions and constants (aliases and groups included) resolve
//     to qualified names; an unqualified class name that is neither imported
//     nor special (self, static, parent) belongs to the current namespace, as
//     PHP resolves it. Functions: QName "App.helper" (namespace, dot, name,
//     which is how the analysis looks up Qual "App" Name "helper"); methods: QName
//     "App\Ctl.method"; constructors are "<init>", class constants and static
//     property defaults run in a static "<clinit>"; closures are "<lambda>"
//     with QName "<enclosing QName>$lambdaN". Top-level code is File.Init,
//     named "<module>" with the file's path as QName.
//   - Variables are named without the dollar sign ("x", "this"); temporaries
//     keep the IR's "$tN" names, so the two cannot collide.
//   - Superglobals ($_GET, $_POST, $_COOKIE, $_REQUEST, $_SERVER, $_FILES,
//     $_ENV, $_SESSION) are OpLoadGlobal of their name; `$GLOBALS['x']` is
//     the global "$x". Script variables are globals too: in top-level code
//     every write of a variable is followed by OpStoreGlobal "$x", and a
//     variable read before any write in that code is loaded with
//     OpLoadGlobal "$x" at the entry (it may come from an including
//     script). In a
//     function, `global $x` loads "$x" into the local x and every later write
//     of x stores it back. `static $n = v` is a local initialised with v.
//   - Calls: plain calls are CallFunc with Qual "" (built-ins and functions
//     found by scope) or the namespace of an imported or fully qualified
//     function; `$o->m()` and `$o?->m()` are CallMethod; `A::m()` is
//     CallStatic with Qual the resolved class; `self::m()` and `static::m()`
//     are CallStatic on the enclosing class; `parent::m()` is CallSuper
//     (`parent::__construct` is CallSuper "<init>"); `new A` is CallNew;
//     `$f()` and `new $cls` are CallDynamic; a method named by a variable
//     (`$o->$m()`) is a CallMethod with an empty Name. A first-class callable
//     `strlen(...)` is the string "strlen"; `$o->m(...)` the array [$o, "m"].
//   - Language constructs that rules target are calls of their keyword with
//     Qual "": echo (also `<?= ?>`), print, include, include_once, require,
//     require_once, exit and die (followed by a return: the script ends),
//     isset, empty; backticks are a call of shell_exec. `define('X', v)` also
//     stores the global "X". Inline HTML outside PHP tags is not lowered.
//   - Strings: interpolated strings and heredocs are concatenations with the
//     "." operator; nowdocs and strings without interpolation are constants.
//     Magic constants __DIR__, __FILE__, __LINE__, __CLASS__, __FUNCTION__,
//     __METHOD__ and __NAMESPACE__ are folded. Other constants are globals of
//     their unqualified name ("PHP_EOL"); class constants and static
//     properties are globals "A::K" and "A::$p"; `A::class` is the string
//     "A" (resolved).
//   - Arrays: a literal with a key is OpMakeMap (unkeyed elements get PHP's
//     next integer key), otherwise OpMakeList; spread elements are appended.
//     `$a[] = v` is OpStoreIndex with no index. Arrays are values in PHP, so
//     a store into a nested element (`$a['x']['y'] = v`,
//     `$this->items[] = v`) loads the inner array, stores into it and writes
//     it back. A variable indexed for writing before it was ever assigned
//     starts as an empty list. unset($x) assigns null, unset($a[k]) stores
//     null at k.
//   - foreach reads the value with OpLoadIndex and no index; the key is an
//     opaque value computed from the array (keys of request arrays are
//     attacker-controlled too). `as &$v` stores $v back into the array at the
//     end of each iteration. list()/[] destructuring loads each element with
//     its constant key or position.
//   - Control flow: `switch` is a chain of `==` branches with fallthrough,
//     `match` a chain of `===` branches (throwing UnhandledMatchError when no
//     arm matches). break N / continue N target the N-th enclosing loop or
//     switch (continue on a switch acts as break). &&, ||, ??, and, or become
//     branches when their right operand has effects and stay OpBinary
//     otherwise; the logical ones end in a cast to bool, their PHP result; ?: and the short ternary are branches. finally bodies run
//     after the normal and the catch exits. goto and labels are ignored;
//     yield produces an opaque value.
//   - Types: parameter, property and result types come from declarations
//     (nullable and single-class unions unwrapped; scalar types as written in
//     lowercase), `$this` has the class type, `new A` and casts type their
//     results; casts are OpCast with PHP's canonical type names (int, float,
//     string, bool, array, object).
package php
