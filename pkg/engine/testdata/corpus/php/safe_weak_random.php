<?php
// safe: php.weakrand.security-use php.crypto.weak-random
// Secrets come from the operating system's generator.
$remember = bin2hex(random_bytes(32));
setcookie('remember_me', $remember, ['expires' => time() + 86400, 'secure' => true, 'httponly' => true]);
session_id(bin2hex(random_bytes(16)));
$iv = random_bytes(16);
$cipher = openssl_encrypt($payload, 'aes-256-cbc', $key, 0, $iv);
$dice = mt_rand(1, 6);
echo "<p>You rolled " . $dice . "</p>";
