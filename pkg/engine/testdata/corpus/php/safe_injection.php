<?php
// safe: php.sqli.string-query php.cmdi.shell php.code.eval
// The same operations with bound parameters, quoting and allow lists.

use Illuminate\Support\Facades\DB;
use Illuminate\Http\Request;

function find_user($db, $name)
{
    $stmt = mysqli_prepare($db, "SELECT * FROM users WHERE name = ?");
    mysqli_stmt_bind_param($stmt, "s", $name);
    return mysqli_stmt_execute($stmt);
}

$conn = mysqli_connect("localhost", "app", getenv("DB_PASS"), "app");
find_user($conn, $_GET['name']);

$id = (int) $_POST['id'];
$pdo = new PDO("sqlite:app.db");
$rows = $pdo->query("SELECT * FROM items WHERE id = $id");
$stmt = $pdo->prepare("SELECT * FROM items WHERE owner = ?");
$stmt->execute([$_POST['owner']]);
$name = mysqli_real_escape_string($conn, $_GET['name']);
mysqli_query($conn, "SELECT * FROM users WHERE name = '" . $name . "'");

class UserController
{
    public function search(Request $request)
    {
        $term = $request->input('q');
        $users = DB::select("SELECT * FROM users WHERE name LIKE ?", ['%' . $term . '%']);
        $limit = intval($request->query('limit'));
        return User::query()->where('name', $term)->orderByRaw('created_at DESC')->limit($limit)->get();
    }

    public function ping(Request $request)
    {
        $host = $request->input('host');
        $out = shell_exec("ping -c 1 " . escapeshellarg($host));
        return $this->run($host);
    }

    private function run($target)
    {
        $cmd = "nslookup " . escapeshellarg($target);
        system($cmd);
        return `uptime`;
    }
}

$file = basename($_GET['file']);
passthru("gzip -d " . escapeshellarg($file));

$allowed = ['sum' => 'array_sum', 'max' => 'max'];
$expr = $_REQUEST['expr'];
eval('$result = 1 + 2;');
call_user_func('array_sum', [intval($expr)]);
$tpl = preg_replace('/\{(\w+)\}/', $_POST['code'], $template);
$tpl = preg_replace_callback('/\{(\w+)\}/', fn($m) => htmlspecialchars($m[1]), $template);
