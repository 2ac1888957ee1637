<?php
// Outgoing requests to addresses taken from the request.
use GuzzleHttp\Client;

$client = new Client(['timeout' => 5]);
$response = $client->get($_GET['webhook']); // vuln: php.ssrf.request
$client->request('POST', $_POST['callback'], ['json' => ['ok' => true]]); // vuln: php.ssrf.request
$avatar = file_get_contents($_POST['avatar_url']); // vuln: php.ssrf.request
$handle = curl_init($_GET['feed']); // vuln: php.ssrf.request
