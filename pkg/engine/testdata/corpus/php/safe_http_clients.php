<?php
// safe: php.ssrf.request php.path.file-access
// The hosts are fixed; request data only goes into encoded query strings or
// request bodies.
use GuzzleHttp\Client;

$client = new Client(['timeout' => 5]);
$response = $client->get('https://hooks.example.com/notify?' . http_build_query(['id' => $_GET['webhook']]));
$client->request('POST', 'https://api.example.com/callbacks', ['json' => ['target' => $_POST['callback']]]);
$avatar = file_get_contents('https://cdn.example.com/avatars/' . rawurlencode($_POST['avatar_url']));
$handle = curl_init('https://feeds.example.com/' . urlencode($_GET['feed']));
