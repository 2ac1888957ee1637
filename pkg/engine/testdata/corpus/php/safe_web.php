<?php
// safe: php.xss.echo php.path.file-access php.ssrf.request php.redirect.open php.deser.unserialize
// The same operations with escaping, fixed paths and hosts, and JSON.

$name = $_GET['name'];
echo "<h1>Hello " . htmlspecialchars($name, ENT_QUOTES, 'UTF-8') . "</h1>";
print("<p>" . htmlspecialchars($_COOKIE['theme']) . "</p>");
$q = $_SERVER['QUERY_STRING'];
printf("<a href='?%s'>again</a>", htmlspecialchars($q));
echo "<p>Welcome</p>";
$count = count($_GET);
echo "<p>" . $count . " parameters</p>";

function show_profile(Request $request)
{
    $bio = $request->input('bio');
    return response("<div>" . e($bio) . "</div>");
}

$pages = ['home' => 'home.php', 'about' => 'about.php'];
include "pages/home.php";
require_once __DIR__ . "/config.php";
$doc = basename($_GET['doc']);
readfile("/var/www/docs/" . $doc);
$fh = fopen("/srv/uploads/" . basename($_POST['name']), "r");

$ch = curl_init();
curl_setopt($ch, CURLOPT_URL, "https://api.example.com/search?" . http_build_query(['q' => $_GET['q']]));
curl_setopt($ch, CURLOPT_POSTFIELDS, $_POST['payload']);
curl_exec($ch);
$body = file_get_contents("https://feeds.example.com/latest.xml");

header("Location: /search?q=" . urlencode($_GET['next']));
header("X-Request-Id: " . bin2hex(random_bytes(8)));
function back(Request $request)
{
    return redirect()->route('home');
}

$raw = file_get_contents('php://input');
$obj = json_decode($raw, true);
$prefs = unserialize(base64_decode($_COOKIE['prefs']), ['allowed_classes' => false]);
