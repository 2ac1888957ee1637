<?php
// Request data in HTML output, file paths, outgoing requests, redirects and deserialization.

$name = $_GET['name'];
echo "<h1>Hello " . $name . "</h1>"; // vuln: php.xss.echo
print("<p>" . $_COOKIE['theme'] . "</p>"); // vuln: php.xss.echo
$q = $_SERVER['QUERY_STRING'];
printf("<a href='?%s'>again</a>", $q); // vuln: php.xss.echo

function show_profile(Request $request)
{
    $bio = $request->input('bio');
    return response("<div>" . $bio . "</div>"); // vuln: php.xss.echo
}

$page = $_GET['page'];
include "pages/" . $page . ".php"; // vuln: php.path.file-access
$doc = $_GET['doc'];
readfile("/var/www/docs/" . $doc); // vuln: php.path.file-access
$fh = fopen("/srv/uploads/" . $_POST['name'], "r"); // vuln: php.path.file-access

$url = $_GET['url'];
$ch = curl_init();
curl_setopt($ch, CURLOPT_URL, $url); // vuln: php.ssrf.request
curl_exec($ch);
$body = file_get_contents($_POST['feed']); // vuln: php.ssrf.request
$preview = curl_init($_GET['link']); // vuln: php.ssrf.request

$next = $_GET['next'];
header("Location: " . $next); // vuln: php.redirect.open
function back(Request $request)
{
    return redirect($request->input('return_to')); // vuln: php.redirect.open
}

$raw = file_get_contents('php://input');
$obj = unserialize($raw); // vuln: php.deser.unserialize
$prefs = unserialize(base64_decode($_COOKIE['prefs'])); // vuln: php.deser.unserialize
