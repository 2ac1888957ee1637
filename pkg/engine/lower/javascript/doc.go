// Package javascript lowers JavaScript and TypeScript syntax trees (the
// javascript, typescript and tsx grammars) into the engine's IR (package
// ir), following the conventions of the ir package comment. File.Lang is
// "javascript" or "typescript" by extension; both use the javascript
// models and rules.
//
// Modules and names:
//   - File.Package is the module path: the repository path without
//     extension, and without a trailing "/index" (src/db/index.js is
//     "src/db", what importing "./db" loads).
//   - Relative specifiers resolve to module paths ("./db" from src/app.js is
//     "src/db"); package specifiers stay as written ("child_process",
//     "fs/promises"; "node:" is dropped).
//   - A default import, a namespace import and require('m') bind the module
//     value M (CommonJS interop); a named import or a destructured require
//     binds the member "M.name". Calling M is CallFunc Qual M Name
//     "default"; calling a member is CallFunc Qual M Name name; M.f(...) is
//     CallStatic Qual M; `new M()` is CallNew Qual M; reading M or M.x is
//     OpLoadGlobal "M" / "M.x". A member of a package is a namespace to
//     models (fs.promises.readFile(...) is CallStatic Qual "fs.promises");
//     a member of a repository module is an object (OpLoadGlobal then
//     CallMethod) unless its name is capitalised like a class.
//   - Module top-level code is File.Init ("<module>"). Module-level
//     variables are locals of Init that Init also writes with OpStoreGlobal
//     "<module>.<name>"; functions read and write them as globals.
//     Module-level functions are "<module>.<name>" (Parent nil) and are
//     called with CallFunc by name; a const initialised with a function
//     expression names the function the same way.
//   - Exports make "<module>.<name>" resolve to what they export:
//     `export function f`, `exports.f = function`, `module.exports = {f}`
//     name or store the function under "<module>.<name>"; a renamed export
//     gets a forwarding function of that name. The default export
//     (`export default`, `module.exports = v`, `export = v`) is the module
//     value: a default-exported function is "<module>.default", a
//     default-exported class is named "<module>" itself (so `new M()` and
//     M.staticMethod() resolve), an object literal's members become the
//     module's members. Re-exports (`export ... from`) are not followed.
//   - Exported functions carry the annotations "export:<name>" and, for
//     each pair of consecutive directories of the file's path,
//     "export:<name>@<dir>/<dir>" (pages/api/users.js exports its default
//     handler with "export:default@pages/api"), so that entry points can
//     select framework handlers (Next.js API routes, route handlers named
//     GET/POST) by export name and location.
//   - Platform globals that the file does not declare are OpLoadGlobal by
//     name; window.x, globalThis.x and self.x are the global x. A global
//     with one property is one global: process.env, document.cookie,
//     location.hash. g.f(...) on a global is CallStatic Qual g (Math.random,
//     JSON.parse, document.write); a call of a global function is CallFunc
//     with Qual "" (eval, setTimeout, fetch, parseInt).
//
// Functions:
//   - Functions, arrow functions, methods and function expressions are
//     Funcs; nested ones have Parent set, use the enclosing function's
//     locals as Captured vars (matched by name; arrow functions capture
//     `this` the same way), and the enclosing function creates them with
//     OpFunc where they appear (nested function declarations at the start
//     of their block, as JavaScript hoists them). A call of a local or
//     captured function value is CallDynamic. Anonymous functions are
//     "<enclosing>$lambda<N>", named nested ones "<enclosing>$<name>".
//     Variable names are unique within a function: a let/const that
//     redeclares a name in another block is "<name>#<n>", so that a closure
//     captures the variable its source names.
//   - Classes are "<module>.<Name>" (nested ones "<enclosing>$<Name>");
//     the constructor is "<init>" with the instance field initializers at
//     its start (a synthetic "<init>" holds them when there is none);
//     methods have This typed with the class; static fields are globals
//     "<class>.<field>" stored where the class is defined; getters and
//     setters are the methods "get:<name>" and "set:<name>".
//   - Constructor functions whose prototype the module assigns
//     (Repo.prototype.find = function…, Repo.prototype = {…}) are classes
//     too: the function is the constructor and the prototype's functions
//     its methods.
//   - async/await: `await x` is x. yield gives an opaque value.
//     `arguments` is an array of the parameters.
//   - Parameters: defaults set Param.Default (a non-literal default is
//     evaluated on the branch where the argument is undefined), rest
//     parameters Param.Rest; destructured parameters are "$p<N>" and
//     destructured at the start. TypeScript parameter properties
//     (`constructor(private repo: Repo)`) store this.repo.
//
// Statements and expressions:
//   - for-of reads elements with OpLoadIndex with no index; for-in binds an
//     opaque value computed from the object (its keys). Loops without a
//     known condition branch on the absent value.
//   - switch is a chain of === branches with classic fallthrough.
//   - try/catch/finally as the ir package describes; a try without catch
//     runs the finally body on a rethrowing handler path too.
//   - && || ?? branch when the right side has effects; ternaries always
//     branch. Optional chaining is plain access (the short-circuit gives
//     undefined, which carries nothing).
//   - Template literals are "+" chains typed String; tagged templates call
//     the tag with an array of the literal parts and then the values.
//   - Object literals are OpMakeMap "Object" with constant string keys
//     (computed keys use their value); a spread property is a call of
//     Object.assign(obj, spread). Array literals are OpMakeList "Array";
//     spread elements are stored at unknown indexes after the others. A
//     spread argument passes some element of the spread value.
//   - Destructuring reads fields (constant keys), constant indexes (array
//     patterns), slice(i) for an array rest element and an opaque copy for
//     an object rest element.
//   - obj[k] with a constant string k is a field, with a constant number a
//     constant index. delete stores undefined; typeof is OpUnary; void gives
//     undefined.
//   - A property assignment `o.p = v` is OpStoreField followed, when v is
//     not a constant and o is not this, by a call of the property's setter
//     o.set:p(v): DOM and framework properties are setters (innerHTML,
//     location.href), so rules target them as `*#set:innerHTML`; a setter
//     declared by a repository class is reached the same way. An
//     assignment to a property of a global is OpStoreGlobal "g.p" and
//     CallStatic g#set:p(v); to an undeclared global name, OpStoreGlobal and
//     CallFunc set:<name>(v) (`location = x`).
//
// TypeScript and JSX:
//   - Decorators are annotations of their class, method or parameter,
//     named like references ("@nestjs/common.Get" for an imported Get),
//     with their constant arguments by position ("0") and object keys.
//   - Type annotations set Var.Type (and Func.Result) when they name a
//     class or interface (of the file, imported: "express.Request", or a
//     global type as written); `string` is "String", arrays "Array",
//     `T | null | undefined` is T; other types are ignored. `x as T` is a
//     cast to T when T names a class. Interfaces are interface classes
//     with their property fields; enums are classes whose members are
//     static fields stored by the module code; namespaces run with the
//     enclosing code and name their functions "<namespace>.<name>". Type
//     aliases and ambient declarations are skipped.
//   - JSX elements are opaque values computed from nothing, since React
//     escapes what it renders; attribute and child expressions are
//     evaluated for their effects and closures.
//     dangerouslySetInnerHTML={v} calls el.set:innerHTML(v.__html) on the
//     element, the same setter a DOM innerHTML assignment calls. A
//     component element <Comp a={x}/> calls Comp with the props object.
package javascript
