package php

import (
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// lowerSource parses and lowers src as the file app/page.php.
func lowerSource(t testing.TB, src string) *ir.File {
	t.Helper()
	return lowertest.Lower(t, syntax.PHP, Lower, "app/page.php", []byte(src))
}

// goldenCases are small programs, one construct each; their IR dumps are
// kept in testdata/golden/<name>.ir (go test -run TestLowerGolden -update
// rewrites them after a deliberate change).
var goldenCases = []struct{ name, src string }{
	{"namespace_use", `<?php
namespace App\Http;
use Foo\Bar, Baz\Qux as Q;
use function Foo\Util\helper;
use const Foo\LIMIT;
use Lib\{Alpha, Beta as B};
new Bar(); new Q(); new B(); new Alpha(); new Local(); new \Root\Abs();
helper(1); strlen("x"); \Foo\other(); Sub\fn2();
echo LIMIT, PHP_EOL, \App\X;
`},
	{"superglobals", `<?php
$id = $_GET['id'];
$all = $_POST;
$c = $_COOKIE['c'] ?? 'none';
$h = $_SERVER['HTTP_HOST'];
$_SESSION['user'] = $_REQUEST['u'];
$g = $GLOBALS['config'];
$GLOBALS['out'] = $g;
`},
	{"script_globals", `<?php
$limit = 10;
echo $undefinedHere;
function show() {
    global $limit, $db;
    $limit = $limit + 1;
    static $calls = 0;
    return $limit;
}
`},
	{"interpolation", `<?php
$a = "plain";
$b = "hi $name, {$user['n']} and ${x} $obj->p $arr[0] $arr[key]\n";
$c = 'single $x \' \\';
$d = <<<EOT
    Dear $name,
      total: {$o->total()}
    EOT;
$e = <<<'RAW'
no $interp here
RAW;
$f = ` + "`ls -l $dir`" + `;
`},
	{"operators", `<?php
$s = $a . $b;
$s .= "x";
$n = -$a + $b * 2 ** 3 % 4;
$t = $a === $b && $c != $d || !$e;
$l = $x and $y;
$u = $v ?? $w;
$cmp = $a <=> $b;
$k = $obj instanceof Foo;
$i++; --$j;
$m ??= "default";
$z = $a ?: $b;
$q = $c ? $d : $e;
$r = check() && run();
$p = $x ?? compute();
`},
	{"casts", `<?php
$a = (int) $x; $b = (integer) $x; $c = (float) $x; $d = (double) $x;
$e = (string) $x; $f = (bool) $x; $g = (array) $x; $h = (object) $x;
`},
	{"calls", `<?php
foo($a, ...$rest);
named(x: 1, y: $b);
$obj->method($a);
$obj?->maybe();
$obj->$dyn();
Cls::stat($a);
$cls::stat2();
$f($a);
$fn = strlen(...);
$m = $obj->method(...);
$o = new Foo($a);
$p = new $cls();
isset($a, $b['k']);
empty($c);
`},
	{"language_calls", `<?php
echo $a, "b";
print $c;
include 'header.php';
include_once $page;
require __DIR__ . '/lib.php';
require_once 'x.php';
define('MODE', 'prod');
echo MODE;
unset($a, $arr['k'], $obj->p);
exit("bye");
`},
	{"die_or", `<?php
$r = mysqli_query($c, $q) or die(mysqli_error($c));
echo $r;
`},
	{"short_echo", `<p><?= $name ?></p>
<?php if ($a): ?>
  <b><?= $b ?></b>
<?php endif; ?>
`},
	{"arrays", `<?php
$l = [1, $a, 'x'];
$m = ['k' => $v, 'j' => 2, 7];
$n = array(5 => 'a', 'b');
$o = [...$l, 0];
$l[] = $x;
$m['k'] = $y;
$fresh['a']['b'] = $z;
$this_is_new[] = 1;
`},
	{"destructuring", `<?php
list($a, $b) = $pair;
[$c, , $d] = $triple;
['id' => $id, 'name' => $name] = $row;
[[$x, $y], $z] = $nested;
`},
	{"if_else", `<?php
if ($a) { f(1); } elseif ($b) { f(2); } else if ($c) { f(3); } else { f(4); }
if (false) { dead(); }
if ($x): g(1); elseif ($y): g(2); else: g(3); endif;
`},
	{"loops", `<?php
while ($i < 3) { $i++; if ($i == 2) continue; }
do { $j--; } while ($j > 0);
for ($i = 0, $k = 1; $i < 10; $i++, $k--) { if ($i > 5) break; }
for (;;) { break; }
foreach ($rows as $row) { echo $row; }
foreach ($_GET as $key => $value) { echo $key; }
foreach ($list as &$item) { $item = trim($item); }
foreach ($pairs as [$p, $q]) { echo $p; }
`},
	{"break_levels", `<?php
foreach ($a as $x) {
    foreach ($b as $y) {
        if ($y) { continue 2; }
        if ($x) { break 2; }
    }
}
`},
	{"switch", `<?php
switch ($mode) {
case 'a':
case 'b':
    $r = 1;
    break;
case 'c':
    $r = 2;
default:
    $r = 3;
}
while (true) { switch ($x) { case 1: continue 2; default: break 2; } }
switch (2) { case 1: bad(); break; case 2: good(); break; }
`},
	{"match", `<?php
$r = match ($v) { 1, 2 => 'low', 3 => 'mid', default => 'high' };
$s = match (true) { $a > 1 => f(), };
`},
	{"try", `<?php
try {
    risky($a);
} catch (InvalidArgumentException | TypeError $e) {
    echo $e->getMessage();
} catch (Exception) {
    log_it();
} finally {
    cleanup();
}
throw new RuntimeException("x");
`},
	{"functions", `<?php
namespace App;
function add(int $a, ?string $b = null, Request $r = null, &$out = [], ...$rest): array {
    return [$a, $b];
}
function noReturn() { inner(); function nested() { return 1; } }
`},
	{"class", `<?php
namespace App\Models;
use Illuminate\Http\Request;
#[Entity(table: 'users')]
final class User extends Model implements \JsonSerializable, Arrayable {
    use HasFactory, Notifiable;
    const TABLE = 'users';
    public static $count = 0;
    protected string $name = 'anon';
    private ?Request $req;
    public function __construct(private readonly Db $db, $x = 1) {
        parent::__construct($x);
        $this->req = null;
    }
    public static function make(): static { return new static(self::TABLE); }
    public function show(Request $request) {
        $id = $request->input('id');
        self::helper($id);
        static::helper($id);
        parent::save();
        return $this->db->find($id) . self::$count . static::TABLE . parent::class;
    }
    abstract protected function todo();
    private static function helper($v) { return __CLASS__ . __METHOD__ . __FUNCTION__; }
}
`},
	{"class_defaults_ctor", `<?php
class Plain { public $a = 'x'; private $b; }
class Child extends Base { public $c = 1; }
`},
	{"interface_trait_enum", `<?php
interface Repo extends Countable { public function find($id); }
trait Loggable { public function log($m) { echo $m; } }
enum Suit: string implements HasLabel {
    case Hearts = 'H';
    case Spades = 'S';
    public function label(): string { return ucfirst($this->value); }
}
`},
	{"closures", `<?php
class Ctl {
    private $prefix = 'p';
    public function run($items, $x) {
        $mapped = array_map(function ($i) use ($x, &$count) { $count++; return $i . $x . $this->prefix; }, $items);
        $arrow = fn($i) => $i . $x . $this->prefix;
        $nested = fn($a) => fn($b) => $a . $b . $x;
        $static = static function () { return 1; };
        return $arrow;
    }
}
$top = function () use ($cfg) { return $cfg; };
`},
	{"anonymous_class", `<?php
$h = new class($dep) extends Handler implements Runner {
    public function handle($r) { return $r; }
};
`},
	{"attributes_route", `<?php
namespace App\Controller;
use Symfony\Component\Routing\Annotation\Route;
use Symfony\Component\HttpFoundation\Request;
class BlogController extends AbstractController {
    #[Route('/blog/{slug}', name: 'blog_show', methods: ['GET'])]
    public function show(string $slug, Request $request, #[MapQueryParameter] int $page = 1) {
        return $request->query->get('q');
    }
}
`},
	{"property_stores", `<?php
$this->items[] = $x;
$obj->data['k'] = $v;
Config::$values['a'] = $w;
$obj->a->b = $c;
`},
	{"constants", `<?php
const VERSION = '1.0';
echo VERSION, __LINE__, __FILE__, __DIR__, __NAMESPACE__, Foo::BAR, Foo::class, TRUE, null;
`},
	{"misc_exprs", `<?php
$a = clone $b;
$c = @file($d);
$e = &$f;
$$name = 1;
$g = print "x";
function gen() { yield 1; yield $k => $v; }
$h = (function () { return 1; })();
$i = $obj->prop->method()['k'];
`},
}

func TestLowerGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lowertest.Golden(t, tc.name, lowerSource(t, tc.src))
		})
	}
}

func TestLowerRejectsOtherTrees(t *testing.T) {
	t.Parallel()
	_, err := Lower("x.php", nil, nil)
	require.ErrorIs(t, err, ErrNotPHP)
	_, err = Lower("x.php", nil, &syntax.Node{Type: "module"})
	require.ErrorIs(t, err, ErrNotPHP)
}
