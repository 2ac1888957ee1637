<?php
// Session cookies set without the Secure flag.
$sid = bin2hex(random_bytes(16));
setcookie('sid', $sid); // vuln: php.cookie.insecure
setcookie('prefs', 'compact', time() + 3600, '/', '', false, true); // vuln: php.cookie.insecure
setcookie('lang', 'en', ['expires' => time() + 3600, 'path' => '/', 'httponly' => true]); // vuln: php.cookie.insecure
