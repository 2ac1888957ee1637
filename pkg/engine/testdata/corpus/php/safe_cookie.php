<?php
// safe: php.cookie.insecure
// Cookies sent only over HTTPS.
$sid = bin2hex(random_bytes(16));
setcookie('sid', $sid, ['expires' => 0, 'path' => '/', 'secure' => true, 'httponly' => true, 'samesite' => 'Lax']);
setcookie('prefs', 'compact', time() + 3600, '/', '', true, true);
