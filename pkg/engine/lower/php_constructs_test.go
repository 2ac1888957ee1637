package lower_test

import "testing"

// Each case lowers a small file and checks lines (or runs of lines) of its
// IR dump.
func TestPHPConstructs(t *testing.T) {
	t.Parallel()
	cases := []dumpCase{
		{"class constants fold their literals", `<?php
namespace App;
class C {
  const A = 0x1F;
  const B = 0b11 + 017 + 1_000;
  const D = 1.5e3;
  const E = TRUE;
  const F = "x" . "y";
}
`, []string{"global App\\C::A = 31", "= 3 + 15\n", "+ 1000\n", "global App\\C::D = 1500", "global App\\C::E = true"}},
		{"parameter and result types", `<?php
namespace App\Http;
use App\Models\User as U;
class C {
  public ?string $name = null;
  public function f(int|string $x, ?U $u, self $s, array $arr, U|null $n, callable $cb, U|false $o): static { return $this; }
}
`, []string{"func App\\Http\\C.f(x, u App\\Models\\User, s App\\Http\\C, arr array, n App\\Models\\User, cb callable, o App\\Models\\User) App\\Http\\C this=this",
			"field name string", "this.name = null"}},
		{"string forms", `<?php
function f($x) {
  $d = "a\tb\x41\101\u{42}$x";
  $e = 'q\'\n';
  $h = <<<EOT
  heredoc {$x} end
  EOT;
  $n = <<<'EOT'
  nowdoc $x
  EOT;
}
`, []string{`= "a\tbAAB" . x`, `e = "q'\\n"`, `= "heredoc " . x`, `. " end"`, `n = "nowdoc $x"`}},
		{"class names, static constants and parent calls", `<?php
namespace App;
use App\Models\User as U;
class C extends B {
  const A = 1;
  function f() {
    $k = U::class;
    $m = static::A;
    $s = self::A;
    $p = parent::f(1);
  }
}
`, []string{`k = "App\\Models\\User"`, "= global App\\C::A\n    m = ", "= global App\\C::A\n    s = ", "= call.super App\\B#f(1)"}},
		{"arrays are copied by assignment and shared by reference", `<?php
function f($a) {
  $b = $a;
  $c = &$a;
}
`, []string{"b = copy a", "c = a\n"}},
		{"negative and boolean literals", `<?php
$a = -5;
$c = false;
$d = NULL;
`, []string{"a = -5", "c = false", "d = null"}},
	}
	phpFE.run(t, "a.php", cases)
}

// Declarations (interfaces, traits, enums, promoted constructor
// parameters, anonymous classes) and the statements and expressions of one
// method, each checked in the lowered IR.
func TestPHPDeclarationsAndStatements(t *testing.T) {
	t.Parallel()
	src := `<?php
namespace App;
use App\Lib\{Helper, Other as O};
use function App\Lib\util;
interface Runs { function run($x); }
trait Logs { function log($m) { error_log($m); } }
abstract class Base implements Runs { use Logs; }
enum Suit: string { case Hearts = 'H'; case Spades = 'S'; }
final class Job extends Base {
  public function __construct(private string $cmd, protected readonly int $n = 3) {}
  public function run($x) {
    $r = match($x) { 1, 2 => 'low', default => 'high' };
    $y = $x ?? 'd';
    $z = $x ?: 'e';
    [$a, [$b, $c]] = $x;
    list('k' => $k) = $x;
    $arr[] = $a;
    $s = "v: {$this->cmd} $a[0]";
    $f = fn($q) => $q . $a;
    $g = static function ($q) use (&$z) { return $q; };
    foreach ($x as $key => $val) { echo $key, $val; }
    do { $i--; } while ($i > 0);
    try { risky(); } catch (\InvalidArgumentException | \TypeError $e) { log($e); } finally { done(); }
    $o = new class { public $p = 1; };
    $u = util($x);
    $h = Helper::make($x);
    $cl = $x instanceof Runs;
    global $config;
    return $y . $z . $b . $c . $k . $s;
  }
}
`
	phpFE.requireDump(t, "src/Job.php", src,
		"import Helper = App\\Lib\\Helper\n", "import O = App\\Lib\\Other\n", "import util = App\\Lib\\util\n",
		"interface App\\Runs\n", "class App\\Base : App\\Runs, App\\Logs\n",
		"class App\\Suit\n  field static Hearts App\\Suit\n  field static Spades App\\Suit",
		"func abstract App\\Runs.run(x) this=this", "func App\\Logs.log(m) this=this",
		// promoted constructor parameters are fields stored on construction
		"class App\\Job : App\\Base\n  field cmd string\n  field n int",
		"func App\\Job.<init>(cmd string, n int) this=this\n  b0:\n    this.cmd = cmd\n    this.n = n\n    end",
		// match arms are strict comparisons
		"= x === 1\n", "= x === 2\n", `= "low"`, `= "high"`,
		// null coalescing and the short ternary
		`= x ?? "d"`, "if x b",
		// nested and keyed destructuring
		"= x[0]\n    a = ", "[0]\n    b = ", "[1]\n    c = ", `= x["k"]`+"\n    k = ",
		"arr[_] = a",
		// interpolation
		`= "v: " . $t`, "= a[0]\n",
		// closures
		"func App\\Job.run$lambda1(q) in App\\Job.run\n  b0:\n    $t1 = q . a\n    return $t1",
		"func static App\\Job.run$lambda2(q) in App\\Job.run",
		// foreach binds the value and the key
		"= x[_]\n    val = ", "key = ", "call.func echo(key, val)",
		// do-while decrements then tests
		"- 1\n    i = ", "= i > 0\n",
		// try/catch/finally
		"e = catch InvalidArgumentException|TypeError", "call.func log(e)", "call.func done()",
		// anonymous classes, imported functions and classes, instanceof
		"call.new App\\class@anonymous1#<init>()", "func App\\class@anonymous1.<init>() this=this\n  b0:\n    this.p = 1",
		"call.func App\\Lib#util(x)", "call.static App\\Lib\\Helper#make(x)", `x instanceof "App\\Runs"`,
		"config = global $config",
	)
}
